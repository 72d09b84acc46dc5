//! The cost of a tiled schedule on a machine: an estimate of its run time from its memory traffic,
//! its work, the parallelism of its tiles and the number of its tasks. It ranks the schedules
//! that the scheduler can give one SCoP (the fusion heuristics, [`crate::choose_fusion`]); its
//! numbers are estimates for that comparison, not predictions of seconds.
//!
//! Every nest is costed on its own (the runtime overlaps consecutive nests, but the model does
//! not count on it) by walking its flat schedule `S[i] -> [x0, .., xn]` from the outermost
//! dimension in: a *block* at depth `l` is the set of instances whose first `l` schedule
//! coordinates are fixed. At each depth the walk fixes the dimension at the middle of its range
//! (given the outer ones) and multiplies by the range's extent, so a triangular loop counts its
//! average trip; the statements whose schedule is constant on a dimension (the position of a
//! statement in a sequence, an initialization fused into the first iteration of a loop) are not
//! in that loop: the walk follows each of their values and adds them up. The count is exact for
//! rectangular nests whose tile sizes divide the loops' extents; otherwise partial tiles count as
//! full ones.
//!
//! Memory traffic, per cache level of capacity `C` (the L2 of one core, then the last-level
//! cache): the first block along the walk whose data fits `C` is loaded once per execution, and
//! nothing inside it is loaded again; the data of a block is the bounding box of the elements
//! each array's accesses touch in it (its footprint), whose rows (the last, contiguous
//! dimension) are counted in whole cache lines, so that a loop that walks down a column pays a
//! line per element where one along a row pays one per eight doubles. A nest whose band does not tile the loops
//! that reuse data (a fused nest with a one-dimensional band over a matrix product) has blocks
//! that only fit deep inside the point loops and is charged its streamed traffic; a fusion that
//! keeps the band deep and puts a producer and its consumer in one tile is charged their shared
//! data once. Where a loop's iterations each fit L2 or the last-level cache, and two
//! consecutive ones do together, an iteration after the first is charged only what it adds to
//! the one before (the footprint of both less one's): the vectors every row of a matrix-vector
//! product reads stay. Charged for every row, atax's one fused nest loaded three times its data
//! into L2 (98 MB at EXTRALARGE for 34 MB). Not L1: there the tile code's order decides. No
//! level is charged more than a line for every access of every instance (bounding boxes
//! overstate what a skewed block touches).
//!
//! Two corrections keep the walk from jumping where caches do not. A block that is one loop
//! (the innermost, every later dimension fixed) is charged its footprint at each level it does
//! not fit, not a line per access per instance: it walks its rows in order and loads each line
//! once. Charged per instance, gesummv's fused rows (two rows of 22 KiB and the vector, past the
//! 32 KiB L1) cost 8x their lines, and the model picked `min` (two passes over 64 x 512 tiles)
//! for it at EXTRALARGE on the AMD EPYC, 14% slower than `smart`'s whole rows (medians of 15
//! runs). And a block up to twice a cache's size is charged between its footprint (at one
//! capacity) and what its children are charged (at two), linearly: real caches keep most of a
//! block that overflows them a little. Without that, adi's column sweep at EXTRALARGE (64
//! columns of four 2000-row arrays, 4.22 MB against a 4 MiB share) was charged as if nothing
//! of it stayed, and with the first correction the model chose `min`, 2x slower. Together they
//! change the choice of gesummv at EXTRALARGE (`smart`, 14% faster), bicg and mvt at LARGE
//! (`reuse`, 22% and 33% faster), trisolv at LARGE (`min`, 8% faster; EXTRALARGE within 1%)
//! and durbin at EXTRALARGE (`smart`, within 4%); medians of 15 to 31 runs, 2 threads, AMD EPYC.
//!
//! Work is counted statement by statement (each walked through its own ranges: in a skewed band
//! the union of fused statements spans more values of a dimension than any one of them does),
//! at [`SECONDS_PER_INSTANCE`] each; an in-order chain (a scalar updated in place inside a loop)
//! at [`SECONDS_PER_CHAIN_STEP`], less the work of other statements fused into the chain's
//! innermost loop, up to the chain's own time: it runs while the chain waits on its adder
//! (durbin's sum fused with the update of `z`, [`crate::retime_reductions`]).
//!
//! Time of a nest = (work + traffic from memory, from the last-level cache and from L2 / their
//! bandwidths + tasks × task cost) / speed-up, where one thread's memory bandwidth is what one
//! core streams and the threads add theirs up to [`MAX_MEMORY_THREADS`] (a core cannot keep
//! enough misses in flight to use the bus alone: 8.1 GB/s for one thread, 15.8 GB/s for two on
//! this project's 2-core VMs, a summing loop over 512 MiB), and the speed-up on `p` threads of
//! `a` independent tiles is `p·a / (a + p − 1)` (1 for one tile, `p` for many). `a` comes from
//! [`crate::parallel_tiles`]: the extent of the outermost parallel tile dimension, or the mean
//! width of the wavefronts when only the skewed band has one; 1 for an untiled nest or one
//! without parallel tiles.
//!
//! Parameters (sizes not known at compile time) are taken as [`PARAM_VALUE`] when the SCoP's
//! context allows it; otherwise there is no estimate.

use crate::isl::{Ctx, Set, Side, UnionMap, UnionSet};
use crate::maps::{input_error, projection};
use crate::memo::Memo;
use crate::scop::{stmt_of_name, ScopSets};
use crate::tile_size::element_bytes;
use crate::{parallel_tiles, Dependences, Error, Result, TiledSchedule};
use scop_ir::Scop;
use std::collections::BTreeMap;

/// The value every parameter takes for the estimate.
pub const PARAM_VALUE: i64 = 1000;
/// Bytes of a cache line.
pub const CACHE_LINE: f64 = 64.0;
/// Seconds of work per statement instance (a few operations, vectorized). atax fused into one
/// pass at EXTRALARGE (8.2 million instances and 34 MB from memory) runs 2.1 ms on one thread of
/// the AMD EPYC (Zen 3): at most 0.26 ns an instance with the memory's time inside it. At 0.5 ns,
/// the work the two threads share made `min`'s two passes over `A` look cheaper than `smart`'s
/// one; `smart` is 15% faster on one thread, 10% on two (medians of 9 and 15 runs, paired), and
/// at MEDIUM `reuse` runs bicg 26% and mvt 32% faster than the `smart` the model kept (21 runs).
/// No other choice changes from MEDIUM to EXTRALARGE (2mm at MINI and SMALL does).
pub const SECONDS_PER_INSTANCE: f64 = 0.25e-9;
/// Seconds per instance of an in-order chain (a scalar updated in place inside a loop: each
/// addition waits for the one before): the adder's latency. durbin's sum, 8 million dependent
/// additions, runs 4.0 ms alone on the Intel Xeon. About what an instance costs anyway, but
/// the chain leaves the core's other units idle: statements fused into the chain's loop run
/// beside it, up to the chain's own time (see [`Walk::chains`]).
pub const SECONDS_PER_CHAIN_STEP: f64 = 0.5e-9;
/// Bytes per second one thread reads from memory.
pub const MEMORY_BANDWIDTH: f64 = 8e9;
/// The most threads whose memory bandwidths add up (past them the bus is the limit).
pub const MAX_MEMORY_THREADS: f64 = 8.0;
/// Bytes per second one thread reads from the last-level cache.
pub const LLC_BANDWIDTH: f64 = 40e9;
/// Bytes per second one thread reads from L2.
pub const L2_BANDWIDTH: f64 = 40e9;
/// Seconds the runtime spends on one task (spawn, dependences, scheduling): `make
/// bench-runtime` measures 0.24 to 0.54 µs of wall time per task on 2 threads (a wavefront of
/// empty tasks, independent ones), so a microsecond of one thread's time. (It was 2 µs, which
/// kept bicg at EXTRALARGE from its `reuse` candidate on a 512 KiB-L2 machine: 9.1 ms under
/// `smart` against 5.2 ms, medians of 15 runs, gcc's original 5.3 ms; no other kernel's choice
/// changed.)
pub const SECONDS_PER_TASK: f64 = 1e-6;
/// The most last-level cache one thread counts on. Virtual machines report the sum of every
/// cache slice of the host (260 MiB over 2 cores on this project's 2-core VMs), of which a thread
/// gets a few MiB; real processors have 1.5 to 4 MiB per core.
pub const MAX_LLC_SHARE: u64 = 4 << 20;
/// The statements constant on a dimension are followed value by value when they take at most
/// this many values; past that the dimension counts as one loop.
const MAX_BRANCHES: i64 = 16;

/// What the model knows of the machine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Machine {
    /// Threads the program will run on.
    pub threads: usize,
    /// Bytes of the first-level data cache of one core.
    pub l1_bytes: u64,
    /// Bytes of the cache private to one core (L2).
    pub l2_bytes: u64,
    /// Bytes of the last-level cache one thread may count on (its share).
    pub llc_bytes: u64,
}

impl Machine {
    /// Bytes one tile's data may take with default tile sizes
    /// ([`crate::ScheduleConfig::tile_footprint`]): a quarter of the core's L2, between 32 and
    /// 128 KiB. Measured on two machines, both best near 128 KiB: an Intel Xeon with 2 MiB of
    /// L2 (where a sixteenth, the earlier rule, gave it) and an AMD EPYC (Zen 3) with 512 KiB,
    /// where a sixteenth gave 32 KiB and ran most tiled kernels slower (see
    /// [`crate::tile_size`]'s module doc for the numbers).
    pub fn tile_footprint(&self) -> u64 {
        (self.l2_bytes / 4).clamp(32 << 10, 128 << 10)
    }

    /// This machine: `TILEDFLOW_NUM_THREADS` (as the runtime reads it) or every core, and the
    /// cache sizes Linux reports for CPU 0 (`/sys/devices/system/cpu/cpu0/cache`), overridden by
    /// `TILEDFLOW_L2_BYTES` and `TILEDFLOW_LLC_BYTES`; 512 KiB and 8 MiB where nothing says.
    pub fn detect() -> Machine {
        let env = |name: &str| {
            std::env::var(name)
                .ok()
                .and_then(|v| v.trim().parse::<u64>().ok())
                .filter(|&v| v > 0)
        };
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let threads = env("TILEDFLOW_NUM_THREADS").map_or(cores, |t| t as usize);
        let (l1, l2, llc) = sysfs_caches();
        let l1_bytes = env("TILEDFLOW_L1_BYTES").or(l1).unwrap_or(32 << 10);
        let l2_bytes = env("TILEDFLOW_L2_BYTES").or(l2).unwrap_or(512 << 10);
        let llc_total = env("TILEDFLOW_LLC_BYTES").or(llc).unwrap_or(8 << 20);
        // The last-level cache is shared by the cores: each thread counts on its share, at most
        // [`MAX_LLC_SHARE`], and never on less than its L2.
        let llc_bytes = (llc_total / cores.max(1) as u64)
            .min(MAX_LLC_SHARE)
            .max(l2_bytes);
        Machine {
            threads: threads.max(1),
            l1_bytes,
            l2_bytes,
            llc_bytes,
        }
    }
}

/// The L1 data, L2 and last-level cache sizes of CPU 0 in bytes, as Linux reports them.
fn sysfs_caches() -> (Option<u64>, Option<u64>, Option<u64>) {
    let dir = std::path::Path::new("/sys/devices/system/cpu/cpu0/cache");
    let (mut l1, mut l2) = (None, None);
    let mut llc: Option<(u64, u64)> = None;
    for index in 0..8 {
        let read =
            |f: &str| std::fs::read_to_string(dir.join(format!("index{index}")).join(f)).ok();
        let (Some(level), Some(size), Some(kind)) = (read("level"), read("size"), read("type"))
        else {
            continue;
        };
        let (Ok(level), Some(bytes)) = (level.trim().parse::<u64>(), cache_bytes(size.trim()))
        else {
            continue;
        };
        if kind.trim() == "Instruction" {
            continue;
        }
        match level {
            1 => l1 = Some(bytes),
            2 => l2 = Some(bytes),
            _ => {}
        }
        if llc.is_none_or(|(l, _)| level > l) {
            llc = Some((level, bytes));
        }
    }
    (l1, l2, llc.map(|(_, b)| b))
}

/// `512K`, `32768K`, `8M` as bytes.
fn cache_bytes(text: &str) -> Option<u64> {
    let (num, mult) = match text.chars().last()? {
        'K' => (&text[..text.len() - 1], 1 << 10),
        'M' => (&text[..text.len() - 1], 1 << 20),
        'G' => (&text[..text.len() - 1], 1 << 30),
        _ => (text, 1),
    };
    num.parse::<u64>().ok().map(|n| n * mult)
}

/// The estimate for one nest.
#[derive(Clone, Debug, PartialEq)]
pub struct NestCost {
    /// Statement instances.
    pub instances: f64,
    /// Instances of statements that update a scalar in place inside a loop (in-order chains).
    pub chain_steps: f64,
    /// Seconds of other statements' work that runs in the chains' shadow (fused into their
    /// loops), taken off the estimate.
    pub hidden_seconds: f64,
    /// Tiles (tasks).
    pub tiles: f64,
    /// Tiled dimensions.
    pub tile_dims: usize,
    /// Independent tiles available to the threads (see the module documentation).
    pub parallelism: f64,
    /// Bytes read from memory (misses in the last-level cache).
    pub memory_bytes: f64,
    /// Bytes read from the last-level cache (misses in L2).
    pub llc_bytes: f64,
    /// Bytes read from L2 (misses in L1).
    pub l2_bytes: f64,
    /// The estimated time, in seconds.
    pub seconds: f64,
}

/// The estimate for a whole schedule: its nests, and their sum.
#[derive(Clone, Debug, PartialEq)]
pub struct ScheduleCost {
    pub nests: Vec<NestCost>,
    pub seconds: f64,
}

impl ScheduleCost {
    /// The mean number of tiled dimensions over the statement instances.
    pub fn tiled_depth(&self) -> f64 {
        let instances: f64 = self.nests.iter().map(|n| n.instances).sum();
        let tiled: f64 = self
            .nests
            .iter()
            .map(|n| n.instances * n.tile_dims as f64)
            .sum();
        if instances > 0.0 {
            tiled / instances
        } else {
            0.0
        }
    }
}

impl std::fmt::Display for ScheduleCost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:.3e} s", self.seconds)?;
        for (k, n) in self.nests.iter().enumerate() {
            write!(
                f,
                "\n  N{k}: {} tiled dims, {:.3e} instances, {:.0} tiles, parallelism {:.1}, memory {:.3e} B, LLC {:.3e} B, L2 {:.3e} B, {:.3e} s",
                n.tile_dims, n.instances, n.tiles, n.parallelism, n.memory_bytes, n.llc_bytes, n.l2_bytes, n.seconds
            )?;
            if n.chain_steps > 0.0 {
                write!(
                    f,
                    " (chain steps {:.3e}, {:.3e} s of work hidden beside them)",
                    n.chain_steps, n.hidden_seconds
                )?;
            }
        }
        Ok(())
    }
}

/// The estimated cost of `sched` (a tiled schedule of `scop`, whose dependences are `deps`) on
/// `machine`.
///
/// The estimate is kept for the rest of the process ([`ESTIMATED`]): the fusion stage estimates
/// each candidate, and the spread search asks again for the chosen one before it changes any
/// tile size (deriche at LARGE: 75 ms on the compiler's critical path).
pub fn schedule_cost(
    scop: &Scop,
    deps: &Dependences,
    sched: &TiledSchedule,
    machine: &Machine,
) -> Result<ScheduleCost> {
    let kept =
        ESTIMATED.find(|(s, d, t, m), _| t == sched && m == machine && d == deps && s == scop);
    if let Some(cost) = kept {
        return Ok(cost);
    }
    let cost = estimate(scop, deps, sched, machine)?;
    ESTIMATED.insert(
        (scop.clone(), deps.clone(), sched.clone(), machine.clone()),
        cost.clone(),
    );
    Ok(cost)
}

/// The estimates [`schedule_cost`] made in this process, the latest 16, by their inputs.
static ESTIMATED: Memo<(Scop, Dependences, TiledSchedule, Machine), ScheduleCost> = Memo::new(16);

/// [`schedule_cost`], estimated.
fn estimate(
    scop: &Scop,
    deps: &Dependences,
    sched: &TiledSchedule,
    machine: &Machine,
) -> Result<ScheduleCost> {
    let ctx = Ctx::shared()?;
    let sets = ScopSets::parse(ctx, scop)?;
    let params = fixed_params(ctx, &sets.context)?;
    let domains = sets.domains.clone().intersect_params(params)?;
    let accesses = sets
        .reads
        .clone()
        .union(sets.writes.clone())?
        .intersect_domain(domains.clone())?;
    let elem: BTreeMap<String, u64> = scop
        .arrays
        .iter()
        .map(|a| (a.isl_name.clone(), element_bytes(&a.elem_type)))
        .collect();
    let parallel = parallel_tiles(scop, deps, sched)?;
    let mut nests = Vec::with_capacity(sched.nests.len());
    for (k, nest) in sched.nests.iter().enumerate() {
        let schedule = UnionMap::read(ctx, &nest.schedule)
            .map_err(|e| input_error(&format!("schedule of nest N{k}"), &nest.schedule, e))?
            .intersect_domain(domains.clone())?;
        let Some(first) = schedule.maps()?.into_iter().next() else {
            continue;
        };
        let walk = Walk {
            ctx,
            accesses: &accesses,
            elem: &elem,
            machine,
            n_dims: first.n_dims(Side::Out)?,
            tile_dims: nest.tile_sizes.len(),
        };
        let mut extents = Vec::new();
        let maps = schedule.maps()?;
        let mut stats = walk.block(schedule, 0, [false; 3], &mut extents)?;
        // Instances statement by statement: a dimension's middle value stands for each
        // statement's own range, not for the union's, where fused statements range over
        // different values of it (a skewed band: durbin's copy at `k + i` beside its update at
        // `1 + i` spans twice the values that either does, and the walk counted twice the work).
        let mut instances = 0.0;
        for map in &maps {
            instances += walk.instances(UnionMap::from_map(map.clone())?)?;
        }
        stats.instances = instances;
        let (chains, hidden) = walk.chains(scop, &maps)?;
        // No cache level loads more than a line for every access of every instance: the bound
        // on blocks whose bounding boxes overstate what they touch (a skewed block's diagonal).
        let per_instance = nest
            .statements
            .iter()
            .filter_map(|s| scop.statements.get(s.index()))
            .map(|s| s.accesses.len() as f64 * CACHE_LINE)
            .fold(0.0, f64::max);
        for traffic in &mut stats.traffic {
            *traffic = traffic.min(stats.instances * per_instance);
        }
        let tiles = stats.tiles.max(1.0);
        let par = &parallel[k];
        let parallelism = match par.parallel.iter().position(|&p| p) {
            _ if walk.tile_dims == 0 => 1.0,
            Some(_) if par.wavefront => {
                tiles
                    / (extents.first().copied().unwrap_or(1.0)
                        + extents.get(1).copied().unwrap_or(1.0)
                        - 1.0)
                        .max(1.0)
            }
            Some(j) => extents.get(j).copied().unwrap_or(1.0),
            None => 1.0,
        }
        .max(1.0);
        let p = machine.threads as f64;
        let speedup = p * parallelism / (parallelism + p - 1.0);
        let seconds = stats.traffic[2] / (MEMORY_BANDWIDTH * speedup.min(MAX_MEMORY_THREADS))
            + (stats.instances * SECONDS_PER_INSTANCE
                + chains * (SECONDS_PER_CHAIN_STEP - SECONDS_PER_INSTANCE)
                - hidden
                + stats.traffic[1] / LLC_BANDWIDTH
                + stats.traffic[0] / L2_BANDWIDTH
                + tiles * SECONDS_PER_TASK)
                / speedup;
        nests.push(NestCost {
            instances: stats.instances,
            chain_steps: chains,
            hidden_seconds: hidden,
            tiles,
            tile_dims: walk.tile_dims,
            parallelism,
            memory_bytes: stats.traffic[2],
            llc_bytes: stats.traffic[1],
            l2_bytes: stats.traffic[0],
            seconds,
        });
    }
    let seconds = nests.iter().map(|n| n.seconds).sum();
    Ok(ScheduleCost { nests, seconds })
}

/// The parameter values of the estimate, as a parameter set, or an error when the context
/// excludes them.
pub(crate) fn fixed_params<'c>(ctx: &'c Ctx, context: &Set<'c>) -> Result<Set<'c>> {
    let values: Vec<(String, i64)> = context
        .param_names()?
        .into_iter()
        .map(|n| (n, PARAM_VALUE))
        .collect();
    let text = params_text(&values);
    let params = Set::read(ctx, &text)?;
    if context.clone().intersect(params.clone())?.is_empty()? {
        return Err(Error::Unsupported(format!(
            "the SCoP's context excludes the estimate's parameter values ({text})"
        )));
    }
    Ok(params)
}

/// The parameter set `[n, m] -> { : n = 1000 and m = 1000 }` of `values` (`{ : }` for none).
pub(crate) fn params_text(values: &[(String, i64)]) -> String {
    if values.is_empty() {
        return "{ : }".to_string();
    }
    let names: Vec<&str> = values.iter().map(|(n, _)| n.as_str()).collect();
    let fixed: Vec<String> = values.iter().map(|(n, v)| format!("{n} = {v}")).collect();
    format!("[{}] -> {{ : {} }}", names.join(", "), fixed.join(" and "))
}

/// One nest's schedule walked block by block (see the module documentation).
struct Walk<'a, 'c> {
    ctx: &'c Ctx,
    accesses: &'a UnionMap<'c>,
    elem: &'a BTreeMap<String, u64>,
    machine: &'a Machine,
    n_dims: usize,
    tile_dims: usize,
}

/// What a block holds and costs.
#[derive(Default)]
struct BlockStats {
    instances: f64,
    tiles: f64,
    /// Bytes loaded into L1, into L2 and into the last-level cache.
    traffic: [f64; 3],
    /// The block's footprint, where it was measured (some enclosing cache did not fit).
    footprint: Option<f64>,
}

impl<'c> Walk<'_, 'c> {
    /// The instances of `schedule` (each statement walked through its own ranges).
    fn instances(&self, schedule: UnionMap<'c>) -> Result<f64> {
        Ok(self
            .block(schedule, 0, [true; 3], &mut Vec::new())?
            .instances)
    }

    /// The instances of the nest's in-order chains (statements of `scop` that update a scalar in
    /// place inside a loop, each instance waiting for the last), and the seconds of work of
    /// other statements that run in the same iterations of a chain's innermost loop, up to the
    /// chain's own time: out-of-order execution runs them while the chain waits on its adder
    /// (durbin's update of `z` fused with the next step's sum ran 5.2 ms against 6.3 ms apart,
    /// the sum alone 4.0). Each statement instance is counted beside one chain at most.
    /// `maps` are the nest's schedule, one map per statement.
    fn chains(&self, scop: &Scop, maps: &[crate::isl::Map<'c>]) -> Result<(f64, f64)> {
        let chain = |m: &crate::isl::Map<'c>| {
            m.tuple_name(Side::In)
                .and_then(|n| stmt_of_name(&n))
                .is_some_and(|s| crate::retime::chain_scalar(scop, s.index()).is_some())
        };
        // The longest chains first: a short one (a last term added outside the loop) would take
        // the loop's statements for itself.
        let mut chains = Vec::new();
        for t in maps.iter().filter(|m| chain(m)) {
            chains.push((self.instances(UnionMap::from_map(t.clone())?)?, t));
        }
        chains.sort_by(|a, b| b.0.total_cmp(&a.0));
        let mut steps = 0.0;
        let mut hidden = 0.0;
        let mut beside = UnionSet::empty(self.ctx)?;
        for (t_steps, t) in chains {
            steps += t_steps;
            // The chain's innermost loop: its last dimension that is not constant.
            let mut inner = None;
            for d in (0..self.n_dims).rev() {
                if t.plain_fixed_out(d)?.is_none() {
                    inner = Some(d);
                    break;
                }
            }
            let Some(inner) = inner else { continue };
            let prefix = UnionMap::read(
                self.ctx,
                &projection(self.n_dims, "", &(0..=inner).collect::<Vec<_>>()),
            )?;
            let iterations = UnionMap::from_map(t.clone())?
                .apply_range(prefix.clone())?
                .range()?;
            let mut work = 0.0;
            for a in maps.iter().filter(|m| !chain(m)) {
                let a = UnionMap::from_map(a.clone())?;
                let same = a
                    .clone()
                    .apply_range(prefix.clone())?
                    .intersect_range(iterations.clone())?
                    .domain()?
                    .subtract(beside.clone())?;
                if same.is_empty()? {
                    continue;
                }
                work += self.instances(a.intersect_domain(same.clone())?)? * SECONDS_PER_INSTANCE;
                beside = beside.union(same)?;
            }
            hidden += work.min(t_steps * SECONDS_PER_CHAIN_STEP);
        }
        Ok((steps, hidden))
    }

    /// The block of `schedule` (already restricted to its first `level` coordinates): its
    /// instances, tiles and traffic, given whether an enclosing block already fits L1, L2 and the
    /// last-level cache (`fits`). `extents` collects the extent of each dimension along
    /// the first path walked.
    fn block(
        &self,
        schedule: UnionMap<'c>,
        level: usize,
        fits: [bool; 3],
        extents: &mut Vec<f64>,
    ) -> Result<BlockStats> {
        let mut fits = fits;
        let mut traffic = [0.0; 3];
        // Caches that the block overflows by less than its own size: its footprint, and by how
        // much (0 to 1) it overflows.
        let mut nearly: [Option<(f64, f64)>; 3] = [None; 3];
        let mut footprint = None;
        if fits.iter().any(|f| !f) {
            let bytes = self.footprint(&schedule)?;
            footprint = Some(bytes);
            let capacity = self.capacity();
            let overflows = (0..3).any(|c| !fits[c] && bytes > capacity[c] as f64);
            let one_loop =
                level == self.n_dims || (overflows && self.one_loop(&schedule, level)?);
            for c in 0..3 {
                let over = bytes / capacity[c] as f64;
                if !fits[c] && over > 1.0 && over < 2.0 && !one_loop {
                    nearly[c] = Some((bytes, over - 1.0));
                }
                // The first block that fits cache `c` is loaded into it once; so is one loop
                // (the innermost) whose data fits nowhere: it walks its rows in order, each
                // line loaded once however long the rows are.
                if !fits[c] && (bytes <= capacity[c] as f64 || one_loop) {
                    traffic[c] = bytes;
                    fits[c] = true;
                }
            }
        }
        let mut stats = BlockStats {
            instances: 0.0,
            tiles: 0.0,
            traffic,
            footprint,
        };
        if level == self.n_dims {
            stats.instances = 1.0;
            stats.tiles = 1.0;
            return Ok(stats);
        }
        // Statements whose schedule is constant on this dimension (a position in a sequence, or
        // an initialization in the first iteration of a fused loop) are followed value by value;
        // the others form one loop, walked through its middle iteration.
        let mut constant: BTreeMap<i64, UnionMap<'c>> = BTreeMap::new();
        let mut varying = UnionMap::empty(self.ctx)?;
        for map in schedule.maps()? {
            match map.plain_fixed_out(level)? {
                Some(v) => {
                    let map = UnionMap::from_map(map)?;
                    let map = match constant.remove(&v) {
                        Some(others) => others.union(map)?,
                        None => map,
                    };
                    constant.insert(v, map);
                }
                None => varying = varying.union(UnionMap::from_map(map)?)?,
            }
        }
        if constant.len() as i64 > MAX_BRANCHES {
            constant.clear();
            varying = schedule;
        }
        // Each child, its weight, and for a loop's middle iteration the next one.
        let mut children: Vec<(UnionMap<'c>, f64, Option<UnionMap<'c>>)> =
            constant.into_values().map(|c| (c, 1.0, None)).collect();
        let mut extent = children.len() as f64;
        if !varying.is_empty()? {
            let range = varying.clone().range()?.sets()?.into_iter().next();
            if let Some((lo, hi)) = range.map(|r| r.dim_range(level)).transpose()?.flatten() {
                let fixed = |v: i64| -> Result<UnionMap<'c>> {
                    let dims: Vec<String> = (0..self.n_dims).map(|d| format!("x{d}")).collect();
                    let set = UnionSet::read(
                        self.ctx,
                        &format!("{{ [{}] : x{level} = {v} }}", dims.join(", ")),
                    )?;
                    varying.clone().intersect_range(set)
                };
                let mut at = lo + (hi - lo) / 2;
                let mut child = fixed(at)?;
                if child.is_empty()? {
                    at = lo;
                    child = fixed(lo)?;
                }
                extent = (hi - lo + 1) as f64;
                let next = if extent > 1.0 {
                    Some(fixed(at + 1)?)
                } else {
                    None
                };
                children.push((child, extent, next));
            }
        }
        if extents.len() == level {
            extents.push(extent);
        }
        for (child, weight, next) in children {
            let inner = self.block(child.clone(), level + 1, fits, extents)?;
            let reloaded = match (next, inner.footprint) {
                (Some(next), Some(one)) => self.reloaded(&child, next, one, fits)?,
                _ => [None; 3],
            };
            stats.instances += weight * inner.instances;
            stats.tiles += if level < self.tile_dims {
                weight * inner.tiles
            } else {
                0.0
            };
            for ((traffic, inner), reloaded) in
                stats.traffic.iter_mut().zip(inner.traffic).zip(reloaded)
            {
                // The loop's iterations after the first load only what the one before did not
                // have, where two of them fit the cache together (`Walk::reloaded`).
                *traffic += match reloaded {
                    Some(new) => inner + (weight - 1.0) * new,
                    None => weight * inner,
                };
            }
        }
        if level >= self.tile_dims {
            stats.tiles = 1.0;
        }
        // A block a little larger than a cache keeps most of its data there: its traffic goes
        // from its footprint (as if it fitted) to its children's (as if nothing of it stayed)
        // as it grows from one to two capacities, not at once.
        for (traffic, nearly) in stats.traffic.iter_mut().zip(nearly) {
            if let Some((bytes, t)) = nearly {
                *traffic = (1.0 - t) * bytes + t * *traffic;
            }
        }
        Ok(stats)
    }

    /// Per cache level that the enclosing block does not fit (`fits`): where one iteration
    /// `child` of a loop (its footprint `one`) fits the cache and so does it together with the
    /// next one, `next`, the bytes the next one loads that `child` did not (the footprint of
    /// both less `child`'s),
    /// which the cache still holds from `child`: the vectors that every row of a matrix-vector
    /// product reads (atax's `x` and `y` beside each row of `A`) are loaded for the first row
    /// only, a row-major matrix walked by columns loads a line for every eighth column. `None`
    /// where the enclosing block fits, `child` does not, or the two iterations do not together:
    /// each iteration is then charged in full.
    fn reloaded(
        &self,
        child: &UnionMap<'c>,
        next: UnionMap<'c>,
        one: f64,
        fits: [bool; 3],
    ) -> Result<[Option<f64>; 3]> {
        let mut out = [None; 3];
        if fits.iter().all(|&f| f) || next.is_empty()? {
            return Ok(out);
        }
        let capacity = self.capacity();
        let mut two = None;
        // Not L1: its blocks are a tile's rows, whose reuse from one row to the next the tile
        // code's order decides (doitgen's fused tiles reload from L2 as charged without it).
        for c in 1..3 {
            if fits[c] || one > capacity[c] as f64 {
                continue;
            }
            let both = match two {
                Some(b) => b,
                None => *two.insert(self.footprint(&child.clone().union(next.clone())?)?),
            };
            if both <= capacity[c] as f64 {
                out[c] = Some((both - one).max(0.0));
            }
        }
        Ok(out)
    }

    /// Bytes of L1, L2 and the last-level cache.
    fn capacity(&self) -> [u64; 3] {
        [
            self.machine.l1_bytes,
            self.machine.l2_bytes,
            self.machine.llc_bytes,
        ]
    }

    /// Whether the block of `schedule` (its first `level` coordinates fixed) is one loop: no
    /// dimension after `level` takes more than one value for any one statement.
    fn one_loop(&self, schedule: &UnionMap<'c>, level: usize) -> Result<bool> {
        for map in schedule.maps()? {
            let set = UnionMap::from_map(map)?.range()?;
            let Some(set) = set.sets()?.into_iter().next() else {
                continue;
            };
            for d in level + 1..set.n_dims()? {
                match set.dim_range(d)? {
                    Some((lo, hi)) if lo == hi => {}
                    _ => return Ok(false),
                }
            }
        }
        Ok(true)
    }

    /// Bytes of the bounding boxes of the elements each array's accesses touch in the block.
    fn footprint(&self, schedule: &UnionMap<'c>) -> Result<f64> {
        let touched = self
            .accesses
            .clone()
            .intersect_domain(schedule.clone().domain()?)?
            .range()?;
        box_bytes(&touched, self.elem)
    }
}

/// Bytes of the bounding box of each array's elements in `touched`, its rows (the last,
/// contiguous dimension) counted in whole cache lines: a column of a row-major matrix costs a
/// line per element. `elem` gives each array's element size (8 when unknown).
fn box_bytes(touched: &UnionSet<'_>, elem: &BTreeMap<String, u64>) -> Result<f64> {
    Ok(box_bytes_by_array(touched, elem, true)?.values().sum())
}

/// [`box_bytes`] of each array in `touched`, by its name; the last dimension's extent rounded up
/// to whole cache lines where `lines` says so, the box's own bytes otherwise.
fn box_bytes_by_array(
    touched: &UnionSet<'_>,
    elem: &BTreeMap<String, u64>,
    lines: bool,
) -> Result<BTreeMap<String, f64>> {
    let mut bytes = BTreeMap::new();
    for set in touched.sets()? {
        let name = set.tuple_name().unwrap_or_default();
        let elem = elem.get(&name).copied().unwrap_or(8) as f64;
        let n = set.n_dims()?;
        let mut volume = elem;
        for d in 0..n {
            if let Some((lo, hi)) = set.dim_range(d)? {
                let extent = (hi - lo + 1) as f64;
                volume *= match lines && d + 1 == n {
                    true => (extent * elem / CACHE_LINE).ceil() * CACHE_LINE / elem,
                    false => extent,
                };
            }
        }
        *bytes.entry(name).or_insert(0.0) += volume;
    }
    Ok(bytes)
}

/// The range of each of the first `members` dimensions of `band` (a band's subtree schedule, not
/// yet tiled) over the SCoP's instances, and the arrays those instances access, each as its
/// rank, element bytes and the number of values its last subscript takes (its rows' length; 1
/// for a scalar), at the cost model's parameter values. `None` when the parameters cannot take
/// [`PARAM_VALUE`], or a member or a last subscript is unbounded.
pub fn band_rows(scop: &Scop, band: &UnionMap<'_>, members: usize) -> Result<Option<BandRows>> {
    let sets = ScopSets::parse(band.ctx(), scop)?;
    let Some((band, ranges)) = fixed_band(&sets, band, members)? else {
        return Ok(None);
    };
    let reached = sets
        .reads
        .clone()
        .union(sets.writes.clone())?
        .intersect_domain(band.domain()?)?
        .range()?;
    let mut rows = Vec::new();
    for set in reached.sets()? {
        let name = set.tuple_name();
        let Some(array) = scop
            .arrays
            .iter()
            .find(|a| Some(&a.isl_name) == name.as_ref())
        else {
            continue;
        };
        let n = set.n_dims()?;
        let length = match n {
            0 => 1,
            _ => match set.dim_range(n - 1)? {
                Some((l, h)) => h - l + 1,
                None => return Ok(None),
            },
        };
        rows.push((n, element_bytes(&array.elem_type), length));
    }
    Ok(Some(BandRows { ranges, rows }))
}

/// What [`band_rows`] finds of a band.
pub struct BandRows {
    /// The smallest and largest value of each member.
    pub ranges: Vec<(i64, i64)>,
    /// Each accessed array's rank, element bytes and rows' length.
    pub rows: Vec<(usize, u64, i64)>,
}

/// A band restricted to the instances at the cost model's parameter values, and the range of each
/// of its members there ([`fixed_band`]).
type FixedBand<'c> = (UnionMap<'c>, Vec<(i64, i64)>);

/// `band` restricted to the instances at the cost model's parameter values, and the range of
/// each of its first `members` dimensions there ([`band_rows`], [`BandTiles::new`]).
fn fixed_band<'c>(
    sets: &ScopSets<'c>,
    band: &UnionMap<'c>,
    members: usize,
) -> Result<Option<FixedBand<'c>>> {
    let Ok(params) = fixed_params(band.ctx(), &sets.context) else {
        return Ok(None);
    };
    let domains = sets.domains.clone().intersect_params(params)?;
    let band = band.clone().intersect_domain(domains)?;
    let mut ranges = vec![(i64::MAX, i64::MIN); members];
    for set in band.clone().range()?.sets()? {
        if set.n_dims()? < members {
            return Ok(None);
        }
        for (m, range) in ranges.iter_mut().enumerate() {
            match set.dim_range(m)? {
                Some((l, h)) => *range = (range.0.min(l), range.1.max(h)),
                None => return Ok(None),
            }
        }
    }
    Ok(Some((band, ranges)))
}

/// What one tile of a band touches ([`BandTiles::boxes`]).
#[derive(Clone, Debug, PartialEq)]
pub struct TileBoxes {
    /// Bytes of the data the tile keeps for reuse, as [`schedule_cost`] counts a block's: the
    /// bounding boxes of what the accesses of its instances reach, without the arrays that the
    /// band streams (each element reached by one instance of the band at most: a
    /// matrix-vector product's matrix, which no cache size makes cheaper).
    pub reused_bytes: f64,
    /// The shortest contiguous run, in bytes, of a streamed array in the tile (the extent of
    /// the last dimension of its box, times its element size); `None` when the band streams no
    /// array of rank 1 or more.
    pub shortest_run: Option<f64>,
}

/// A band's tiles at the cost model's parameter values, to ask what one tile of given sizes
/// touches ([`BandTiles::boxes`]); what does not depend on the sizes (the accesses, the streamed
/// arrays, the members' ranges) is computed once.
pub struct BandTiles<'c> {
    ctx: &'c Ctx,
    band: UnionMap<'c>,
    accesses: UnionMap<'c>,
    streamed: Vec<String>,
    elem: BTreeMap<String, u64>,
    lo: Vec<i64>,
    extents: Vec<i64>,
    widths: Vec<usize>,
    /// Whether the members' values fill their bounding box (no triangle): then every tile at
    /// the smallest values is a full one.
    rectangular: bool,
    /// The statements' instances to the band's members alone.
    to_members: UnionMap<'c>,
    /// Whether each statement's values of the members fill their own bounding box: the band's
    /// values may fill the box while a statement's make a triangle in it (symm's fused band at
    /// EXTRALARGE). Asked by [`BandTiles::panel_bytes`] only, so found when first asked.
    each_rectangular: std::cell::OnceCell<bool>,
    /// Whether the SCoP has no parameters: the extents are those of every run, not the
    /// estimate's.
    constant: bool,
}

impl<'c> BandTiles<'c> {
    /// `band` maps the statements' instances to the band's `members` first (a band's subtree
    /// schedule, not yet tiled). `None` when the parameters cannot take [`PARAM_VALUE`] or a
    /// member is unbounded.
    pub fn new(scop: &Scop, band: &UnionMap<'c>, members: usize) -> Result<Option<Self>> {
        let ctx = band.ctx();
        let sets = ScopSets::parse(ctx, scop)?;
        let Some((band, ranges)) = fixed_band(&sets, band, members)? else {
            return Ok(None);
        };
        let lo: Vec<i64> = ranges.iter().map(|r| r.0).collect();
        let hi: Vec<i64> = ranges.iter().map(|r| r.1).collect();
        let mut widths = Vec::new();
        for set in band.clone().range()?.sets()? {
            let n = set.n_dims()?;
            if !widths.contains(&n) {
                widths.push(n);
            }
        }
        let accesses = sets.reads.clone().union(sets.writes.clone())?;
        // Each array's accesses by the whole band, to tell the streamed ones.
        let mut by_array: BTreeMap<String, UnionMap<'c>> = BTreeMap::new();
        for map in accesses
            .clone()
            .intersect_domain(band.clone().domain()?)?
            .maps()?
        {
            if let Some(array) = map.tuple_name(Side::Out) {
                let map = UnionMap::from_map(map)?;
                let joined = match by_array.remove(&array) {
                    Some(other) => other.union(map)?,
                    None => map,
                };
                by_array.insert(array, joined);
            }
        }
        // Statement instances to the band's members alone (the statements' positions below them
        // dropped), to tell elements that statements fused in the band read at the same point.
        let members_only: Vec<String> = widths
            .iter()
            .map(|&n| {
                let o = |k: usize| {
                    (0..k)
                        .map(|d| format!("o{d}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                format!("[{}] -> [{}]", o(n), o(members))
            })
            .collect();
        let to_members = band.clone().apply_range(UnionMap::read(
            ctx,
            &format!("{{ {} }}", members_only.join("; ")),
        )?)?;
        let mut streamed = Vec::new();
        for (array, reached) in by_array {
            if reached.clone().reverse()?.is_single_valued()?
                || read_once_per_point(&reached, &to_members)?
            {
                streamed.push(array);
            }
        }
        let elem = scop
            .arrays
            .iter()
            .map(|a| (a.isl_name.clone(), element_bytes(&a.elem_type)))
            .collect();
        let extents = lo.iter().zip(&hi).map(|(l, h)| h - l + 1).collect();
        let rectangular = fills_box(to_members.clone().range()?, &ranges)?;
        let constant = sets.context.param_names()?.is_empty();
        Ok(Some(BandTiles {
            rectangular,
            to_members,
            each_rectangular: std::cell::OnceCell::new(),
            constant,
            ctx,
            band,
            accesses,
            streamed,
            elem,
            lo,
            extents,
            widths,
        }))
    }

    /// The number of values each band member takes.
    pub fn extents(&self) -> &[i64] {
        &self.extents
    }

    /// Whether the members' values fill their bounding box (no triangle).
    pub fn rectangular(&self) -> bool {
        self.rectangular
    }

    /// The bytes of the smallest element of the SCoP's arrays (8 when it has none).
    pub fn smallest_element(&self) -> u64 {
        self.elem.values().copied().min().unwrap_or(8).max(1)
    }

    /// Whether [`BandTiles::extents`] are those of every run (a SCoP without parameters), not
    /// the ones at the estimate's parameter values.
    pub fn constant_extents(&self) -> bool {
        self.constant
    }

    /// What one tile, `sizes[m]` values of member `m` long, touches: in a band whose members'
    /// values fill a box, the tile at their smallest values (elsewhere the bounding boxes of a
    /// tile that reads an array transposed, `A[i][j]` and `A[j][i]`, grow with its distance from
    /// the diagonal, and the sizes chosen from them would change for that); otherwise the largest of what the
    /// tiles at a few places touch, each member starting at its smallest value or half-way along
    /// it (every combination, for bands of at most [`SAMPLED_MEMBERS`] members). The tile at
    /// the smallest values alone is a partial one in a triangular band: trisolv's `x[i] -= L[i][j] * x[j]` (`j < i`) reaches 63 elements of
    /// `L`'s rows there whatever the size along `j`, so runs looked as short at `64, 512` as at
    /// `64, 64`, and its tiles stayed `64, 64`.
    pub fn boxes(&self, sizes: &[i64]) -> Result<TileBoxes> {
        let members = sizes.len().min(self.lo.len());
        let places: usize = if self.rectangular || members > SAMPLED_MEMBERS {
            1
        } else {
            1 << members
        };
        let mut out: Option<TileBoxes> = None;
        for place in 0..places {
            let starts: Vec<i64> = (0..members)
                .map(|m| match place & (1 << m) {
                    0 => self.lo[m],
                    _ => self.lo[m] + self.extents[m] / 2,
                })
                .collect();
            let Some(found) = self.box_at(sizes, &starts)? else {
                continue;
            };
            out = Some(match out {
                None => found,
                Some(o) => TileBoxes {
                    reused_bytes: o.reused_bytes.max(found.reused_bytes),
                    shortest_run: match (o.shortest_run, found.shortest_run) {
                        (Some(a), Some(b)) => Some(a.max(b)),
                        (a, b) => a.or(b),
                    },
                },
            });
        }
        Ok(out.unwrap_or(TileBoxes {
            reused_bytes: 0.0,
            shortest_run: None,
        }))
    }

    /// The bytes of the operands that a tile of `sizes` reads alike at every value of member
    /// `rows`, the tile at the members' smallest values in a rectangular band: the arrays, other
    /// than streamed ones, of rank 2 or more whose box (its elements, not its cache lines) stays
    /// the same when the tile takes one value of `rows` (gemm's `B[k][j]` along `i`: the panel its register kernel copies, see
    /// `crate::kernel`). `None` when no array is such, or when a statement's values of the
    /// members do not fill their box (a triangle: the tile's copy serves fewer rows there).
    pub fn panel_bytes(&self, sizes: &[i64], rows: usize) -> Result<Option<f64>> {
        if rows >= sizes.len() || !self.each_rectangular()? {
            return Ok(None);
        }
        let mut one_row = sizes.to_vec();
        one_row[rows] = 1;
        let (Some((all, _)), Some((one, _))) = (
            self.touched_at(sizes, &self.lo)?,
            self.touched_at(&one_row, &self.lo)?,
        ) else {
            return Ok(None);
        };
        let ranks: BTreeMap<String, usize> = all
            .sets()?
            .into_iter()
            .map(|set| Ok((set.tuple_name().unwrap_or_default(), set.n_dims()?)))
            .collect::<Result<_>>()?;
        let one = box_bytes_by_array(&one, &self.elem, false)?;
        let panel: Vec<f64> = box_bytes_by_array(&all, &self.elem, false)?
            .into_iter()
            .filter(|(name, bytes)| {
                ranks.get(name).is_some_and(|&r| r >= 2) && one.get(name) == Some(bytes)
            })
            .map(|(_, bytes)| bytes)
            .collect();
        Ok((!panel.is_empty()).then(|| panel.iter().sum()))
    }

    /// Whether each statement's instances alone fill the box of their values of the members (a
    /// statement over fewer loops takes one value of the others); see `each_rectangular`.
    fn each_rectangular(&self) -> Result<bool> {
        if let Some(&known) = self.each_rectangular.get() {
            return Ok(known);
        }
        let members = self.lo.len();
        let mut each = true;
        for map in self.to_members.maps()? {
            let range = UnionMap::from_map(map)?.range()?;
            let mut own = Vec::with_capacity(members);
            for set in range.clone().sets()? {
                for m in 0..members {
                    own.push(set.dim_range(m)?);
                }
            }
            each &= match own.into_iter().collect::<Option<Vec<_>>>() {
                Some(own) => own.len() == members && fills_box(range, &own)?,
                None => false,
            };
        }
        Ok(*self.each_rectangular.get_or_init(|| each))
    }

    /// What the tile whose member `m` takes `sizes[m]` values from `starts[m]` touches; `None`
    /// when it holds no instance.
    fn box_at(&self, sizes: &[i64], starts: &[i64]) -> Result<Option<TileBoxes>> {
        let Some((touched, shortest_run)) = self.touched_at(sizes, starts)? else {
            return Ok(None);
        };
        Ok(Some(TileBoxes {
            reused_bytes: box_bytes(&touched, &self.elem)?,
            shortest_run,
        }))
    }

    /// The elements, other than of streamed arrays, that the tile whose member `m` takes
    /// `sizes[m]` values from `starts[m]` touches, and the shortest run of a streamed array in
    /// it (see [`TileBoxes`]); `None` when it holds no instance.
    fn touched_at(
        &self,
        sizes: &[i64],
        starts: &[i64],
    ) -> Result<Option<(UnionSet<'c>, Option<f64>)>> {
        let pieces: Vec<String> = self
            .widths
            .iter()
            .map(|&n| {
                let o: Vec<String> = (0..n).map(|d| format!("o{d}")).collect();
                let bounds: Vec<String> = sizes
                    .iter()
                    .zip(starts)
                    .enumerate()
                    .map(|(m, (&t, &lo))| format!("{lo} <= o{m} < {}", lo.saturating_add(t)))
                    .collect();
                format!("[{}] : {}", o.join(", "), bounds.join(" and "))
            })
            .collect();
        let tile = UnionSet::read(self.ctx, &format!("{{ {} }}", pieces.join("; ")))?;
        let instances = self.band.clone().intersect_range(tile)?.domain()?;
        if instances.is_empty()? {
            return Ok(None);
        }
        let mut touched = UnionSet::empty(self.ctx)?;
        let mut shortest_run: Option<f64> = None;
        for set in self
            .accesses
            .clone()
            .intersect_domain(instances)?
            .range()?
            .sets()?
        {
            let name = set.tuple_name();
            if !name.as_ref().is_some_and(|n| self.streamed.contains(n)) {
                touched = touched.union(UnionSet::from_set(set)?)?;
                continue;
            }
            let n = set.n_dims()?;
            if n == 0 {
                continue;
            }
            if let Some((l, h)) = set.dim_range(n - 1)? {
                let bytes = name.and_then(|n| self.elem.get(&n).copied()).unwrap_or(8) as f64;
                let run = (h - l + 1) as f64 * bytes;
                shortest_run = Some(shortest_run.map_or(run, |r| r.min(run)));
            }
        }
        Ok(Some((touched, shortest_run)))
    }
}

/// Whether `range` (points of one or more spaces, at fixed parameter values) holds every point
/// of the box whose dimension `m` runs over `bounds[m]`.
fn fills_box(range: UnionSet<'_>, bounds: &[(i64, i64)]) -> Result<bool> {
    let o: Vec<String> = (0..bounds.len()).map(|m| format!("o{m}")).collect();
    let within: Vec<String> = bounds
        .iter()
        .zip(&o)
        .map(|((lo, hi), o)| format!("{lo} <= {o} <= {hi}"))
        .collect();
    // Compared under the same parameter values (the band's are fixed, `fixed_band`).
    let bounding = UnionSet::read(
        range.ctx(),
        &format!("{{ [{}] : {} }}", o.join(", "), within.join(" and ")),
    )?
    .intersect_params(range.clone().params()?)?;
    range.is_equal(&bounding)
}

/// [`BandTiles::boxes`] looks at tiles in every combination of places for bands of at most this
/// many members (`2^members` tiles).
pub const SAMPLED_MEMBERS: usize = 3;

/// Whether the elements that `reached` (instances to elements of one array) touches are each
/// touched by one instance per statement, all at the same point of the band (`to_members`):
/// statements fused in one band that read the same elements (bicg's two products over `A`
/// under `Fuse::Reuse`) stream them once between them.
fn read_once_per_point<'c>(reached: &UnionMap<'c>, to_members: &UnionMap<'c>) -> Result<bool> {
    for map in reached.maps()? {
        if !UnionMap::from_map(map)?.reverse()?.is_single_valued()? {
            return Ok(false);
        }
    }
    reached
        .clone()
        .reverse()?
        .apply_range(to_members.clone())?
        .is_single_valued()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{dependences, schedule, ScheduleConfig};

    fn machine(l2_bytes: u64, llc_bytes: u64) -> Machine {
        Machine {
            threads: 2,
            l1_bytes: l2_bytes / 8,
            l2_bytes,
            llc_bytes,
        }
    }

    #[test]
    fn tiles_take_a_quarter_of_l2_within_bounds() {
        assert_eq!(machine(2 << 20, 32 << 20).tile_footprint(), 128 << 10);
        assert_eq!(machine(512 << 10, 32 << 20).tile_footprint(), 128 << 10);
        assert_eq!(machine(256 << 10, 32 << 20).tile_footprint(), 64 << 10);
        assert_eq!(machine(64 << 10, 32 << 20).tile_footprint(), 32 << 10);
        assert_eq!(machine(64 << 20, 32 << 20).tile_footprint(), 128 << 10);
    }

    #[test]
    fn cache_sizes_read_as_linux_prints_them() {
        assert_eq!(cache_bytes("512K"), Some(512 << 10));
        assert_eq!(cache_bytes("32M"), Some(32 << 20));
        assert_eq!(cache_bytes("4096"), Some(4096));
        assert_eq!(cache_bytes("lots"), None);
    }

    #[test]
    fn the_walk_counts_every_instance_of_rectangular_nests() {
        // gemm at MINI: C[i][j] *= beta (20 x 25) and C[i][j] += ... (20 x 30 x 25).
        let scop = crate::polybench_scop("gemm");
        let deps = dependences(&scop).unwrap();
        for tiles in [vec![5], vec![10, 5, 2], vec![64]] {
            let cfg = ScheduleConfig {
                tile_sizes: Some(tiles.clone()),
                ..ScheduleConfig::default()
            };
            let (sched, _) = schedule(&scop, &deps, &cfg).unwrap();
            let cost = schedule_cost(&scop, &deps, &sched, &machine(512 << 10, 4 << 20)).unwrap();
            let instances: f64 = cost.nests.iter().map(|n| n.instances).sum();
            assert_eq!(
                instances,
                (20 * 25 + 20 * 30 * 25) as f64,
                "tiles {tiles:?}: {cost}"
            );
        }
    }

    #[test]
    fn work_beside_a_chain_is_hidden_and_a_skewed_band_counts_each_statement_once() {
        // durbin at MINI (N = 40) retimed: the sum (a chain of 40 * 39 / 2 - 39 = 741
        // additions, k + 1 from 2 to 39) beside the update of `z` in one loop under `smart`
        // (whose band is skewed: the copy at `k + i`), apart under `min`. The statements are the
        // same, so are their instances (the walk counted the skewed band's twice); the update
        // (780 instances) hides behind the chain up to the chain's time. (At this size the
        // fused band is tiled in 40 tasks, which cost more than the work: no ranking here.)
        let scop = crate::retime_reductions(&crate::polybench_scop("durbin"))
            .unwrap()
            .expect("retimed")
            .scop;
        let deps = dependences(&scop).unwrap();
        let cost = |fuse| {
            let cfg = ScheduleConfig {
                fuse,
                ..ScheduleConfig::default()
            };
            let (sched, _) = schedule(&scop, &deps, &cfg).unwrap();
            schedule_cost(&scop, &deps, &sched, &machine(512 << 10, 4 << 20)).unwrap()
        };
        let (fused, apart) = (cost(crate::Fuse::Smart), cost(crate::Fuse::Min));
        let sum = |c: &ScheduleCost, f: fn(&NestCost) -> f64| c.nests.iter().map(f).sum::<f64>();
        // The walk takes a triangle's middle row for its mean: close, not exact, at MINI.
        let near = |got: f64, want: f64| (got - want).abs() <= 0.05 * want;
        // The sum, its last terms, the update and the copy, 3 statements before the loop and 4
        // in each step (`beta`, `sum = 0`, `alpha`, `y[k]`).
        let want = (741 + 39 + 780 + 780 + 3 + 39 * 4) as f64;
        for c in [&fused, &apart] {
            assert!(near(sum(c, |n| n.instances), want), "{c}");
            assert!(near(sum(c, |n| n.chain_steps), (741 + 39) as f64), "{c}");
        }
        assert_eq!(sum(&apart, |n| n.hidden_seconds), 0.0, "{apart}");
        let hidden = sum(&fused, |n| n.hidden_seconds);
        // At least the update's work hides, up to the time of the chain steps it runs beside.
        let chain = 741.0 * SECONDS_PER_CHAIN_STEP;
        let update = 780.0 * SECONDS_PER_INSTANCE;
        assert!(
            hidden >= 0.95 * update.min(chain) && hidden <= 1.05 * chain,
            "{hidden} s hidden: {fused}"
        );
    }

    #[test]
    fn data_that_fits_the_caches_is_loaded_once() {
        // gemm at MINI touches A (20 x 30), B (30 x 25), C (20 x 25) and the scalars alpha and
        // beta, doubles: with caches that hold them, that is all the traffic. Rows are whole
        // 64-byte lines: 30 or 25 doubles (240 or 200 bytes) take 4 lines, 256 bytes.
        let scop = crate::polybench_scop("gemm");
        let deps = dependences(&scop).unwrap();
        let (sched, _) = schedule(&scop, &deps, &ScheduleConfig::default()).unwrap();
        let cost = schedule_cost(&scop, &deps, &sched, &machine(1 << 20, 4 << 20)).unwrap();
        let memory: f64 = cost.nests.iter().map(|n| n.memory_bytes).sum();
        assert_eq!(
            memory,
            (20 * 256 + 30 * 256 + 20 * 256 + 2 * 8) as f64,
            "{cost}"
        );
        // With caches that hold a few rows only, blocks are loaded again and again.
        let small = schedule_cost(&scop, &deps, &sched, &machine(256, 1024)).unwrap();
        let small_memory: f64 = small.nests.iter().map(|n| n.memory_bytes).sum();
        assert!(small_memory > 4.0 * memory, "{small}");
    }

    #[test]
    fn a_loop_whose_data_fits_no_cache_loads_each_line_once() {
        // gemm at MINI with caches of one line: no block of two instances fits, but each
        // innermost loop walks rows of C, A or B in order and loads each of their lines once,
        // where a line per access and instance (the bound) would be 4 or more per instance.
        let scop = crate::polybench_scop("gemm");
        let deps = dependences(&scop).unwrap();
        let (sched, _) = schedule(&scop, &deps, &ScheduleConfig::default()).unwrap();
        let one_line = Machine {
            threads: 2,
            l1_bytes: 64,
            l2_bytes: 64,
            llc_bytes: 64,
        };
        let cost = schedule_cost(&scop, &deps, &sched, &one_line).unwrap();
        let instances: f64 = cost.nests.iter().map(|n| n.instances).sum();
        let memory: f64 = cost.nests.iter().map(|n| n.memory_bytes).sum();
        assert!(memory < instances * CACHE_LINE, "{cost}");
        // Still more than the data itself (17 936 bytes), loaded again for every row.
        assert!(memory > 4.0 * 17_936.0, "{cost}");
    }

    #[test]
    fn a_block_a_little_larger_than_a_cache_keeps_most_of_its_data() {
        // gemm at MINI: 17 936 bytes of data (see `data_that_fits_the_caches_is_loaded_once`).
        // A last-level cache 1% smaller than that keeps nearly all of it: the traffic grows
        // with the overflow, it does not jump to what a cache of a few rows gets. Down to half
        // of it, B (7 680 bytes) and two rows of A and C fit, and each row loads its own rows
        // only (`Walk::reloaded`); at a third B does not fit and is loaded for every row.
        let scop = crate::polybench_scop("gemm");
        let deps = dependences(&scop).unwrap();
        let (sched, _) = schedule(&scop, &deps, &ScheduleConfig::default()).unwrap();
        let memory = |llc: u64| -> f64 {
            let cost = schedule_cost(&scop, &deps, &sched, &machine(256, llc)).unwrap();
            cost.nests.iter().map(|n| n.memory_bytes).sum()
        };
        let whole = memory(17_936);
        assert_eq!(whole, 17_936.0);
        let nearly = memory(17_936 * 99 / 100);
        assert!(
            nearly >= whole && nearly < 1.1 * whole,
            "{nearly} against {whole}"
        );
        let half = memory(17_936 / 2);
        let third = memory(17_936 / 3);
        assert!(half >= nearly && half < 1.1 * whole, "{half}, {nearly}");
        assert!(third > 4.0 * whole, "{third}, {whole}");
    }

    #[test]
    fn what_consecutive_rows_share_is_loaded_once() {
        // atax at MINI fused into one nest (`tmp[i] = A[i] . x`, then `y += A[i] * tmp[i]`),
        // tiles of 8 rows of A (each row 42 doubles, 6 lines): a tile (3 KiB of A with x and
        // y) overflows a 2 KiB L2, one row with x and y (1.2 KiB) fits it, and so do two rows.
        // Each row after the first loads its own row of A only: x and y stay. Charged in full
        // for every row (x and y 38 times), L2 loaded three times the data.
        let scop = crate::polybench_scop("atax");
        let deps = dependences(&scop).unwrap();
        let cfg = ScheduleConfig {
            fuse: crate::Fuse::Max,
            tile_sizes: Some(vec![8]),
            ..ScheduleConfig::default()
        };
        let (sched, _) = schedule(&scop, &deps, &cfg).unwrap();
        let cost = schedule_cost(&scop, &deps, &sched, &machine(2 << 10, 1 << 20)).unwrap();
        let nest = cost
            .nests
            .iter()
            .max_by(|a, b| a.instances.total_cmp(&b.instances))
            .unwrap();
        // Everything fits the last-level cache: its traffic is the data, each byte once.
        assert!(nest.memory_bytes >= 38.0 * 384.0, "{cost}");
        assert!(
            nest.llc_bytes < 1.5 * nest.memory_bytes,
            "L2 loads x and y again for every row: {cost}"
        );
    }

    #[test]
    fn a_tile_keeps_what_it_reuses_and_streams_the_rest() {
        // gemm at MINI, a 4 x 4 x 8 tile of `C[i][j] += alpha * A[i][k] * B[k][j]` (members i,
        // j, k): C 4 rows of 4 doubles, A 4 rows of 8, B 8 rows of 4, each row one 64-byte line,
        // and alpha: 4·64 + 4·64 + 8·64 + 8 bytes.
        let ctx = Ctx::shared().unwrap();
        let gemm = crate::polybench_scop("gemm");
        let band = UnionMap::read(ctx, "{ S1[i, k, j] -> [i, j, k] }").unwrap();
        let tiles = BandTiles::new(&gemm, &band, 3).unwrap().unwrap();
        assert_eq!(tiles.extents(), [20, 25, 30]);
        let boxes = tiles.boxes(&[4, 4, 8]).unwrap();
        assert_eq!(boxes.reused_bytes, (4 * 64 + 4 * 64 + 8 * 64 + 8) as f64);
        assert_eq!(boxes.shortest_run, None);
        // mvt's `x1[i] += A[i][j] * y1[j]` reaches each element of A once: a 4 x 8 tile keeps
        // x1 (4 doubles, one line) and y1 (8 doubles, one line), not A.
        let mvt = crate::polybench_scop("mvt");
        let band = UnionMap::read(ctx, "{ S0[i, j] -> [i, j] }").unwrap();
        // A is streamed in rows of 8 doubles.
        let tiles = BandTiles::new(&mvt, &band, 2).unwrap().unwrap();
        let boxes = tiles.boxes(&[4, 8]).unwrap();
        assert_eq!(boxes.reused_bytes, 128.0);
        assert_eq!(boxes.shortest_run, Some(64.0));
        // A longer tile keeps more of y1: 32 doubles, 4 lines; A's rows are 32 doubles long.
        let boxes = tiles.boxes(&[4, 32]).unwrap();
        assert_eq!(boxes.reused_bytes, (64 + 4 * 64) as f64);
        assert_eq!(boxes.shortest_run, Some(256.0));
        // `x2[i] += A[j][i] * y2[j]` with i first: A's rows run along i.
        let band = UnionMap::read(ctx, "{ S1[i, j] -> [i, j] }").unwrap();
        let tiles = BandTiles::new(&mvt, &band, 2).unwrap().unwrap();
        let boxes = tiles.boxes(&[16, 4]).unwrap();
        assert_eq!(boxes.shortest_run, Some(128.0));
    }

    #[test]
    fn a_panel_is_what_every_row_of_a_tile_reads_alike() {
        // gemm at MINI, a 4 x 4 x 8 tile of `C[i][j] += alpha * A[i][k] * B[k][j]` (members i,
        // j, k): along i every row reads the same 8 rows of 4 doubles of B; along j, the same 4
        // rows of 8 of A (elements, not lines: a row of B alone is one line as 4 are); along k,
        // the same 4 rows of 4 of C. alpha is no array of rank 2.
        let ctx = Ctx::shared().unwrap();
        let gemm = crate::polybench_scop("gemm");
        let band = UnionMap::read(ctx, "{ S1[i, k, j] -> [i, j, k] }").unwrap();
        let tiles = BandTiles::new(&gemm, &band, 3).unwrap().unwrap();
        assert_eq!(
            tiles.panel_bytes(&[4, 4, 8], 0).unwrap(),
            Some(8.0 * 4.0 * 8.0)
        );
        assert_eq!(
            tiles.panel_bytes(&[4, 4, 8], 1).unwrap(),
            Some(4.0 * 8.0 * 8.0)
        );
        assert_eq!(
            tiles.panel_bytes(&[4, 4, 8], 2).unwrap(),
            Some(4.0 * 4.0 * 8.0)
        );
        // symm's `C[k][j] += alpha * B[i][j] * A[i][k]` runs over a triangle (`k < i`).
        let symm = crate::polybench_scop("symm");
        let band = UnionMap::read(ctx, "{ S1[i, j, k] -> [i, k, j] }").unwrap();
        let tiles = BandTiles::new(&symm, &band, 3).unwrap().unwrap();
        assert_eq!(tiles.panel_bytes(&[4, 4, 8], 1).unwrap(), None);
        // mvt streams A: no panel.
        let mvt = crate::polybench_scop("mvt");
        let band = UnionMap::read(ctx, "{ S0[i, j] -> [i, j] }").unwrap();
        let tiles = BandTiles::new(&mvt, &band, 2).unwrap().unwrap();
        assert_eq!(tiles.panel_bytes(&[4, 8], 0).unwrap(), None);
    }

    /// trisolv's `x[i] -= L[i][j] * x[j]` (`j < i`, N = 40 at MINI) streams `L` in a triangle.
    /// An `8 x 32` tile at the corner (`i < 8`) reaches 7 elements of a row; the tiles that
    /// start half-way along `i` (20) reach `j <= 26`, 27 elements (216 bytes), the longest run
    /// of the four places looked at (with `j` from 20: 8 elements; `i` from 0 and `j` from 20:
    /// empty). Along `j` a longer tile then gives longer runs, where the corner alone did not.
    #[test]
    fn triangular_bands_are_measured_at_a_full_tile() {
        let ctx = Ctx::new().unwrap();
        let trisolv = crate::polybench_scop("trisolv");
        let band = UnionMap::read(&ctx, "{ S1[i, j] -> [i, j] }").unwrap();
        let tiles = BandTiles::new(&trisolv, &band, 2).unwrap().unwrap();
        assert_eq!(tiles.boxes(&[8, 32]).unwrap().shortest_run, Some(216.0));
        assert_eq!(tiles.boxes(&[8, 8]).unwrap().shortest_run, Some(64.0));
    }

    #[test]
    fn parameters_take_the_estimates_value_or_give_no_estimate() {
        let ctx = Ctx::new().unwrap();
        let context = Set::read(&ctx, "[n] -> { : n >= 10 }").unwrap();
        assert_eq!(
            fixed_params(&ctx, &context).unwrap().to_str().unwrap(),
            "[n] -> {  : n = 1000 }"
        );
        let small = Set::read(&ctx, "[n] -> { : 0 < n < 100 }").unwrap();
        assert!(fixed_params(&ctx, &small).is_err());
    }
}
