//! Dependence order: random DAGs and a 2-D wavefront, checked with global sequence numbers.
//!
//! Every task takes a sequence number from one SeqCst counter when it starts and another when it
//! ends. A run is correct when every task ran exactly once and started after each of its inputs
//! ended.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use streamrt::{scope, Runtime, StreamId};

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            v.swap(i, self.below(i + 1));
        }
    }
}

/// Start/end sequence numbers and run counts of the tasks of one graph.
struct Record {
    clock: AtomicU64,
    start: Vec<AtomicU64>,
    end: Vec<AtomicU64>,
    runs: Vec<AtomicU32>,
}

impl Record {
    fn new(n: usize) -> Record {
        Record {
            clock: AtomicU64::new(1),
            start: (0..n).map(|_| AtomicU64::new(0)).collect(),
            end: (0..n).map(|_| AtomicU64::new(0)).collect(),
            runs: (0..n).map(|_| AtomicU32::new(0)).collect(),
        }
    }

    fn task(&self, t: usize, work: u64) {
        self.runs[t].fetch_add(1, Ordering::SeqCst);
        self.start[t].store(self.clock.fetch_add(1, Ordering::SeqCst), Ordering::SeqCst);
        let mut x = work;
        for _ in 0..work {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
        }
        std::hint::black_box(x);
        self.end[t].store(self.clock.fetch_add(1, Ordering::SeqCst), Ordering::SeqCst);
    }

    /// Checks exactly-once and `end[input] < start[task]` for every edge.
    fn check(&self, inputs: &[Vec<usize>], what: &str) {
        for (t, ins) in inputs.iter().enumerate() {
            assert_eq!(
                self.runs[t].load(Ordering::SeqCst),
                1,
                "{what}: task {t} ran a wrong number of times"
            );
            let start = self.start[t].load(Ordering::SeqCst);
            for &p in ins {
                let end = self.end[p].load(Ordering::SeqCst);
                assert!(
                    end < start,
                    "{what}: task {t} started ({start}) before its input {p} ended ({end})"
                );
            }
        }
    }
}

/// A random DAG: task `t` produces `keys[t]` and waits for the outputs of `inputs[t]`. Edges
/// follow a random rank order unrelated to the spawn order, so many inputs name tokens whose
/// producer is spawned later.
struct Dag {
    /// (stream index, key) of each task's output.
    keys: Vec<(usize, Vec<i64>)>,
    inputs: Vec<Vec<usize>>,
    work: Vec<u64>,
    /// The random topological rank of each task (edges go from lower to higher ranks).
    rank: Vec<usize>,
}

/// The streams of every random DAG: (name, lo, hi).
const DAG_STREAMS: [(&str, &[i64], &[i64]); 4] = [
    ("A", &[-5], &[3000]),
    ("B", &[0, -2], &[29, 40]),
    ("C", &[1, 1, 1], &[6, 5, 7]),
    ("Z", &[], &[]),
];

fn random_dag(seed: u64, n_tasks: usize) -> Dag {
    let mut rng = Rng::new(seed);
    // Every key of every stream, shuffled: tasks take the first n_tasks.
    let mut all_keys = Vec::new();
    for (s, (_, lo, hi)) in DAG_STREAMS.iter().enumerate() {
        let mut key = lo.to_vec();
        if lo.iter().zip(hi.iter()).any(|(l, h)| l > h) {
            continue;
        }
        loop {
            all_keys.push((s, key.clone()));
            // Odometer increment over the box.
            let mut d = key.len();
            loop {
                if d == 0 {
                    break;
                }
                d -= 1;
                if key[d] < hi[d] {
                    key[d] += 1;
                    break;
                }
                key[d] = lo[d];
            }
            if key == lo.to_vec() {
                break;
            }
        }
    }
    rng.shuffle(&mut all_keys);
    assert!(all_keys.len() >= n_tasks);
    let keys: Vec<_> = all_keys.into_iter().take(n_tasks).collect();
    let mut rank: Vec<usize> = (0..n_tasks).collect();
    rng.shuffle(&mut rank);
    let mut inputs = Vec::with_capacity(n_tasks);
    let mut work = Vec::with_capacity(n_tasks);
    for t in 0..n_tasks {
        let mut ins = Vec::new();
        for _ in 0..rng.below(7) {
            let p = rng.below(n_tasks);
            if rank[p] < rank[t] {
                ins.push(p);
                if rng.below(5) == 0 {
                    ins.push(p); // the same token twice: waits once
                }
            }
        }
        inputs.push(ins);
        work.push(if rng.below(4) == 0 {
            rng.below(3000) as u64
        } else {
            0
        });
    }
    // The DAG must exercise what it is for: many edges, many of them forward references.
    let n_edges: usize = inputs.iter().map(Vec::len).sum();
    let n_forward: usize = inputs
        .iter()
        .enumerate()
        .map(|(t, ins)| ins.iter().filter(|&&p| p > t).count())
        .sum();
    assert!(
        n_edges > n_tasks && n_forward > n_tasks / 4,
        "degenerate DAG: {n_edges} edges, {n_forward} forward"
    );
    Dag {
        keys,
        inputs,
        work,
        rank,
    }
}

fn run_dag(rt: &Runtime, dag: &Dag, what: &str) {
    let record = Record::new(dag.keys.len());
    scope(rt, |g| {
        let ids: Vec<StreamId> = DAG_STREAMS
            .iter()
            .map(|(name, lo, hi)| g.stream(name, lo, hi).unwrap())
            .collect();
        for (t, (s, key)) in dag.keys.iter().enumerate() {
            let ins: Vec<(StreamId, &[i64])> = dag.inputs[t]
                .iter()
                .map(|&p| (ids[dag.keys[p].0], &dag.keys[p].1[..]))
                .collect();
            let (record, work) = (&record, dag.work[t]);
            g.spawn(ids[*s], key, &ins, move |_| record.task(t, work))
                .unwrap();
        }
    })
    .unwrap();
    record.check(&dag.inputs, what);
}

#[test]
fn random_dags_respect_dependences_on_1_2_4_8_threads() {
    for threads in [1, 2, 4, 8] {
        let rt = Runtime::new(threads).unwrap();
        // Several graphs in sequence on the same workers.
        for seed in 0..6 {
            let dag = random_dag(seed * 7919 + threads as u64, 2500);
            run_dag(&rt, &dag, &format!("threads={threads} seed={seed}"));
        }
    }
}

#[test]
fn random_dag_check_catches_a_wrong_order() {
    // The oracle itself must be able to fail: record a run where task 1 (which depends on task 0)
    // runs first.
    let record = Record::new(2);
    record.task(1, 0);
    record.task(0, 0);
    let inputs = vec![vec![], vec![0]];
    let result = std::panic::catch_unwind(|| record.check(&inputs, "reversed"));
    assert!(result.is_err());
}

/// Spawns an `n` x `n` wavefront (`(i, j)` waits for `(i-1, j)` and `(i, j-1)`) in the given
/// order; each task computes `v(i, j) = v(i-1, j) + v(i, j-1) + 1 (mod p)` from its inputs'
/// values. Returns the values.
fn wavefront(rt: &Runtime, n: usize, order: &[(usize, usize)]) -> Vec<u64> {
    const P: u64 = 1_000_003;
    let values: Vec<AtomicU64> = (0..n * n).map(|_| AtomicU64::new(u64::MAX)).collect();
    let record = Record::new(n * n);
    scope(rt, |g| {
        let w = g
            .stream("W", &[0, 0], &[n as i64 - 1, n as i64 - 1])
            .unwrap();
        for &(i, j) in order {
            let up = [i as i64 - 1, j as i64];
            let left = [i as i64, j as i64 - 1];
            let mut ins: Vec<(StreamId, &[i64])> = Vec::new();
            if i > 0 {
                ins.push((w, &up));
            }
            if j > 0 {
                ins.push((w, &left));
            }
            let (values, record) = (&values, &record);
            g.spawn(w, &[i as i64, j as i64], &ins, move |key| {
                assert_eq!(key, [i as i64, j as i64]);
                record.task(i * n + j, 0);
                let get = |k: usize| {
                    let v = values[k].load(Ordering::Relaxed);
                    assert_ne!(v, u64::MAX, "input of ({i}, {j}) not computed");
                    v
                };
                let up = if i > 0 { get((i - 1) * n + j) } else { 0 };
                let left = if j > 0 { get(i * n + j - 1) } else { 0 };
                values[i * n + j].store((up + left + 1) % P, Ordering::Relaxed);
            })
            .unwrap();
        }
    })
    .unwrap();
    let inputs: Vec<Vec<usize>> = (0..n * n)
        .map(|t| {
            let (i, j) = (t / n, t % n);
            let mut v = Vec::new();
            if i > 0 {
                v.push(t - n);
            }
            if j > 0 {
                v.push(t - 1);
            }
            v
        })
        .collect();
    record.check(&inputs, "wavefront");
    values.iter().map(|v| v.load(Ordering::Relaxed)).collect()
}

#[test]
fn wavefront_200x200_in_three_spawn_orders() {
    const N: usize = 200;
    // Sequential oracle.
    let mut expected = vec![0u64; N * N];
    for i in 0..N {
        for j in 0..N {
            let up = if i > 0 { expected[(i - 1) * N + j] } else { 0 };
            let left = if j > 0 { expected[i * N + j - 1] } else { 0 };
            expected[i * N + j] = (up + left + 1) % 1_000_003;
        }
    }
    let row_major: Vec<(usize, usize)> = (0..N * N).map(|t| (t / N, t % N)).collect();
    let reversed: Vec<(usize, usize)> = row_major.iter().rev().copied().collect();
    let mut shuffled = row_major.clone();
    Rng::new(42).shuffle(&mut shuffled);
    for threads in [1, 4] {
        let rt = Runtime::new(threads).unwrap();
        for (name, order) in [
            ("row-major", &row_major),
            ("reversed", &reversed),
            ("shuffled", &shuffled),
        ] {
            let got = wavefront(&rt, N, order);
            assert!(
                got == expected,
                "wavefront {name} on {threads} threads computed wrong values"
            );
        }
    }
}

/// Soft barriers added to a random DAG: barrier `b` is produced once its `members` are (as an
/// input barrier, or as a counted barrier they arrive at), and its `readers` wait for it.
struct Barriers {
    counted: Vec<bool>,
    members: Vec<Vec<usize>>,
    readers: Vec<Vec<usize>>,
    /// For input barriers: declared just before the task spawned at this position (or after
    /// the last one).
    position: Vec<usize>,
}

fn random_barriers(dag: &Dag, seed: u64, n_barriers: usize) -> Barriers {
    let mut rng = Rng::new(seed);
    let n = dag.keys.len();
    let mut by_rank: Vec<usize> = (0..n).collect();
    by_rank.sort_by_key(|&t| dag.rank[t]);
    let mut b = Barriers {
        counted: Vec::new(),
        members: Vec::new(),
        readers: Vec::new(),
        position: Vec::new(),
    };
    for _ in 0..n_barriers {
        // Members below a random rank, readers above it: no cycle.
        let cut = 1 + rng.below(n - 1);
        let members: Vec<usize> = (0..1 + rng.below(30))
            .map(|_| by_rank[rng.below(cut)])
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        let readers: Vec<usize> = (0..rng.below(8))
            .map(|_| by_rank[cut + rng.below(n - cut)])
            .collect();
        b.counted.push(rng.below(2) == 0);
        b.members.push(members);
        b.readers.push(readers);
        b.position.push(rng.below(n + 1));
    }
    b
}

fn run_dag_with_barriers(rt: &Runtime, dag: &Dag, bars: &Barriers, what: &str) {
    let n = dag.keys.len();
    let record = Record::new(n);
    // Per task: the barriers it reads, and those it arrives at.
    let mut reads = vec![Vec::new(); n];
    let mut arrives = vec![Vec::new(); n];
    for (b, readers) in bars.readers.iter().enumerate() {
        for &r in readers {
            reads[r].push(b);
        }
        if bars.counted[b] {
            for &m in &bars.members[b] {
                arrives[m].push(b);
            }
        }
    }
    scope(rt, |g| {
        let ids: Vec<StreamId> = DAG_STREAMS
            .iter()
            .map(|(name, lo, hi)| g.stream(name, lo, hi).unwrap())
            .collect();
        let bar = g
            .stream("Bar", &[0], &[bars.counted.len() as i64 - 1])
            .unwrap();
        let bar_keys: Vec<[i64; 1]> = (0..bars.counted.len() as i64).map(|b| [b]).collect();
        let token = |t: usize| (ids[dag.keys[t].0], &dag.keys[t].1[..]);
        let declare_inputs = |g: &mut streamrt::Graph<'_>, at: usize| {
            for (b, key) in bar_keys.iter().enumerate() {
                if !bars.counted[b] && bars.position[b] == at {
                    let ins: Vec<_> = bars.members[b].iter().map(|&m| token(m)).collect();
                    g.barrier(bar, key, &ins).unwrap();
                }
            }
        };
        // Counted barriers come before the tasks that arrive at them.
        for (b, key) in bar_keys.iter().enumerate() {
            if bars.counted[b] {
                let count = bars.members[b].len() as u64;
                g.counted_barrier(bar, key, count).unwrap();
            }
        }
        for (t, (s, key)) in dag.keys.iter().enumerate() {
            declare_inputs(g, t);
            let mut ins: Vec<(StreamId, &[i64])> =
                dag.inputs[t].iter().map(|&p| token(p)).collect();
            ins.extend(reads[t].iter().map(|&b| (bar, &bar_keys[b][..])));
            let arr: Vec<(StreamId, &[i64])> = arrives[t]
                .iter()
                .map(|&b| (bar, &bar_keys[b][..]))
                .collect();
            let (record, work) = (&record, dag.work[t]);
            g.spawn_arriving(ids[*s], key, &ins, &arr, move |_| record.task(t, work))
                .unwrap();
        }
        declare_inputs(g, n);
    })
    .unwrap();
    // A reader of a barrier must start after every member ended.
    let mut inputs = dag.inputs.clone();
    for t in 0..n {
        for &b in &reads[t] {
            inputs[t].extend(&bars.members[b]);
        }
    }
    record.check(&inputs, what);
}

#[test]
fn random_dags_with_soft_barriers_respect_dependences_on_1_2_4_8_threads() {
    for threads in [1, 2, 4, 8] {
        let rt = Runtime::new(threads).unwrap();
        for seed in 0..3 {
            let dag = random_dag(seed * 104_729 + threads as u64, 1500);
            let bars = random_barriers(&dag, seed + 11, 60);
            let n_counted = bars.counted.iter().filter(|&&c| c).count();
            assert!(
                n_counted > 10 && n_counted < 50,
                "{n_counted} counted barriers"
            );
            run_dag_with_barriers(&rt, &dag, &bars, &format!("threads={threads} seed={seed}"));
        }
    }
}
