//! Solving a scheduling problem with ISL, bounded: the problem (domains, context and
//! dependences as text, options and limits) is run on a thread of its own under a CPU-time limit
//! and an operation budget, and its outcome kept in a process-wide memo, so that a problem asked
//! again (the fusion candidates of split SCoPs, privatization's second pass) is solved once and a
//! thread asking for a problem another thread is running waits for that run.

use super::*;

/// Everything the outcome of one scheduler run depends on: the problem as text, the options and
/// the operation budget. Not the time limit: a run records the CPU time it took, and each asker
/// holds it against its own limit ([`Run::wait`]).
#[derive(Clone, PartialEq, Eq, Hash)]
pub(super) struct ProblemKey {
    pub(super) domains: String,
    pub(super) context: String,
    pub(super) deps: String,
    /// Pairs of reads that are proximity constraints too (`Fuse::Reuse`); empty when none.
    pub(super) reuse: String,
    pub(super) fuse: Fuse,
    pub(super) max_operations: u64,
    pub(super) max_coefficient: i32,
    pub(super) max_constant_term: i32,
    /// `schedule_outer_coincidence` (the GPU; see the module documentation).
    pub(super) outer_coincidence: bool,
}

/// How many problems [`SOLVED`] keeps at most (it starts over when full).
pub(super) const MAX_SOLVED: usize = 64;

/// The run of one problem: set once, by the first thread that asks for it.
pub(super) type Slot = std::sync::Arc<std::sync::OnceLock<Run>>;

/// The scheduler runs of every thread, by problem (see [`scheduled_tree`]), and how many times
/// the store started over.
pub(super) static SOLVED: std::sync::LazyLock<
    std::sync::Mutex<(std::collections::HashMap<ProblemKey, Slot>, u64)>,
> = std::sync::LazyLock::new(Default::default);

thread_local! {
    /// Scheduler runs this thread started (tests read it).
    pub(super) static RUNS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// The slot of `key` in [`SOLVED`]: the run when some thread started it, else an empty slot that
/// the first thread to ask fills.
pub(super) fn solved_slot(key: &ProblemKey) -> Slot {
    // A thread that panicked while holding the lock left the map whole (inserts are atomic).
    let mut solved = SOLVED
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(slot) = solved.0.get(key) {
        return slot.clone();
    }
    if solved.0.len() >= MAX_SOLVED {
        solved.0.clear();
        solved.1 += 1;
    }
    solved.0.entry(key.clone()).or_default().clone()
}

/// One scheduler run of a problem, on a thread of its own, shared by every asker of the problem:
/// the thread leaves its outcome and the CPU time it took here when it finishes, whether or not
/// an asker still waits, and each asker waits for it as long as its own time limit allows
/// ([`Run::wait`]). So a problem runs once whatever its askers' limits: nussinov's fusion
/// candidates ask for a problem under 200 ms of CPU time and its final schedule under 10 s;
/// the run that the first gave up on is the one the second waits for (0.35 s), where a run that
/// gave up used to be run again from the start. ISL cannot be interrupted: a run that nobody
/// waits for any more finishes on its own, as before.
pub(super) struct Run {
    state: std::sync::Arc<RunState>,
    /// The run's thread (`None` when it could not start). Never joined: its CPU clock stays
    /// readable while it runs, and it ends on its own.
    thread: Option<std::thread::JoinHandle<()>>,
}

/// What a run's thread and its askers share.
struct RunState {
    /// The outcome and the CPU time it took (the wall-clock time since `started` where the
    /// system has no thread clock); `None` while the run goes on.
    result: std::sync::Mutex<Option<(Outcome, Option<std::time::Duration>)>>,
    finished: std::sync::Condvar,
    started: std::time::Instant,
}

impl Run {
    /// Starts `work` (a problem's [`SchedulingProblem::solve`]) on a thread of its own.
    pub(super) fn start(work: impl FnOnce() -> Outcome + Send + 'static) -> Run {
        let state = std::sync::Arc::new(RunState {
            result: std::sync::Mutex::new(None),
            finished: std::sync::Condvar::new(),
            started: std::time::Instant::now(),
        });
        let theirs = std::sync::Arc::clone(&state);
        // The run's CPU time counts toward the bound of the work that started it.
        let group = CpuGroup::current();
        let spawned = std::thread::Builder::new()
            .name("isl-scheduler".into())
            .spawn(move || {
                let _member = group.as_ref().map(CpuGroup::enter);
                let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(work))
                    .unwrap_or_else(|_| Outcome::Late("stopped without a result".into()));
                let used = this_thread_cpu_time().or_else(|| Some(theirs.started.elapsed()));
                theirs.set(outcome, used);
            });
        match spawned {
            Ok(thread) => Run {
                state,
                thread: Some(thread),
            },
            Err(err) => {
                state.set(Outcome::Late(format!("could not start ({err})")), None);
                Run {
                    state,
                    thread: None,
                }
            }
        }
    }

    /// The run's outcome for an asker with time limit `limit` (`None`: no limit): late when the
    /// run took more CPU time than `limit`, whether it finished before this asker came (the
    /// outcome does not depend on when it looked) or is still going on when its CPU time
    /// passes `limit` (the asker stops waiting then).
    pub(super) fn wait(&self, limit: Option<std::time::Duration>) -> Outcome {
        const POLL: std::time::Duration = std::time::Duration::from_millis(5);
        let late = |limit: std::time::Duration| {
            Outcome::Late(format!("did not finish within {limit:?} of CPU time"))
        };
        let clock = self.thread.as_ref().and_then(ThreadCpuClock::of);
        let mut result = self
            .state
            .result
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        loop {
            if let Some((outcome, used)) = &*result {
                return match (limit, used) {
                    (Some(limit), Some(used)) if *used > limit => late(limit),
                    _ => outcome.clone(),
                };
            }
            if let Some(limit) = limit {
                let used = match &clock {
                    Some(clock) => clock.used(),
                    None => Some(self.state.started.elapsed()),
                };
                if used.is_some_and(|used| used > limit) {
                    return late(limit);
                }
            }
            result = self
                .state
                .finished
                .wait_timeout(result, POLL)
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .0;
        }
    }
}

impl RunState {
    fn set(&self, outcome: Outcome, used: Option<std::time::Duration>) {
        *self
            .result
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some((outcome, used));
        self.finished.notify_all();
    }
}

/// Runs `work` on a thread of its own named `name`, and returns its result if it comes within
/// `limit` of CPU time (`None`: no limit): the time of that thread and of the threads it starts
/// that join its [`CpuGroup`] (fusion candidates, scheduler runs); where the system has no
/// thread clock, within `limit` of wall-clock time. A result that took more is late too, so
/// that the outcome does not depend on how often the caller looked, nor on the machine's load.
/// A late thread is left to finish on its own (ISL cannot be interrupted); its result is
/// dropped.
pub fn run_bounded<T: Send + 'static>(
    name: &str,
    limit: Option<std::time::Duration>,
    work: impl FnOnce() -> T + Send + 'static,
) -> std::result::Result<T, String> {
    run_bounded_timed(name, limit, work).map(|(result, _)| result)
}

/// [`run_bounded`], with the CPU time the work took (its wall-clock time where the system has no
/// thread clock; `None` when neither is known).
pub(super) fn run_bounded_timed<T: Send + 'static>(
    name: &str,
    limit: Option<std::time::Duration>,
    work: impl FnOnce() -> T + Send + 'static,
) -> std::result::Result<(T, Option<std::time::Duration>), String> {
    let (tx, rx) = mpsc::channel();
    let group = std::sync::Arc::new(CpuGroup::default());
    let theirs = std::sync::Arc::clone(&group);
    let spawned = std::thread::Builder::new()
        .name(name.into())
        .spawn(move || {
            let member = CpuGroup::enter(&theirs);
            let outcome = work();
            drop(member);
            // The receiver may be gone (time limit passed): nothing to do then.
            let _ = tx.send((outcome, theirs.used()));
        });
    if let Err(err) = spawned {
        return Err(format!("could not start ({err})"));
    }
    match limit {
        Some(limit) => wait_within(&group, &rx, limit),
        None => rx
            .recv()
            .map_err(|_| "stopped without a result".to_string()),
    }
}

/// The outcome the thread of `group` sends on `rx`, if it comes within `limit` (see
/// [`run_bounded`]).
fn wait_within<T>(
    group: &CpuGroup,
    rx: &mpsc::Receiver<(T, Option<std::time::Duration>)>,
    limit: std::time::Duration,
) -> std::result::Result<(T, Option<std::time::Duration>), String> {
    const POLL: std::time::Duration = std::time::Duration::from_millis(5);
    let start = std::time::Instant::now();
    let late = || format!("did not finish within {limit:?} of CPU time");
    loop {
        match rx.recv_timeout(POLL) {
            Ok((outcome, used)) => {
                let used = used.or_else(|| Some(start.elapsed()));
                return match used {
                    Some(used) if used > limit => Err(late()),
                    _ => Ok((outcome, used)),
                };
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                let used = group.used().unwrap_or_else(|| start.elapsed());
                if used > limit {
                    return Err(late());
                }
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Err("stopped without a result".to_string())
            }
        }
    }
}

/// A scheduling problem as text, so that it can move to the scheduler's thread.
pub(super) struct SchedulingProblem {
    /// The problem, its options and its limits.
    pub(super) key: ProblemKey,
    /// The problem with its sizes as parameters, scheduled first (see `parametric`).
    pub(super) parametric: Option<ParametricProblem>,
}

/// What the scheduler's thread reports.
#[derive(Clone)]
pub(super) enum Outcome {
    /// The schedule tree, printed.
    Done(String),
    OverBudget,
    Failed(String),
    /// No outcome within the time limit (or the thread stopped): why.
    Late(String),
}

impl SchedulingProblem {
    /// Runs the ISL scheduler (validity = proximity = coincidence = all dependences) in a fresh
    /// context with the options of the module documentation: on the parametric copy first, and on
    /// the problem itself when there is no copy or the copy's schedule depends on its sizes.
    pub(super) fn solve(&self) -> Outcome {
        if let Some(copy) = &self.parametric {
            if let Outcome::Done(tree) =
                self.solve_one(&copy.domains, &copy.context, &copy.deps, copy.own_params)
            {
                if let Some(tree) = concrete_tree(&tree, &copy.names, &self.key.domains) {
                    return Outcome::Done(tree);
                }
            }
        }
        self.solve_one(&self.key.domains, &self.key.context, &self.key.deps, true)
    }

    /// [`SchedulingProblem::solve`] on the given domains, context and dependences (ISL text), with
    /// or without parameter coefficients in the schedule (`parametric`).
    fn solve_one(&self, domains: &str, context: &str, deps: &str, parametric: bool) -> Outcome {
        let ctx = match Ctx::new() {
            Ok(ctx) => ctx,
            Err(err) => return Outcome::Failed(err.to_string()),
        };
        let run = || -> Result<String> {
            ctx.set_schedule_outer_coincidence(self.key.outer_coincidence)?;
            if !parametric {
                ctx.set_schedule_parametric(false)?;
            }
            ctx.set_schedule_serialize_sccs(self.key.fuse == Fuse::Min)?;
            ctx.set_schedule_whole_component(matches!(self.key.fuse, Fuse::Max | Fuse::Reuse))?;
            ctx.set_schedule_option(ScheduleOption::MaxCoefficient, self.key.max_coefficient)?;
            ctx.set_schedule_option(ScheduleOption::MaxConstantTerm, self.key.max_constant_term)?;
            let deps = UnionMap::read(&ctx, deps)?;
            let proximity = match self.key.reuse.is_empty() {
                true => deps.clone(),
                false => deps.clone().union(UnionMap::read(&ctx, &self.key.reuse)?)?,
            };
            let constraints = ScheduleConstraints::on_domain(UnionSet::read(&ctx, domains)?)?
                .set_context(Set::read(&ctx, context)?)?
                .set_validity(deps.clone())?
                .set_proximity(proximity)?
                .set_coincidence(match self.key.fuse {
                    // Coincidence would keep each statement's parallel loop outermost, and the
                    // reads apart (bicg's `s` along `j`, `q` along `i`); the fused band's tiles
                    // run as wavefronts instead.
                    Fuse::Reuse => UnionMap::empty(&ctx)?,
                    _ => deps,
                })?;
            ctx.set_max_operations(self.key.max_operations);
            let tree = constraints.compute_schedule();
            ctx.set_max_operations(0);
            tree?.to_str()
        };
        match run() {
            Ok(text) => Outcome::Done(text),
            Err(_) if ctx.quota_hit() => Outcome::OverBudget,
            Err(err) => Outcome::Failed(err.to_string()),
        }
    }
}

#[cfg(test)]
mod solved_tests {
    use super::*;

    /// Scheduler runs started by this thread, and how many times the store of outcomes started
    /// over (tests running beside this one fill it too).
    fn runs() -> (u64, u64) {
        let generation = SOLVED.lock().map(|s| s.1).unwrap_or_default();
        (RUNS.with(|r| r.get()), generation)
    }

    /// A scheduling problem solved a second time gets the first outcome back; the same problem
    /// under another option or a shorter time limit is not served from it.
    #[test]
    fn outcomes_are_reused_for_the_same_problem_under_any_limit_they_meet() {
        let ctx = Ctx::new().unwrap();
        // A producer loop and its consumer: fused under `Max`, separate nests under `Min`.
        let domains =
            UnionSet::read(&ctx, "{ S0[i] : 0 <= i <= 98; S1[i] : 0 <= i <= 98 }").unwrap();
        let context = Set::read(&ctx, "{ : }").unwrap();
        let deps = UnionMap::read(&ctx, "{ S0[i] -> S1[i] : 0 <= i <= 98 }").unwrap();
        let tree = |cfg: &ScheduleConfig| -> std::result::Result<String, String> {
            scheduled_tree(&domains, &context, &deps, None, None, cfg)
                .unwrap()
                .map(|t| t.to_str().unwrap())
        };
        let max = ScheduleConfig {
            fuse: Fuse::Max,
            ..ScheduleConfig::default()
        };
        let (before, _) = runs();
        let first = tree(&max).unwrap();
        let (after_first, generation) = runs();
        assert_eq!(after_first, before + 1);
        assert_eq!(tree(&max).unwrap(), first);
        let (after_second, generation_now) = runs();
        assert!(
            after_second == after_first || generation_now != generation,
            "the second run was served from the first"
        );
        let min = tree(&ScheduleConfig {
            fuse: Fuse::Min,
            ..max.clone()
        })
        .unwrap();
        assert_ne!(min, first, "Min keeps the loops apart");
        assert!(min.contains("sequence"), "{min}");
        let (after_min, generation) = runs();
        assert_eq!(after_min, after_second + 1);
        // Under a time limit too short for any run the outcome in store is late, without a run.
        let late = tree(&ScheduleConfig {
            time_limit: Some(std::time::Duration::from_nanos(1)),
            ..max.clone()
        });
        assert_eq!(
            late.unwrap_err(),
            "did not finish within 1ns of CPU time",
            "the stored run took more than 1 ns"
        );
        let (after_late, generation_now) = runs();
        assert!(after_late == after_min || generation_now != generation);
        // Under a longer limit than the stored run's (it was none: no limit is longer), the
        // outcome is used as it is.
        assert_eq!(
            tree(&ScheduleConfig {
                time_limit: Some(std::time::Duration::from_secs(60)),
                ..max.clone()
            })
            .unwrap(),
            first
        );
        // A new problem first asked under a 1 ns limit gives up; asked again under a longer
        // limit, the same run is waited for and used: one run in all.
        let other = ScheduleConfig {
            max_coefficient: 3,
            ..max.clone()
        };
        let (before_other, generation) = runs();
        let gave_up = tree(&ScheduleConfig {
            time_limit: Some(std::time::Duration::from_nanos(1)),
            ..other.clone()
        });
        assert!(gave_up.unwrap_err().contains("did not finish"));
        assert_eq!(tree(&other).unwrap(), first);
        let (after_other, generation_now) = runs();
        assert!(after_other == before_other + 1 || generation_now != generation);
    }

    /// How one run serves askers with other limits: late for an asker whose limit its CPU time
    /// passes (while it goes on, or after it finished), its outcome for the others.
    #[test]
    fn a_run_is_held_against_each_askers_limit() {
        let ms = std::time::Duration::from_millis;
        // About 60 ms of CPU time, then a tree.
        let run = Run::start(move || {
            let mut x = 0u64;
            while this_thread_cpu_time().is_some_and(|t| t < ms(60)) {
                x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
            }
            Outcome::Done(format!("tree {}", x % 2))
        });
        match run.wait(Some(ms(1))) {
            Outcome::Late(why) => assert_eq!(why, "did not finish within 1ms of CPU time"),
            _ => panic!("a run of 60 ms is late under 1 ms"),
        }
        assert!(
            matches!(run.wait(None), Outcome::Done(_)),
            "no limit waits for it"
        );
        assert!(matches!(run.wait(Some(ms(60_000))), Outcome::Done(_)));
        match run.wait(Some(ms(20))) {
            Outcome::Late(why) => assert_eq!(why, "did not finish within 20ms of CPU time"),
            _ => panic!("a finished run of 60 ms is still late under 20 ms"),
        }
        // A run that panics ends its askers' wait.
        let broken = Run::start(|| panic!("a scheduler bug"));
        match broken.wait(None) {
            Outcome::Late(why) => assert_eq!(why, "stopped without a result"),
            _ => panic!("a panicking run has no outcome"),
        }
    }

    /// Threads that ask for one problem at once share one run: the others wait for its outcome.
    #[test]
    fn threads_asking_for_one_problem_share_one_run() {
        let ask = || {
            let ctx = Ctx::shared().unwrap();
            let domains =
                UnionSet::read(ctx, "{ S0[i, j] : 0 <= i, j <= 57; S1[i] : 0 <= i <= 57 }")
                    .unwrap();
            let context = Set::read(ctx, "{ : }").unwrap();
            let deps = UnionMap::read(ctx, "{ S0[i, j] -> S1[i] : 0 <= i, j <= 57 }").unwrap();
            let (before, generation) = runs();
            let tree = scheduled_tree(
                &domains,
                &context,
                &deps,
                None,
                None,
                &ScheduleConfig::default(),
            )
            .unwrap()
            .map(|t| t.to_str().unwrap())
            .unwrap();
            let (after, generation_now) = runs();
            (tree, after - before, generation_now != generation)
        };
        let barrier = std::sync::Barrier::new(3);
        let asked: Vec<_> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..3)
                .map(|_| {
                    scope.spawn(|| {
                        barrier.wait();
                        ask()
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert!(asked.iter().all(|(tree, _, _)| *tree == asked[0].0));
        let started: u64 = asked.iter().map(|(_, runs, _)| runs).sum();
        let started_over = asked.iter().any(|(_, _, over)| *over);
        assert!(
            started == 1 || started_over,
            "{started} runs for one problem"
        );
    }
}

#[cfg(test)]
mod parametric_tests {
    use super::*;

    /// jacobi-1d at PolyBench's LARGE sizes (T = 500, N = 2000), its dependences as the
    /// `dependences` stage prints them.
    const DOMAINS: &str = "{ S0[t, i] : 0 <= t <= 499 and 0 < i <= 1998; S1[t, i] : 0 <= t <= 499 and 0 < i <= 1998 }";
    const DEPS: &str =
        "{ S1[t, i] -> S0[t' = 1 + t, i' = 1 + i] : 0 <= t <= 498 and 0 < i <= 1997; \
        S1[t, i] -> S0[t' = 1 + t, i' = i] : 0 <= t <= 498 and 0 < i <= 1998; \
        S1[t, i] -> S0[t' = 1 + t, i' = -1 + i] : 0 <= t <= 498 and 2 <= i <= 1998; \
        S0[t, i] -> S1[t' = t, i' = 1 + i] : 0 <= t <= 499 and 0 < i <= 1997; \
        S0[t, i] -> S1[t' = t, i' = i] : 0 <= t <= 499 and 0 < i <= 1998; \
        S0[t, i] -> S1[t' = t, i' = -1 + i] : 0 <= t <= 499 and 2 <= i <= 1998; \
        S0[t, i] -> S0[t' = 1 + t, i' = i] : 0 <= t <= 498 and 0 < i <= 1998; \
        S1[t, i] -> S1[t' = 1 + t, i' = i] : 0 <= t <= 498 and 0 < i <= 1998 }";

    fn problem(ctx: &Ctx, domains: &str, deps: &str, fuse: Fuse) -> SchedulingProblem {
        let d = UnionSet::read(ctx, domains).unwrap();
        let c = Set::read(ctx, "{ : }").unwrap();
        let m = UnionMap::read(ctx, deps).unwrap();
        let key = ProblemKey {
            domains: d.to_str().unwrap(),
            context: c.to_str().unwrap(),
            deps: m.to_str().unwrap(),
            reuse: String::new(),
            fuse,
            max_operations: 2_000_000,
            max_coefficient: 4,
            max_constant_term: 8,
            outer_coincidence: false,
        };
        SchedulingProblem {
            key,
            parametric: parametric_copy(&d, &c, &m).unwrap(),
        }
    }

    fn tree(outcome: Outcome) -> String {
        match outcome {
            Outcome::Done(tree) => tree,
            Outcome::OverBudget => panic!("over budget"),
            Outcome::Failed(m) => panic!("failed: {m}"),
            Outcome::Late(why) => panic!("late: {why}"),
        }
    }

    /// A stencil's copy (sizes as parameters) gets the same schedule tree, on the original
    /// domains, as the original problem, under every fusion heuristic.
    #[test]
    fn stencil_copy_gets_the_original_schedule() {
        let ctx = Ctx::new().unwrap();
        for fuse in [Fuse::Min, Fuse::Smart, Fuse::Max] {
            let p = problem(&ctx, DOMAINS, DEPS, fuse);
            let copy = p.parametric.as_ref().expect("jacobi-1d at LARGE has sizes");
            assert_eq!(copy.names, ["tf_size0", "tf_size1"]);
            let original = tree(p.solve_one(&p.key.domains, &p.key.context, &p.key.deps, true));
            assert_eq!(tree(p.solve()), original, "{fuse:?}");
            // The copy's own tree mentions its sizes, so the test above went through
            // `concrete_tree`.
            let copied = tree(p.solve_one(&copy.domains, &copy.context, &copy.deps, false));
            assert!(copied.contains("tf_size"), "{copied}");
        }
    }

    /// A dependence that is not a translation (S0[i] feeds every S1[i, j]) leaves the problem
    /// without a copy: it is scheduled as it is.
    #[test]
    fn problems_with_other_dependences_are_not_copied() {
        let ctx = Ctx::new().unwrap();
        let p = problem(
            &ctx,
            "{ S0[i] : 0 <= i <= 999; S1[i, j] : 0 <= i <= 999 and 0 <= j <= 999 }",
            "{ S0[i] -> S1[i, j] : 0 <= i <= 999 and 0 <= j <= 999 }",
            Fuse::Smart,
        );
        assert_eq!(p.parametric, None);
    }

    /// Without parameter coefficients the copy of a reversed loop after its initialization (as in
    /// deriche) is scheduled as the original (`-j`), so it is used; with them ISL picks
    /// `tf_size0 - j`, which would send `solve` back to the original problem.
    #[test]
    fn copy_is_scheduled_without_parameter_coefficients() {
        let ctx = Ctx::new().unwrap();
        let domains = "{ S0[i] : 0 <= i <= 999; S1[i, j] : 0 <= i <= 999 and 0 <= j <= 499 }";
        let deps = "{ S0[i] -> S1[i, j = 499] : 0 <= i <= 999; S1[i, j] -> S1[i, j' = j - 1] : 0 <= i <= 999 and 1 <= j <= 499 }";
        let mut p = problem(&ctx, domains, deps, Fuse::Smart);
        let copy = ParametricProblem {
            domains: "[tf_size0, tf_size1] -> { S0[i] : 0 <= i <= tf_size1; S1[i, j] : 0 <= i <= tf_size1 and 0 <= j <= tf_size0 }".into(),
            context: "[tf_size0, tf_size1] -> { : tf_size0 >= 499 and tf_size1 >= 999 }".into(),
            deps: "[tf_size0, tf_size1] -> { S0[i] -> S1[i, j = tf_size0] : 0 <= i <= tf_size1; S1[i, j] -> S1[i, j' = j - 1] : 0 <= i <= tf_size1 and 1 <= j <= tf_size0 }".into(),
            names: vec!["tf_size0".into(), "tf_size1".into()],
            own_params: false,
        };
        let with = tree(p.solve_one(&copy.domains, &copy.context, &copy.deps, true));
        assert_eq!(
            concrete_tree(&with, &copy.names, &p.key.domains),
            None,
            "{with}"
        );
        let without = tree(p.solve_one(&copy.domains, &copy.context, &copy.deps, false));
        let original = tree(p.solve_one(&p.key.domains, &p.key.context, &p.key.deps, true));
        assert_eq!(
            concrete_tree(&without, &copy.names, &p.key.domains).as_deref(),
            Some(original.as_str()),
            "{without}"
        );
        p.parametric = Some(copy);
        assert_eq!(tree(p.solve()), original);
    }
}
