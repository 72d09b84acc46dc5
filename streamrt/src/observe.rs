//! Observability: a Chrome/Perfetto trace of every task (`TILEDFLOW_TRACE=file.json`) and
//! per-thread statistics (`TILEDFLOW_STATS=1`).
//!
//! An [`Observer`] belongs to a runtime. The runtime consults one flag, [`Observer::on`], read
//! from the environment once when the runtime starts: when neither is asked for, no clock is
//! read, nothing is counted and nothing is written (the hot path pays one predictable branch).
//!
//! Threads have *slots*: 0 for control threads (all of them, they run tasks while they wait or
//! help), `1 + i` for worker `i`. Each slot has its own event buffer and counters, so that
//! threads do not contend while they record. At the end of each graph ([`Observer::graph_end`])
//! the buffered events are appended to the trace file, which is a complete JSON document after
//! every graph (the closing bracket is rewritten each time), and the statistics counted since
//! the previous graph end are printed to stderr.
//!
//! This module only records and writes; it never influences scheduling.

#![forbid(unsafe_code)]

use std::fs::File;
use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use crossbeam_utils::CachePadded;

use crate::{Error, MAX_DIMS};

/// The environment variable naming the trace file.
pub const TRACE_ENV: &str = "TILEDFLOW_TRACE";
/// The environment variable that turns statistics on (`1`).
pub const STATS_ENV: &str = "TILEDFLOW_STATS";

/// What a runtime records besides running tasks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Observe {
    /// Write a Chrome/Perfetto trace (JSON) of every task to this file.
    pub trace: Option<PathBuf>,
    /// Print tasks, steals and idle time per thread to stderr at the end of each graph.
    pub stats: bool,
}

impl Observe {
    /// From `TILEDFLOW_TRACE` (a file name; unset or empty: no trace) and `TILEDFLOW_STATS`
    /// (`1`: statistics; unset, empty or `0`: none; anything else is an error).
    pub fn from_env() -> Result<Observe, Error> {
        let trace = std::env::var_os(TRACE_ENV)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from);
        let stats = match std::env::var(STATS_ENV) {
            Err(std::env::VarError::NotPresent) => false,
            Ok(v) if v.is_empty() || v == "0" => false,
            Ok(v) if v == "1" => true,
            Ok(v) => {
                return Err(Error::BadEnv {
                    var: STATS_ENV,
                    value: v,
                    expected: "0 or 1",
                })
            }
            Err(std::env::VarError::NotUnicode(v)) => {
                return Err(Error::BadEnv {
                    var: STATS_ENV,
                    value: v.to_string_lossy().into_owned(),
                    expected: "0 or 1",
                })
            }
        };
        Ok(Observe { trace, stats })
    }
}

/// One finished task, or one graph from its beginning to its end, as the trace shows it.
struct Event {
    /// A graph's span (category `graph`, on the control thread's track) rather than a task's.
    graph: bool,
    name: Arc<str>,
    key: [i64; MAX_DIMS],
    ndims: u8,
    /// Nanoseconds since the runtime started.
    start: u64,
    end: u64,
}

/// What one thread slot recorded since the last graph end.
struct SlotLog {
    events: Mutex<Vec<Event>>,
    tasks: AtomicU64,
    steals: AtomicU64,
    idle_ns: AtomicU64,
    /// When its earliest task since the last graph end began (from `now`; `u64::MAX`: none).
    first_ns: AtomicU64,
}

impl Default for SlotLog {
    fn default() -> SlotLog {
        SlotLog {
            events: Mutex::default(),
            tasks: AtomicU64::new(0),
            steals: AtomicU64::new(0),
            idle_ns: AtomicU64::new(0),
            first_ns: AtomicU64::new(u64::MAX),
        }
    }
}

/// The trace file: complete JSON up to `open_end`, where the next events go, then the closing.
struct TraceFile {
    path: PathBuf,
    file: BufWriter<File>,
    open_end: u64,
    /// Whether an event was written (the next one needs a comma).
    any: bool,
    /// Set after the first write error, which is reported once.
    failed: bool,
}

const TRACE_CLOSE: &[u8] = b"\n]}\n";

/// The recorder of one runtime.
pub(crate) struct Observer {
    /// Trace or statistics wanted: the only thing the hot path reads when both are off.
    pub(crate) on: bool,
    stats: bool,
    start: Instant,
    slots: Box<[CachePadded<SlotLog>]>,
    trace: Option<Mutex<TraceFile>>,
    graphs: AtomicU64,
    /// When the latest graph began (from `now`): idle time before it is not counted.
    graph_began: AtomicU64,
}

impl Observer {
    /// An observer for a runtime of `n_threads` threads (slots `0..n_threads`).
    pub(crate) fn new(what: &Observe, n_threads: usize) -> Result<Observer, Error> {
        let trace = match &what.trace {
            Some(path) => Some(Mutex::new(TraceFile::create(path, n_threads)?)),
            None => None,
        };
        let tracing = trace.is_some();
        Ok(Observer {
            on: tracing || what.stats,
            stats: what.stats,
            start: Instant::now(),
            slots: (0..n_threads).map(|_| CachePadded::default()).collect(),
            trace,
            graphs: AtomicU64::new(0),
            graph_began: AtomicU64::new(0),
        })
    }

    /// Nanoseconds since the runtime started.
    pub(crate) fn now(&self) -> u64 {
        u64::try_from(self.start.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }

    /// A task of stream `name` with key `key` ran on `slot` from `start` to `end` (from `now`).
    pub(crate) fn task(&self, slot: usize, name: &Arc<str>, key: &[i64], start: u64, end: u64) {
        let log = &self.slots[slot];
        log.tasks.fetch_add(1, Ordering::Relaxed);
        log.first_ns.fetch_min(start, Ordering::Relaxed);
        if self.trace.is_some() {
            let mut k = [0; MAX_DIMS];
            k[..key.len()].copy_from_slice(key);
            let event = Event {
                graph: false,
                name: Arc::clone(name),
                key: k,
                ndims: key.len() as u8,
                start,
                end,
            };
            log.events
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(event);
        }
    }

    /// The thread of `slot` took a task from another thread's deque.
    pub(crate) fn steal(&self, slot: usize) {
        self.slots[slot].steals.fetch_add(1, Ordering::Relaxed);
    }

    /// The thread of `slot` was idle (looking for work or asleep) from `since` (from `now`)
    /// until now. Only the part after the latest graph began counts: a worker asleep between
    /// graphs (while the program initializes its data) was not idle in the next one. With
    /// several graphs at once on one runtime, the latest one's beginning is the bound.
    pub(crate) fn idle(&self, slot: usize, since: u64) {
        let from = since.max(self.graph_began.load(Ordering::Relaxed));
        let ns = self.now().saturating_sub(from);
        self.slots[slot].idle_ns.fetch_add(ns, Ordering::Relaxed);
    }

    /// A graph begins: returns the time (from `now`) to give [`Observer::graph_end`].
    pub(crate) fn graph_begin(&self) -> u64 {
        let now = self.now();
        self.graph_began.fetch_max(now, Ordering::Relaxed);
        now
    }

    /// The end of a graph that started at `began` (from `now`): appends the buffered events to
    /// the trace and prints the statistics counted since the previous graph end.
    pub(crate) fn graph_end(&self, began: u64) {
        let graph = self.graphs.fetch_add(1, Ordering::Relaxed) + 1;
        if let Some(trace) = &self.trace {
            let mut trace = trace.lock().unwrap_or_else(PoisonError::into_inner);
            // The graph's own span, on the track of the thread that ends it (its control
            // thread, slot 0): what it did before its first task and after its last shows.
            let mut events = vec![(
                0,
                Event {
                    graph: true,
                    name: Arc::from(format!("graph {graph}")),
                    key: [0; MAX_DIMS],
                    ndims: 0,
                    start: began,
                    end: self.now(),
                },
            )];
            for (slot, log) in self.slots.iter().enumerate() {
                let mut buf = log.events.lock().unwrap_or_else(PoisonError::into_inner);
                events.extend(buf.drain(..).map(|e| (slot, e)));
            }
            events.sort_by_key(|(_, e)| e.start);
            trace.append(&events);
        }
        if self.stats {
            let wall = self.now().saturating_sub(began);
            let counts: Vec<(u64, u64, u64, u64)> = self
                .slots
                .iter()
                .map(|log| {
                    (
                        log.tasks.swap(0, Ordering::Relaxed),
                        log.steals.swap(0, Ordering::Relaxed),
                        log.idle_ns.swap(0, Ordering::Relaxed),
                        log.first_ns.swap(u64::MAX, Ordering::Relaxed),
                    )
                })
                .collect();
            let total: u64 = counts.iter().map(|c| c.0).sum();
            let mut out = format!(
                "streamrt: stats: graph {graph}: {total} tasks in {:.6} s on {} thread(s)\n",
                secs(wall),
                self.slots.len()
            );
            for (slot, (tasks, steals, idle, first)) in counts.iter().enumerate() {
                // How long into the graph the thread's first task began: a worker that starts
                // late (asleep, or queued behind another thread) shows here.
                let first = match *first {
                    u64::MAX => String::new(),
                    t => format!(", first task at {:.6} s", secs(t.saturating_sub(began))),
                };
                out.push_str(&format!(
                    "streamrt: stats:   thread {slot} ({}): {tasks} tasks, {steals} steals, idle {:.6} s{first}\n",
                    slot_role(slot),
                    secs(*idle)
                ));
            }
            // One write, so that lines of concurrent graphs do not interleave.
            let _ = std::io::stderr().write_all(out.as_bytes());
        }
    }
}

fn secs(ns: u64) -> f64 {
    ns as f64 * 1e-9
}

fn slot_role(slot: usize) -> &'static str {
    if slot == 0 {
        "control"
    } else {
        "worker"
    }
}

impl TraceFile {
    /// Creates `path` with the document's head (thread names) and its closing.
    fn create(path: &Path, n_threads: usize) -> Result<TraceFile, Error> {
        let error = |source| Error::Trace {
            path: path.display().to_string(),
            source,
        };
        let mut head = String::from("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
        for slot in 0..n_threads {
            let name = if slot == 0 {
                "control".to_string()
            } else {
                format!("worker {}", slot - 1)
            };
            if slot > 0 {
                head.push_str(",\n");
            }
            head.push_str(&format!(
                "{{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":{slot},\"args\":{{\"name\":\"{name}\"}}}}"
            ));
        }
        let mut file = BufWriter::new(File::create(path).map_err(error)?);
        file.write_all(head.as_bytes()).map_err(error)?;
        file.write_all(TRACE_CLOSE).map_err(error)?;
        file.flush().map_err(error)?;
        Ok(TraceFile {
            path: path.to_path_buf(),
            file,
            open_end: head.len() as u64,
            any: n_threads > 0,
            failed: false,
        })
    }

    /// Writes `events` (slot, event) before the closing, then the closing again.
    fn append(&mut self, events: &[(usize, Event)]) {
        if self.failed || events.is_empty() {
            return;
        }
        if let Err(e) = self.try_append(events) {
            self.failed = true;
            eprintln!(
                "streamrt: warning: cannot write the trace {}: {e}; tracing stops",
                self.path.display()
            );
        }
    }

    fn try_append(&mut self, events: &[(usize, Event)]) -> std::io::Result<()> {
        self.file.seek(SeekFrom::Start(self.open_end))?;
        let mut written = 0u64;
        let mut line = Vec::with_capacity(160);
        for (slot, e) in events {
            line.clear();
            if self.any || written > 0 {
                line.extend_from_slice(b",\n");
            }
            line.extend_from_slice(b"{\"name\":");
            serde_json::to_writer(&mut line, &*e.name)?;
            write!(
                line,
                ",\"cat\":\"{}\",\"ph\":\"X\",\"pid\":1,\"tid\":{slot},\"ts\":{:.3},\"dur\":{:.3},\"args\":{{\"key\":[",
                if e.graph { "graph" } else { "task" },
                e.start as f64 / 1e3,
                (e.end - e.start) as f64 / 1e3
            )?;
            for (d, k) in e.key[..usize::from(e.ndims)].iter().enumerate() {
                if d > 0 {
                    line.push(b',');
                }
                write!(line, "{k}")?;
            }
            line.extend_from_slice(b"]}}");
            self.file.write_all(&line)?;
            written += line.len() as u64;
        }
        self.file.write_all(TRACE_CLOSE)?;
        self.file.flush()?;
        self.open_end += written;
        self.any = true;
        // Nothing follows the closing (the file only grows, but keep it exact).
        self.file
            .get_ref()
            .set_len(self.open_end + TRACE_CLOSE.len() as u64)?;
        Ok(())
    }
}
