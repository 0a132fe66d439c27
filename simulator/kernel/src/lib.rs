//! poolsight's compiled simulation kernel, exposed to Python as `poolsight._kernel.Kernel`.
//! The typed Python API around it is `poolsight.simulator`.

pub mod bpmodel;
pub mod chains;
pub mod csv_block;
pub mod gbpmodel;
pub mod getpage_avro;
pub mod getpage_encode;
pub mod group;
pub mod hist;
pub mod lru_stack;
pub mod mapped;
pub mod mini;
pub mod mini_set;
pub mod olken;
pub mod pool;
pub mod prefetch;
pub mod table;
#[cfg(test)]
mod testutil;
pub mod zos;

use mini::Policy;
use pool::{Mode, PoolState, TYPES};
use pyo3::buffer::{PyBuffer, ReadOnlyCell};
use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyTuple};
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::thread;

#[derive(Clone, Debug, Serialize, Deserialize)]
struct Config {
    mode: Mode,
    rate: f64,
    bits: u32,
    seed: u64,
    pane_seconds: f64,
    keep_panes: usize,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
struct State {
    config: Config,
    pools: BTreeMap<u32, PoolState>,
}

/// (rate now, pages tracked, first pane id, latest pane id, panes kept).
type PoolInfo = (f64, usize, Option<i64>, Option<i64>, usize);
/// Miniature caches asked for a pool not yet seen: (policy, sizes, rate, VPSEQT, VPSEQT per cache).
type MiniSpec = (Policy, Vec<u64>, f64, f64, Vec<f64>);

// 02: panes keep one object's histogram once; miniature caches share one page index.
// 03: the page table's 16-byte slots (object and page in one word, the pane as 32 bits).
// 04: the miniature caches' queues of uses and entry rows of whole cache lines.
// 05: the LRU miniature caches on one LRU stack (mini_set.rs).
const SNAPSHOT_MAGIC: &[u8; 8] = b"PSKERN05";
const OLD_SNAPSHOT_MAGICS: [&[u8; 8]; 4] = [b"PSKERN01", b"PSKERN02", b"PSKERN03", b"PSKERN04"];

/// `magic` then `value` in bincode, written straight into the Python bytes object: its size is
/// counted first, so the state (tens of MB for a pool's miniature caches) is not also built in a
/// growing Vec and copied (the Flink job snapshots each pool every pane).
fn snapshot_bytes<'py, T: serde::Serialize>(
    py: Python<'py>,
    magic: &[u8; 8],
    value: &T,
) -> PyResult<Bound<'py, PyBytes>> {
    let fail = |e: bincode::Error| PyValueError::new_err(format!("snapshot failed: {e}"));
    let size = bincode::serialized_size(value).map_err(fail)? as usize;
    PyBytes::new_with(py, magic.len() + size, |buf| {
        buf[..magic.len()].copy_from_slice(magic);
        let mut rest = &mut buf[magic.len()..];
        bincode::serialize_into(&mut rest, value).map_err(fail)?;
        if !rest.is_empty() {
            return Err(PyValueError::new_err("snapshot failed: shorter than its counted size"));
        }
        Ok(())
    })
}

/// A column's value: a Python buffer's cell (fed in the caller's thread) or a plain value (a
/// batch copied for the background thread, `Kernel.set_background`).
trait Get<T> {
    fn get(&self) -> T;
}

impl<T: pyo3::buffer::Element + Copy> Get<T> for ReadOnlyCell<T> {
    #[inline(always)]
    fn get(&self) -> T {
        ReadOnlyCell::get(self)
    }
}

macro_rules! plain_get {
    ($($t:ty),*) => {$(
        impl Get<$t> for $t {
            #[inline(always)]
            fn get(&self) -> $t {
                *self
            }
        }
    )*};
}
plain_get!(f64, u32, u64, u8);

/// Times, objects, pages, access types, functions.
type Cols<'a, F, U, L, B> = (&'a [F], &'a [U], &'a [L], &'a [B], &'a [B]);

/// One pool's run of events: staged (`PoolState::run_staged`) but for fixed-size SHARDS, whose
/// events go one by one, two stages ahead: the page-table slots of the next FAR references are
/// being loaded, and for the next NEAR (their slots loaded by now) the Olken bitmap line of the
/// page's previous position. Hashes wait in a ring so each is computed once.
#[inline(always)]
fn run<F: Get<f64>, U: Get<u32>, L: Get<u64>, B: Get<u8>>(
    state: &mut PoolState,
    (t, ob, pg, ac, fu): Cols<'_, F, U, L, B>,
) {
    if state.stages() {
        // Every column cut to the first one's length (feed checked they agree), so the
        // compiler drops their bounds checks.
        let n = t.len();
        let (ob, pg, ac, fu) = (&ob[..n], &pg[..n], &ac[..n], &fu[..n]);
        let ev = |k: usize| (t[k].get(), ob[k].get(), pg[k].get(), ac[k].get(), fu[k].get());
        return state.run_staged(n, ev);
    }
    const FAR: usize = 32;
    const NEAR: usize = 12;
    const RING: usize = 64;
    let n = t.len();
    let mut ring = [0u64; RING];
    for k in 0..FAR.min(n) {
        let h = state.hash(ob[k].get(), pg[k].get());
        state.prefetch(ob[k].get(), pg[k].get(), h, 0);
        ring[k % RING] = h;
    }
    for k in 0..n {
        if k + FAR < n {
            let (o, p) = (ob[k + FAR].get(), pg[k + FAR].get());
            let h = state.hash(o, p);
            state.prefetch(o, p, h, 0);
            ring[(k + FAR) % RING] = h;
        }
        if k + NEAR < n {
            let (o, p) = (ob[k + NEAR].get(), pg[k + NEAR].get());
            state.prefetch(o, p, ring[(k + NEAR) % RING], 1);
        }
        state.access(
            t[k].get(),
            ob[k].get(),
            pg[k].get(),
            ac[k].get(),
            fu[k].get(),
            ring[k % RING],
        );
    }
}

/// `run` compiled with popcnt and SSE4.1: the Olken queries count the marks of a
/// 512-position block in eight popcounts, some 100 instructions fewer each than the portable
/// build's bit tricks, and a getpage's pane is found with roundsd instead of a call to floor.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "popcnt,sse4.1")]
unsafe fn run_popcnt<F: Get<f64>, U: Get<u32>, L: Get<u64>, B: Get<u8>>(
    state: &mut PoolState,
    cols: Cols<'_, F, U, L, B>,
) {
    run(state, cols)
}

/// `run` compiled for AVX2 too (every x86-64 server since 2013): the Olken tree's 16-lane node
/// sums in two vector operations instead of four, and BMI shifts; 1-3 % on bench-sim.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "popcnt,sse4.1,avx2,bmi1,bmi2,lzcnt")]
unsafe fn run_avx2<F: Get<f64>, U: Get<u32>, L: Get<u64>, B: Get<u8>>(
    state: &mut PoolState,
    cols: Cols<'_, F, U, L, B>,
) {
    run(state, cols)
}

/// The best build of `run` this CPU takes.
fn run_best<F: Get<f64>, U: Get<u32>, L: Get<u64>, B: Get<u8>>(state: &mut PoolState, cols: Cols<'_, F, U, L, B>) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::is_x86_feature_detected as has;
        let sse = has!("popcnt") && has!("sse4.1");
        if sse && has!("avx2") && has!("bmi1") && has!("bmi2") && has!("lzcnt") {
            // SAFETY: the CPU has every feature run_avx2 is compiled for (checked just above).
            return unsafe { run_avx2(state, cols) };
        }
        if sse {
            // SAFETY: the CPU has popcnt and SSE4.1 (checked just above).
            return unsafe { run_popcnt(state, cols) };
        }
    }
    run(state, cols)
}

/// Reuse-distance simulation of many buffer pools; feed getpage batches, read curves.
#[pyclass(module = "poolsight._kernel")]
struct Kernel {
    /// None while the background thread holds the state (from its first batch until another
    /// call asks for it back), and after a batch there failed.
    core: Option<Core>,
    /// Feeds go to the background thread (`set_background`), started at the first of them.
    background: bool,
    behind: Option<Behind>,
}

/// What the simulation holds: the pools' states and the miniature caches asked for pools not
/// yet seen.
struct Core {
    state: State,
    minis: FxHashMap<u32, MiniSpec>,
}

/// One batch copied out of the caller's buffers, for the background thread.
struct Batch {
    t: Vec<f64>,
    pl: Vec<u32>,
    ob: Vec<u32>,
    pg: Vec<u64>,
    ac: Vec<u8>,
    fu: Vec<u8>,
}

/// Batches a background feed may queue before `feed` waits (each copied, 26 bytes a getpage):
/// enough for the caller to finish its bundle while the thread works on.
const BEHIND_BATCHES: usize = 16;

/// What the caller sends the background thread, in order.
enum Job {
    /// The state, when the first batch after a settle goes.
    Take(Core),
    Feed(Batch),
    /// Send the state back once every batch before this is run.
    Return,
}

/// The background thread of `Kernel.set_background`. The state goes to it with the first batch
/// and stays while feeds follow (up to BEHIND_BATCHES queued); any other call asks for it back,
/// so it reads the state after every batch fed before it.
struct Behind {
    jobs: mpsc::SyncSender<Job>,
    back: Mutex<mpsc::Receiver<Result<Core, String>>>,
    thread: Option<thread::JoinHandle<()>>,
    failed: Option<String>,
    /// Set when the Kernel goes: the batches still queued are dropped, not run.
    stop: Arc<AtomicBool>,
}

impl Behind {
    fn start() -> PyResult<Self> {
        let (jobs, todo) = mpsc::sync_channel::<Job>(BEHIND_BATCHES);
        let (done, back) = mpsc::channel();
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = Arc::clone(&stop);
        let thread = thread::Builder::new()
            .name("poolsight-feed".into())
            .spawn(move || {
                let mut core: Result<Option<Core>, String> = Ok(None);
                for job in todo {
                    match job {
                        Job::Take(c) => core = Ok(Some(c)),
                        Job::Feed(_) if stopped.load(Ordering::Relaxed) => {}
                        Job::Feed(b) => {
                            if let Ok(Some(c)) = core.as_mut() {
                                let fed = panic::catch_unwind(AssertUnwindSafe(|| {
                                    c.feed((&b.t, &b.pl, &b.ob, &b.pg, &b.ac, &b.fu))
                                }));
                                if let Err(e) = fed {
                                    core = Err(panic_message(&*e)); // the state is half fed: dropped
                                }
                            }
                        }
                        Job::Return => {
                            let state = std::mem::replace(&mut core, Ok(None));
                            let reply = state.and_then(|c| c.ok_or_else(|| "no state was sent".to_string()));
                            if done.send(reply).is_err() {
                                return; // the Kernel is gone
                            }
                        }
                    }
                }
            })
            .map_err(|e| PyRuntimeError::new_err(format!("kernel: cannot start its background thread: {e}")))?;
        Ok(Behind {
            jobs,
            back: Mutex::new(back),
            thread: Some(thread),
            failed: None,
            stop,
        })
    }

    /// Queue a job; with the queue full, wait for room without the GIL.
    fn send(&self, py: Python<'_>, job: Job) -> PyResult<()> {
        let job = match self.jobs.try_send(job) {
            Ok(()) => return Ok(()),
            Err(mpsc::TrySendError::Full(job)) => job,
            Err(mpsc::TrySendError::Disconnected(_)) => return Err(ended()),
        };
        let jobs = &self.jobs;
        py.detach(|| jobs.send(job).is_ok()).then_some(()).ok_or_else(ended)
    }
}

/// A column copied out of its Python buffer.
fn owned<T: pyo3::buffer::Element + Copy>(c: &[ReadOnlyCell<T>]) -> Vec<T> {
    c.iter().map(ReadOnlyCell::get).collect()
}

fn failed(why: &str) -> PyErr {
    PyRuntimeError::new_err(format!("kernel: a background feed failed: {why}"))
}

fn ended() -> PyErr {
    PyRuntimeError::new_err("kernel: its background thread has ended")
}

impl Drop for Behind {
    fn drop(&mut self) {
        // Closing the channel ends the thread once it has passed the batches queued.
        self.stop.store(true, Ordering::Relaxed);
        let (closed, _) = mpsc::sync_channel(0);
        self.jobs = closed;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn panic_message(e: &(dyn std::any::Any + Send)) -> String {
    e.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| e.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic".into())
}

/// A feed's columns, checked to be of one length.
type FeedCols<'a, F, U, L, B> = (&'a [F], &'a [U], &'a [U], &'a [L], &'a [B], &'a [B]);

impl Core {
    fn pool_mut(&mut self, pool: u32) -> &mut PoolState {
        let cfg = &self.state.config;
        let minis = &self.minis;
        self.state.pools.entry(pool).or_insert_with(|| {
            let mut p = PoolState::new(cfg.mode, cfg.rate, cfg.bits, cfg.seed, cfg.pane_seconds, cfg.keep_panes);
            if let Some((policy, sizes, rate, vpseqt, vpseqts)) = minis.get(&pool) {
                p.set_minis_at(*policy, sizes.clone(), *rate, *vpseqt, vpseqts);
            }
            p
        })
    }

    fn pool(&self, pool: u32) -> PyResult<&PoolState> {
        self.state
            .pools
            .get(&pool)
            .ok_or_else(|| PyValueError::new_err(format!("pool {pool}: no getpages seen")))
    }

    fn feed<F: Get<f64>, U: Get<u32>, L: Get<u64>, B: Get<u8>>(
        &mut self,
        (t, pl, ob, pg, ac, fu): FeedCols<'_, F, U, L, B>,
    ) {
        let n = t.len();
        let mut i = 0;
        while i < n {
            // Runs of one pool share one lookup.
            let pool = pl[i].get();
            let mut j = i + 1;
            while j < n && pl[j].get() == pool {
                j += 1;
            }
            let state = self.pool_mut(pool);
            run_best(state, (&t[i..j], &ob[i..j], &pg[i..j], &ac[i..j], &fu[i..j]));
            i = j;
        }
    }
}

fn slice<'a, T: pyo3::buffer::Element + Copy>(
    py: Python<'a>,
    buf: &'a PyBuffer<T>,
    name: &str,
) -> PyResult<&'a [pyo3::buffer::ReadOnlyCell<T>]> {
    buf.as_slice(py)
        .ok_or_else(|| PyValueError::new_err(format!("{name}: need a C-contiguous buffer")))
}

fn parse_policy(policy: &str) -> PyResult<Policy> {
    match policy {
        "lru" => Ok(Policy::Lru),
        "fifo" => Ok(Policy::Fifo),
        "lru-vpseqt" => Ok(Policy::LruVpseqt),
        _ => Err(PyValueError::new_err(format!(
            "policy {policy:?}: use lru, fifo or lru-vpseqt"
        ))),
    }
}

#[pymethods]
impl Kernel {
    /// mode: "exact", "shards" (fixed rate `rate`) or "shards-fixed-size" (at most `max_samples` pages).
    #[new]
    #[pyo3(signature = (mode="exact", rate=1.0, max_samples=0, precision_bits=12, seed=0, pane_seconds=60.0, keep_panes=15))]
    fn new(
        mode: &str,
        rate: f64,
        max_samples: usize,
        precision_bits: u32,
        seed: u64,
        pane_seconds: f64,
        keep_panes: usize,
    ) -> PyResult<Self> {
        let mode = match mode {
            "exact" => Mode::Exact,
            "shards" => {
                if !(rate > 0.0 && rate <= 1.0) {
                    return Err(PyValueError::new_err(format!("rate {rate}: must be in (0, 1]")));
                }
                Mode::FixedRate
            }
            "shards-fixed-size" => {
                if max_samples == 0 {
                    return Err(PyValueError::new_err("shards-fixed-size needs max_samples > 0"));
                }
                Mode::FixedSize(max_samples)
            }
            other => {
                return Err(PyValueError::new_err(format!(
                    "mode {other:?}: use exact, shards or shards-fixed-size"
                )))
            }
        };
        if pane_seconds.is_nan() || pane_seconds <= 0.0 {
            return Err(PyValueError::new_err("pane_seconds must be > 0"));
        }
        let state = State {
            config: Config {
                mode,
                rate,
                bits: precision_bits,
                seed,
                pane_seconds,
                keep_panes: keep_panes.max(2),
            },
            pools: BTreeMap::new(),
        };
        Ok(Kernel::of(state, FxHashMap::default()))
    }

    /// With `on`, `feed` copies its batch, queues it for a thread of the kernel's own and returns:
    /// the caller decodes its next batches (and the Flink job's operator finishes its bundle)
    /// while the queued ones run. Any other call waits for the queue to be run first, so results
    /// are those of feeding in the caller's thread. Off: feeds run in the caller's thread again.
    fn set_background(&mut self, py: Python<'_>, on: bool) -> PyResult<()> {
        self.core(py)?;
        self.background = on;
        if !on {
            self.behind = None;
        }
        Ok(())
    }

    /// Whether feeds run in the background thread (`set_background`).
    fn background(&self) -> bool {
        self.background
    }

    /// Run miniature caches of `policy` for `pool`, one per size, on a stream sampled at `rate`;
    /// again later (the pool was altered), the caches start from what the old ones held.
    /// `start_from[i]`: the old size whose cache the cache of `sizes[i]` starts from (0: the nearest above).
    /// `vpseqts[i]`: the VPSEQT of the cache of `sizes[i]` (missing: `vpseqt`, the pool's own).
    #[pyo3(signature = (pool, policy, sizes, rate=1.0, vpseqt=80.0, start_from=Vec::new(), vpseqts=Vec::new()))]
    #[allow(clippy::too_many_arguments)]
    fn set_policy_sizes(
        &mut self,
        py: Python<'_>,
        pool: u32,
        policy: &str,
        sizes: Vec<u64>,
        rate: f64,
        vpseqt: f64,
        start_from: Vec<u64>,
        vpseqts: Vec<f64>,
    ) -> PyResult<()> {
        let policy = parse_policy(policy)?;
        if !(rate > 0.0 && rate <= 1.0) {
            return Err(PyValueError::new_err(format!("rate {rate}: must be in (0, 1]")));
        }
        let core = self.core(py)?;
        let p = core.pool_mut(pool);
        p.retarget_minis(policy, sizes.clone(), rate, vpseqt, &start_from, &vpseqts);
        core.minis.insert(pool, (policy, sizes, rate, vpseqt, vpseqts));
        Ok(())
    }

    /// Feed one batch of parallel arrays: float64 seconds, uint32 pool ids, uint32 object ids,
    /// uint64 page numbers, uint8 access type (0 random, 1 sequential, 2 RID-list), uint8 function
    /// (0 getpage, 1 set write intent, 2 release).
    #[allow(clippy::too_many_arguments)] // the Python signature: one buffer per column
    fn feed(
        &mut self,
        py: Python<'_>,
        times: PyBuffer<f64>,
        pools: PyBuffer<u32>,
        objects: PyBuffer<u32>,
        pages: PyBuffer<u64>,
        access: PyBuffer<u8>,
        function: PyBuffer<u8>,
    ) -> PyResult<u64> {
        let (t, pl, ob, pg, ac, fu) = (
            slice(py, &times, "times")?,
            slice(py, &pools, "pools")?,
            slice(py, &objects, "objects")?,
            slice(py, &pages, "pages")?,
            slice(py, &access, "access")?,
            slice(py, &function, "function")?,
        );
        let n = t.len();
        for (name, len) in [
            ("pools", pl.len()),
            ("objects", ob.len()),
            ("pages", pg.len()),
            ("access", ac.len()),
            ("function", fu.len()),
        ] {
            if len != n {
                return Err(PyValueError::new_err(format!("{name} has {len} values, times has {n}")));
            }
        }
        if !self.background {
            self.core(py)?.feed((t, pl, ob, pg, ac, fu));
            return Ok(n as u64);
        }
        let batch = Batch {
            t: owned(t),
            pl: owned(pl),
            ob: owned(ob),
            pg: owned(pg),
            ac: owned(ac),
            fu: owned(fu),
        };
        if self.behind.is_none() {
            self.behind = Some(Behind::start()?);
        }
        let behind = self.behind.as_ref().expect("started above");
        if let Some(f) = &behind.failed {
            return Err(failed(f));
        }
        if let Some(core) = self.core.take() {
            behind.send(py, Job::Take(core))?;
        }
        behind.send(py, Job::Feed(batch))?;
        Ok(n as u64)
    }

    fn pools(&mut self, py: Python<'_>) -> PyResult<Vec<u32>> {
        Ok(self.core(py)?.state.pools.keys().copied().collect())
    }

    /// Hits by access type at each size over the last `panes` panes (0: all kept panes).
    #[pyo3(signature = (pool, sizes, panes=0))]
    fn curve(&mut self, py: Python<'_>, pool: u32, sizes: Vec<u64>, panes: usize) -> PyResult<Vec<[f64; TYPES]>> {
        Ok(self.core(py)?.pool(pool)?.curve(&sizes, panes))
    }

    #[pyo3(signature = (pool, sizes, panes=0))]
    fn object_curves(
        &mut self,
        py: Python<'_>,
        pool: u32,
        sizes: Vec<u64>,
        panes: usize,
    ) -> PyResult<BTreeMap<u32, Vec<[f64; TYPES]>>> {
        Ok(self.core(py)?.pool(pool)?.object_curves(&sizes, panes))
    }

    /// Per pane of the window: (pane id, counts) for the pool and per object, where counts is
    /// (refs[3], updates, cold[3], touched, latest, late).
    #[pyo3(signature = (pool, panes=0))]
    #[allow(clippy::type_complexity)]
    fn panes(
        &mut self,
        py: Python<'_>,
        pool: u32,
        panes: usize,
    ) -> PyResult<Vec<(i64, Counts, BTreeMap<u32, Counts>)>> {
        let p = self.core(py)?.pool(pool)?;
        Ok(p.window(panes)
            .map(|pane| {
                let objs = pane
                    .objects
                    .iter()
                    .enumerate()
                    .map(|(slot, op)| (p.slot_objects[slot], counts(&op.c, 0)))
                    .collect();
                (pane.id, counts(&pane.c, pane.late), objs)
            })
            .collect())
    }

    /// Miniature-simulation results over the window: (policy, sizes, rate, vpseqt, hits+misses per size).
    #[pyo3(signature = (pool, panes=0))]
    #[allow(clippy::type_complexity)]
    fn policy_curve(
        &mut self,
        py: Python<'_>,
        pool: u32,
        panes: usize,
    ) -> PyResult<Option<(String, Vec<u64>, f64, f64, Vec<[f64; 2 * TYPES]>)>> {
        let p = self.core(py)?.pool(pool)?;
        let Some(m) = p.minis.as_ref() else { return Ok(None) };
        let mut acc = vec![[0.0f64; 2 * TYPES]; m.sizes.len()];
        for pane in p.window(panes) {
            for (ci, row) in pane.mini.iter().enumerate() {
                for k in 0..2 * TYPES {
                    acc[ci][k] += row[k];
                }
            }
        }
        let name = match m.policy {
            Policy::Lru => "lru",
            Policy::Fifo => "fifo",
            Policy::LruVpseqt => "lru-vpseqt",
        };
        Ok(Some((name.to_string(), m.sizes.clone(), m.rate, m.vpseqt, acc)))
    }

    /// (rate now, pages tracked, first pane id, latest pane id, panes kept).
    fn pool_info(&mut self, py: Python<'_>, pool: u32) -> PyResult<PoolInfo> {
        let p = self.core(py)?.pool(pool)?;
        Ok((
            p.rate(),
            p.tracked_pages(),
            p.first_pane,
            p.panes.back().map(|x| x.id),
            p.panes.len(),
        ))
    }

    /// Lower bound and width of each histogram bucket index (for exporting histograms).
    fn bucket_range(&mut self, py: Python<'_>, index: usize) -> PyResult<(u64, u64)> {
        Ok(hist::Buckets::new(self.core(py)?.state.config.bits).range(index))
    }

    /// Histogram of the window for one access type: (bucket index, weight) pairs.
    #[pyo3(signature = (pool, access, panes=0))]
    fn histogram(&mut self, py: Python<'_>, pool: u32, access: usize, panes: usize) -> PyResult<Vec<(usize, f64)>> {
        let p = self.core(py)?.pool(pool)?;
        let a = access.min(TYPES - 1);
        let mut acc: Vec<f64> = Vec::new();
        for pane in p.window(panes) {
            if acc.len() < pane.hist[a].len() {
                acc.resize(pane.hist[a].len(), 0.0);
            }
            for (b, v) in pane.hist[a].iter().enumerate() {
                acc[b] += v;
            }
        }
        Ok(acc.into_iter().enumerate().filter(|(_, v)| *v != 0.0).collect())
    }

    fn snapshot<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let state = &self.core(py)?.state;
        snapshot_bytes(py, SNAPSHOT_MAGIC, state)
    }

    #[staticmethod]
    fn restore(data: &[u8]) -> PyResult<Self> {
        if data.len() >= 8 && OLD_SNAPSHOT_MAGICS.iter().any(|m| &data[..8] == *m) {
            return Err(PyValueError::new_err(format!(
                "a kernel snapshot of an older format ({}); this kernel reads {}: start the \
                 simulation again from the trace (or restore with the poolsight that wrote it)",
                String::from_utf8_lossy(&data[..8]),
                String::from_utf8_lossy(SNAPSHOT_MAGIC)
            )));
        }
        if data.len() < 8 || &data[..8] != SNAPSHOT_MAGIC {
            return Err(PyValueError::new_err("not a poolsight kernel snapshot (bad magic)"));
        }
        let state: State =
            bincode::deserialize(&data[8..]).map_err(|e| PyValueError::new_err(format!("corrupt snapshot: {e}")))?;
        for (id, p) in &state.pools {
            p.check()
                .map_err(|e| PyValueError::new_err(format!("corrupt snapshot: pool {id}: {e}")))?;
        }
        let minis = state
            .pools
            .iter()
            .filter_map(|(id, p)| {
                p.minis
                    .as_ref()
                    .map(|m| (*id, (m.policy, m.sizes.clone(), m.rate, m.vpseqt, Vec::new())))
            })
            .collect();
        Ok(Kernel::of(state, minis))
    }
}

type Counts = ([u64; TYPES], u64, [f64; TYPES], f64, i64, u64);

fn counts(c: &pool::Counts, late: u64) -> Counts {
    (c.refs, c.updates, c.cold, c.touched, c.latest, late)
}

impl Kernel {
    fn of(state: State, minis: FxHashMap<u32, MiniSpec>) -> Self {
        Kernel {
            core: Some(Core { state, minis }),
            background: false,
            behind: None,
        }
    }

    /// The core, back from the background thread once the batches queued are run (waited for
    /// without the GIL).
    fn core(&mut self, py: Python<'_>) -> PyResult<&mut Core> {
        if self.core.is_none() {
            let Some(behind) = self.behind.as_mut() else {
                return Err(PyRuntimeError::new_err("kernel: no state (a background feed failed)"));
            };
            if let Some(why) = &behind.failed {
                return Err(failed(why));
            }
            behind.send(py, Job::Return)?;
            let back = &behind.back;
            let got = py.detach(|| {
                back.lock()
                    .map_err(|_| "lock poisoned".to_string())?
                    .recv()
                    .map_err(|_| "its thread has ended".to_string())
            });
            match got.and_then(|r| r) {
                Ok(core) => self.core = Some(core),
                Err(why) => {
                    let err = failed(&why);
                    behind.failed = Some(why);
                    return Err(err);
                }
            }
        }
        Ok(self.core.as_mut().expect("set above"))
    }
}

/// A DB2-like buffer pool, buffer by buffer (the workload generator's model; see bpmodel.rs).
#[pyclass(module = "poolsight._kernel", name = "PoolModel")]
struct PyPoolModel {
    inner: bpmodel::PoolModel,
}

type ReadIos = (Vec<f64>, Vec<u32>, Vec<u64>, Vec<u32>, Vec<u8>);
type WriteIos = (Vec<f64>, Vec<u32>, Vec<u32>, Vec<u8>);

#[pymethods]
impl PyPoolModel {
    #[new]
    #[pyo3(signature = (vpsize, vpseqt=80.0, prefetch_quantity=32, dwqt=30.0, vdwqt=5.0))]
    fn new(vpsize: usize, vpseqt: f64, prefetch_quantity: u32, dwqt: f64, vdwqt: f64) -> PyResult<Self> {
        if vpsize == 0 {
            return Err(PyValueError::new_err("vpsize must be > 0"));
        }
        Ok(PyPoolModel {
            inner: bpmodel::PoolModel::new(vpsize, vpseqt, prefetch_quantity, dwqt, vdwqt),
        })
    }

    /// Run events through the pool; returns one byte per event: 1 when a getpage hit
    /// (updates and releases: 1).
    fn feed<'py>(
        &mut self,
        py: Python<'py>,
        times: PyBuffer<f64>,
        objects: PyBuffer<u32>,
        pages: PyBuffer<u64>,
        access: PyBuffer<u8>,
        function: PyBuffer<u8>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let (t, ob, pg, ac, fu) = (
            slice(py, &times, "times")?,
            slice(py, &objects, "objects")?,
            slice(py, &pages, "pages")?,
            slice(py, &access, "access")?,
            slice(py, &function, "function")?,
        );
        let n = t.len();
        if [ob.len(), pg.len(), ac.len(), fu.len()].iter().any(|&l| l != n) {
            return Err(PyValueError::new_err("feed: arrays of different lengths"));
        }
        let mut hits = vec![0u8; n];
        for k in 0..n {
            hits[k] = self
                .inner
                .access(t[k].get(), ob[k].get(), pg[k].get(), ac[k].get(), fu[k].get()) as u8;
        }
        Ok(PyBytes::new(py, &hits))
    }

    /// -ALTER BUFFERPOOL at event time `t`: new VPSIZE and VPSEQT (%); a smaller pool steals down to size.
    fn alter(&mut self, t: f64, vpsize: usize, vpseqt: f64) -> PyResult<()> {
        if vpsize == 0 {
            return Err(PyValueError::new_err("vpsize must be > 0"));
        }
        self.inner.alter(t, vpsize, vpseqt);
        Ok(())
    }

    /// Pages in the pool now.
    fn pages(&self) -> usize {
        self.inner.pages()
    }

    fn cross_invalidate(&mut self, py: Python<'_>, objects: PyBuffer<u32>, pages: PyBuffer<u64>) -> PyResult<()> {
        let (ob, pg) = (slice(py, &objects, "objects")?, slice(py, &pages, "pages")?);
        for k in 0..ob.len().min(pg.len()) {
            self.inner.cross_invalidate((ob[k].get(), pg[k].get()));
        }
        Ok(())
    }

    /// Read I/Os since the last call: (time, object, first page, pages, type 0 sync/1 seq/2 list/3 dynamic).
    fn take_reads(&mut self) -> ReadIos {
        take_reads(&mut self.inner)
    }

    /// Write I/Os since the last call: (time, object, pages, type 0 sync/1 async).
    fn take_writes(&mut self) -> WriteIos {
        take_writes(&mut self.inner)
    }

    /// The interval's counters, and start a new interval.
    fn take_counters(&mut self) -> BTreeMap<&'static str, u64> {
        take_counters(&mut self.inner)
    }
}

fn take_reads(p: &mut bpmodel::PoolModel) -> ReadIos {
    let r = std::mem::take(&mut p.reads);
    (
        r.iter().map(|x| x.t).collect(),
        r.iter().map(|x| x.obj).collect(),
        r.iter().map(|x| x.page).collect(),
        r.iter().map(|x| x.pages).collect(),
        r.iter().map(|x| x.kind).collect(),
    )
}

fn take_writes(p: &mut bpmodel::PoolModel) -> WriteIos {
    let w = std::mem::take(&mut p.writes);
    (
        w.iter().map(|x| x.t).collect(),
        w.iter().map(|x| x.obj).collect(),
        w.iter().map(|x| x.pages).collect(),
        w.iter().map(|x| x.kind).collect(),
    )
}

fn take_counters(p: &mut bpmodel::PoolModel) -> BTreeMap<&'static str, u64> {
    let c = std::mem::take(&mut p.counters);
    BTreeMap::from([
        ("getpages_random", c.getpages_random),
        ("getpages_sequential", c.getpages_sequential),
        ("getpages_rid", c.getpages_rid),
        ("sync_reads_random", c.sync_reads_random),
        ("sync_reads_sequential", c.sync_reads_sequential),
        ("dyn_prefetch_requests", c.dyn_prefetch_requests),
        ("dyn_prefetch_reads", c.dyn_prefetch_reads),
        ("dyn_prefetch_pages", c.dyn_prefetch_pages),
        ("list_prefetch_requests", c.list_prefetch_requests),
        ("list_prefetch_reads", c.list_prefetch_reads),
        ("list_prefetch_pages", c.list_prefetch_pages),
        ("buffer_updates", c.buffer_updates),
        ("pages_written", c.pages_written),
        ("sync_writes", c.sync_writes),
        ("async_writes", c.async_writes),
        ("dwqt_reached", c.dwqt_reached),
        ("vdwqt_reached", c.vdwqt_reached),
        ("xi_invalidations", c.xi_invalidations),
        ("xi_reads", c.xi_reads),
    ])
}

/// A data-sharing group's pool: the members' local pools and their group buffer pool, fed all
/// members' events in one global time order (the workload generator's model; see gbpmodel.rs).
#[pyclass(module = "poolsight._kernel", name = "GroupModel")]
struct PyGroupModel {
    inner: gbpmodel::GroupModel,
}

#[pymethods]
impl PyGroupModel {
    #[new]
    #[pyo3(signature = (vpsizes, data_entries, ratio=5.0, vpseqt=80.0, prefetch_quantity=32, dwqt=30.0, vdwqt=5.0,
                        gbpoolt=30.0, classt=None, checkpoint_seconds=0.0, commit_every=0, commit_seconds=0.0,
                        page_list_prefetch=false))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        vpsizes: Vec<usize>,
        data_entries: usize,
        ratio: f64,
        vpseqt: f64,
        prefetch_quantity: u32,
        dwqt: f64,
        vdwqt: f64,
        gbpoolt: f64,
        classt: Option<f64>,
        checkpoint_seconds: f64,
        commit_every: u64,
        commit_seconds: f64,
        page_list_prefetch: bool,
    ) -> PyResult<Self> {
        if vpsizes.is_empty() || vpsizes.len() > 64 || vpsizes.contains(&0) {
            return Err(PyValueError::new_err("vpsizes: 1 to 64 members, each vpsize > 0"));
        }
        check_structure(data_entries, ratio)?;
        if !(0.0..=100.0).contains(&gbpoolt) || classt.is_some_and(|c| !(0.0..=100.0).contains(&c)) {
            return Err(PyValueError::new_err("gbpoolt and classt are percentages, 0 to 100"));
        }
        if checkpoint_seconds.is_nan() || checkpoint_seconds < 0.0 || commit_seconds.is_nan() || commit_seconds < 0.0 {
            return Err(PyValueError::new_err(
                "checkpoint_seconds and commit_seconds must be >= 0",
            ));
        }
        let cfg = gbpmodel::GbpConfig {
            data_entries,
            ratio,
            gbpoolt,
            classt,
            checkpoint_seconds,
            commit_every,
            commit_seconds,
            page_list_prefetch,
        };
        Ok(PyGroupModel {
            inner: gbpmodel::GroupModel::new(&vpsizes, vpseqt, prefetch_quantity, dwqt, vdwqt, cfg),
        })
    }

    /// Objects (ids as fed) that are GBP-dependent; the others never touch the GBP.
    fn set_dependent(&mut self, objects: Vec<u32>) {
        for o in objects {
            self.inner.set_dependent(o, true);
        }
    }

    /// Run events of all members in one global time order (sorted here by time, then member,
    /// ties in the given order); returns one outcome byte per event, in the given order:
    /// 0 LBP hit, 1 XI refreshed from the GBP, 2 XI read from disk, 3 not found and returned
    /// from the GBP, 4 not found and read from disk, 5 read by prefetch, 6 not a getpage.
    #[allow(clippy::too_many_arguments)] // the Python signature: one buffer per column
    fn feed<'py>(
        &mut self,
        py: Python<'py>,
        times: PyBuffer<f64>,
        members: PyBuffer<u8>,
        objects: PyBuffer<u32>,
        pages: PyBuffer<u64>,
        access: PyBuffer<u8>,
        function: PyBuffer<u8>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let (t, mb, ob, pg, ac, fu) = (
            slice(py, &times, "times")?,
            slice(py, &members, "members")?,
            slice(py, &objects, "objects")?,
            slice(py, &pages, "pages")?,
            slice(py, &access, "access")?,
            slice(py, &function, "function")?,
        );
        let n = t.len();
        if [mb.len(), ob.len(), pg.len(), ac.len(), fu.len()]
            .iter()
            .any(|&l| l != n)
        {
            return Err(PyValueError::new_err("feed: arrays of different lengths"));
        }
        let count = self.inner.lbps.len();
        let mut ev = Vec::with_capacity(n);
        for k in 0..n {
            let m = mb[k].get() as usize;
            if m >= count {
                return Err(PyValueError::new_err(format!(
                    "feed: event {k}: member {m}, the group has {count}"
                )));
            }
            ev.push((t[k].get(), m, ob[k].get(), pg[k].get(), ac[k].get(), fu[k].get()));
        }
        Ok(PyBytes::new(py, &self.inner.feed(&ev)))
    }

    /// A new structure: `data_entries` data entries and RATIO directory entries per data entry
    /// (a smaller one reclaims what no longer fits).
    fn alter(&mut self, data_entries: usize, ratio: f64) -> PyResult<()> {
        check_structure(data_entries, ratio)?;
        self.inner.alter(data_entries, ratio);
        Ok(())
    }

    /// -ALTER BUFFERPOOL on one member at event time `t`: new VPSIZE and VPSEQT (%).
    fn alter_member(&mut self, member: usize, t: f64, vpsize: usize, vpseqt: f64) -> PyResult<()> {
        self.member(member)?;
        if vpsize == 0 {
            return Err(PyValueError::new_err("vpsize must be > 0"));
        }
        self.inner.alter_member(member, t, vpsize, vpseqt);
        Ok(())
    }

    /// The member's read I/Os since the last call (as PoolModel.take_reads).
    fn take_reads(&mut self, member: usize) -> PyResult<ReadIos> {
        self.member(member)?;
        Ok(take_reads(&mut self.inner.lbps[member]))
    }

    /// The member's write I/Os since the last call (as PoolModel.take_writes).
    fn take_writes(&mut self, member: usize) -> PyResult<WriteIos> {
        self.member(member)?;
        Ok(take_writes(&mut self.inner.lbps[member]))
    }

    /// The member's local pool counters of the interval (as PoolModel.take_counters).
    fn take_counters(&mut self, member: usize) -> PyResult<BTreeMap<&'static str, u64>> {
        self.member(member)?;
        Ok(take_counters(&mut self.inner.lbps[member]))
    }

    /// GBP counters of the interval, of one member or (None) of the group, and start a new one.
    #[pyo3(signature = (member=None))]
    fn take_gbp_counters(&mut self, member: Option<usize>) -> PyResult<BTreeMap<&'static str, u64>> {
        let c = match member {
            Some(m) => {
                self.member(m)?;
                std::mem::take(&mut self.inner.members[m])
            }
            None => std::mem::take(&mut self.inner.group),
        };
        Ok(c.pairs().into_iter().collect())
    }

    /// (directory entries, data entries, RATIO, changed pages now).
    fn structure(&self) -> (usize, usize, f64, usize) {
        self.inner.structure()
    }

    /// (directory entries in use, data entries in use).
    fn used(&self) -> (usize, usize) {
        self.inner.used()
    }

    /// Pages in the member's pool now.
    fn pages(&self, member: usize) -> PyResult<usize> {
        self.member(member)?;
        Ok(self.inner.lbps[member].pages())
    }
}

impl PyGroupModel {
    fn member(&self, m: usize) -> PyResult<()> {
        let n = self.inner.lbps.len();
        if m >= n {
            return Err(PyValueError::new_err(format!("member {m}: the group has {n}")));
        }
        Ok(())
    }
}

fn check_structure(data_entries: usize, ratio: f64) -> PyResult<()> {
    if data_entries == 0 || ratio.is_nan() || ratio < 1.0 {
        return Err(PyValueError::new_err(format!(
            "data_entries {data_entries}, ratio {ratio}: need data_entries > 0 and ratio >= 1"
        )));
    }
    Ok(())
}

create_exception!(
    poolsight._kernel,
    AvroError,
    PyException,
    "Not a GetpageBatch v1 Avro body; the message names the field and the byte."
);

/// Little-endian int64 column as a bytearray: numpy wraps it writable, without a copy.
fn i64_column<'py>(py: Python<'py>, values: &[i64]) -> PyResult<Bound<'py, PyByteArray>> {
    le_column(py, values, i64::to_le_bytes)
}

/// The Avro body of a GetpageBatch v1 in `data[start:]` (byte positions in errors count from
/// `data[0]`): (source, pool, sequence, start_time, end_time, object_names, time_offset, object,
/// partition, page, access, function, hit, getpages); the int columns are little-endian int64
/// bytearrays, partition and hit may be None. Raises AvroError when the body is malformed,
/// ValueError when its columns disagree (GetpageBatch.from_record's messages).
#[pyfunction]
#[pyo3(signature = (data, start=0))]
fn decode_getpage_batch<'py>(py: Python<'py>, data: &[u8], start: usize) -> PyResult<Bound<'py, PyTuple>> {
    use getpage_avro::Error;
    let b = getpage_avro::decode(data, start).map_err(|e| match e {
        Error::Malformed(m) => AvroError::new_err(m),
        Error::Unusable(m) => PyValueError::new_err(m),
    })?;
    let getpages = getpage_avro::check(&b).map_err(|e| match e {
        Error::Malformed(m) => AvroError::new_err(m),
        Error::Unusable(m) => PyValueError::new_err(m),
    })?;
    let items: [Bound<'py, PyAny>; 14] = [
        b.source.into_pyobject(py)?.into_any(),
        b.pool.into_pyobject(py)?.into_any(),
        b.sequence.into_pyobject(py)?.into_any(),
        b.start_time.into_pyobject(py)?.into_any(),
        b.end_time.into_pyobject(py)?.into_any(),
        b.object_names.into_pyobject(py)?.into_any(),
        i64_column(py, &b.time_offset)?.into_any(),
        i64_column(py, &b.object)?.into_any(),
        match &b.partition {
            Some(p) => i64_column(py, p)?.into_any(),
            None => py.None().into_bound(py),
        },
        i64_column(py, &b.page)?.into_any(),
        PyBytes::new(py, b.access).into_any(),
        PyBytes::new(py, b.function).into_any(),
        match b.hit {
            Some(h) => PyBytes::new(py, h).into_any(),
            None => py.None().into_bound(py),
        },
        getpages.into_pyobject(py)?.into_any(),
    ];
    PyTuple::new(py, items)
}

impl getpage_encode::Int for ReadOnlyCell<i64> {
    #[inline]
    fn value(&self) -> i64 {
        self.get()
    }
}

/// `header` followed by the Avro body of a GetpageBatch v1 (fastavro's bytes for the same record);
/// the int columns are C-contiguous int64 buffers, partition and hit may be None. Raises
/// ValueError naming the field when an int column holds a value outside the 32-bit range.
#[pyfunction]
#[allow(clippy::too_many_arguments)] // the Python signature: one argument per field
fn encode_getpage_batch<'py>(
    py: Python<'py>,
    header: &[u8],
    source: &str,
    pool: &str,
    sequence: i64,
    start_time: i64,
    end_time: i64,
    object_names: Vec<String>,
    time_offset: PyBuffer<i64>,
    object: PyBuffer<i64>,
    partition: Option<PyBuffer<i64>>,
    page: PyBuffer<i64>,
    access: &[u8],
    function: &[u8],
    hit: Option<&[u8]>,
) -> PyResult<Bound<'py, PyBytes>> {
    let names: Vec<&str> = object_names.iter().map(String::as_str).collect();
    let cols = getpage_encode::Columns {
        source,
        pool,
        sequence,
        start_time,
        end_time,
        object_names: &names,
        time_offset: slice(py, &time_offset, "time_offset")?,
        object: slice(py, &object, "object")?,
        partition: partition.as_ref().map(|p| slice(py, p, "partition")).transpose()?,
        page: slice(py, &page, "page")?,
        access,
        function,
        hit,
    };
    let mut out = Vec::with_capacity(header.len() + 64 + access.len() * 3);
    out.extend_from_slice(header);
    getpage_encode::encode(&cols, &mut out).map_err(PyValueError::new_err)?;
    Ok(PyBytes::new(py, &out))
}

/// Little-endian columns as bytearrays (numpy wraps them without a copy).
fn le_column<'py, const N: usize, T: Copy>(
    py: Python<'py>,
    values: &[T],
    bytes: impl Fn(T) -> [u8; N],
) -> PyResult<Bound<'py, PyByteArray>> {
    PyByteArray::new_with(py, values.len() * N, |out| {
        for (dst, &v) in out.chunks_exact_mut(N).zip(values) {
            dst.copy_from_slice(&bytes(v));
        }
        Ok(())
    })
}

/// A block of complete trace CSV lines (no header) parsed at once, or None when any line is
/// not plain (csv_block.rs): (rows, times as float64 bytes or None, pages as int64 bytes, per
/// text column (int32 codes bytes, distinct raw values in first-seen order), the byte offsets
/// after every `every`-th line as int64 bytes).
#[pyfunction]
#[pyo3(signature = (block, width, time, page, texts, every=0))]
fn parse_csv_block<'py>(
    py: Python<'py>,
    block: &[u8],
    width: usize,
    time: Option<usize>,
    page: usize,
    texts: Vec<usize>,
    every: usize,
) -> PyResult<Option<Bound<'py, PyTuple>>> {
    let layout = csv_block::Layout {
        width,
        time,
        page,
        texts: &texts,
        every,
    };
    let Some(p) = py.detach(|| csv_block::parse(block, &layout)) else {
        return Ok(None);
    };
    let mut cols = Vec::with_capacity(p.texts.len());
    for t in &p.texts {
        let pair: [Bound<'py, PyAny>; 2] = [
            le_column(py, &t.codes, i32::to_le_bytes)?.into_any(),
            t.values.clone().into_pyobject(py)?.into_any(),
        ];
        cols.push(PyTuple::new(py, pair)?);
    }
    let items: [Bound<'py, PyAny>; 5] = [
        p.rows.into_pyobject(py)?.into_any(),
        match time {
            Some(_) => le_column(py, &p.times, f64::to_le_bytes)?.into_any(),
            None => py.None().into_bound(py),
        },
        le_column(py, &p.pages, i64::to_le_bytes)?.into_any(),
        cols.into_pyobject(py)?.into_any(),
        le_column(py, &p.ends, i64::to_le_bytes)?.into_any(),
    ];
    Ok(Some(PyTuple::new(py, items)?))
}

/// Records of a z/OS variable-length data set in `data` (see zos.rs): (starts, lengths, segment
/// descriptors) as little-endian int64 / byte columns, bytes consumed, and the framing error
/// (byte offset, field, reason) where the lengths cannot be followed further, or None.
#[pyfunction]
#[pyo3(signature = (data, with_bdw, min_len))]
fn frame_records<'py>(py: Python<'py>, data: &[u8], with_bdw: bool, min_len: usize) -> PyResult<Bound<'py, PyTuple>> {
    let f = py.detach(|| zos::frame(data, with_bdw, min_len));
    let items: [Bound<'py, PyAny>; 5] = [
        i64_column(py, &f.starts)?.into_any(),
        i64_column(py, &f.lengths)?.into_any(),
        PyBytes::new(py, &f.segments).into_any(),
        f.consumed.into_pyobject(py)?.into_any(),
        match f.error {
            Some((at, field, why)) => (at, field, why).into_pyobject(py)?.into_any(),
            None => py.None().into_bound(py),
        },
    ];
    PyTuple::new(py, items)
}

const GROUP_MAGIC: &[u8; 8] = b"PSGRP001";

/// Data sharing: the members' LBPs and a GBP per grid point (see group.rs).
#[pyclass(module = "poolsight._kernel", name = "GroupSim")]
struct PyGroupSim {
    inner: group::Group,
}

#[pymethods]
impl PyGroupSim {
    /// One LBP size per member; the grid: data_entries[i] x ratios[i]; curve_sizes: per member
    /// the LBP sizes of its curve (empty: none). Sizes unscaled: the kernel scales by `sample`.
    #[new]
    #[pyo3(signature = (lbp_sizes, data_entries, ratios, gbpoolt=30.0, sample=1.0, seed=0,
        curve_sizes=Vec::new(), commit_every=0, commit_seconds=None, checkpoint_seconds=None,
        classt=None, infer_dependence=false))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        lbp_sizes: Vec<u64>,
        data_entries: Vec<u64>,
        ratios: Vec<f64>,
        gbpoolt: f64,
        sample: f64,
        seed: u64,
        curve_sizes: Vec<Vec<u64>>,
        commit_every: u64,
        commit_seconds: Option<f64>,
        checkpoint_seconds: Option<f64>,
        classt: Option<f64>,
        infer_dependence: bool,
    ) -> PyResult<Self> {
        if data_entries.len() != ratios.len() {
            return Err(PyValueError::new_err("one ratio per data entries value"));
        }
        for (name, v) in [
            ("commit_seconds", commit_seconds),
            ("checkpoint_seconds", checkpoint_seconds),
        ] {
            if matches!(v, Some(x) if x.is_nan() || x <= 0.0) {
                return Err(PyValueError::new_err(format!("{name} must be > 0")));
            }
        }
        let config = group::Config {
            members: lbp_sizes.len(),
            lbp_sizes,
            settings: data_entries.into_iter().zip(ratios).collect(),
            gbpoolt,
            sample,
            seed,
            curve_sizes,
            commit_every,
            commit_seconds,
            checkpoint_seconds,
            classt,
            infer_dependence,
        };
        Ok(PyGroupSim {
            inner: group::Group::new(config).map_err(PyValueError::new_err)?,
        })
    }

    /// An object's GBPCACHE (0 CHANGED, 1 ALL, 2 NONE) and whether it is never GBP-dependent.
    fn set_object(&mut self, obj: u32, gbpcache: u8, never_dependent: bool) -> PyResult<()> {
        if gbpcache > group::CACHE_NONE {
            return Err(PyValueError::new_err(format!("gbpcache {gbpcache}: use 0, 1 or 2")));
        }
        self.inner.set_object(obj, gbpcache, never_dependent);
        Ok(())
    }

    /// Events in global order: uint32 member ids, uint32 object ids, uint64 pages, uint8
    /// function (0 getpage, 1 set write intent, 2 release), float64 seconds (optional).
    #[pyo3(signature = (members, objects, pages, function, times=None))]
    fn feed(
        &mut self,
        py: Python<'_>,
        members: PyBuffer<u32>,
        objects: PyBuffer<u32>,
        pages: PyBuffer<u64>,
        function: PyBuffer<u8>,
        times: Option<PyBuffer<f64>>,
    ) -> PyResult<u64> {
        let (mb, ob, pg, fu) = (
            slice(py, &members, "members")?,
            slice(py, &objects, "objects")?,
            slice(py, &pages, "pages")?,
            slice(py, &function, "function")?,
        );
        let t = match &times {
            Some(b) => Some(slice(py, b, "times")?),
            None => None,
        };
        let n = mb.len();
        for (name, len) in [
            ("objects", ob.len()),
            ("pages", pg.len()),
            ("function", fu.len()),
            ("times", t.map_or(n, |t| t.len())),
        ] {
            if len != n {
                return Err(PyValueError::new_err(format!(
                    "{name} has {len} values, members has {n}"
                )));
            }
        }
        let nm = self.inner.config.members as u32;
        for i in 0..n {
            if mb[i].get() >= nm {
                return Err(PyValueError::new_err(format!(
                    "event {i}: member id {} of {nm}",
                    mb[i].get()
                )));
            }
            if fu[i].get() > group::RELEASE {
                return Err(PyValueError::new_err(format!(
                    "event {i}: function {}: use 0 getpage, 1 set write intent, 2 release",
                    fu[i].get()
                )));
            }
        }
        // The cache misses of coming events overlap with this one's work.
        const FAR: usize = 32;
        const NEAR: usize = 6;
        for i in 0..n {
            if i + FAR < n {
                self.inner.prefetch(ob[i + FAR].get(), pg[i + FAR].get(), 0);
            }
            if i + NEAR < n {
                self.inner.prefetch(ob[i + NEAR].get(), pg[i + NEAR].get(), 1);
            }
            let time = t.map_or(0.0, |t| t[i].get());
            self.inner
                .event(mb[i].get() as usize, ob[i].get(), pg[i].get(), fu[i].get(), time);
        }
        Ok(n as u64)
    }

    /// Raw (sampled) counters: [point][member][16] in group.rs order (COUNTERS, then getpages).
    fn counters(&self) -> Vec<Vec<[u64; group::COUNTERS]>> {
        self.inner.points.iter().map(|p| p.counters.clone()).collect()
    }

    /// A member's LBP curve: (scaled sizes ascending, per size bucket [valid/data, valid/no data,
    /// stale/data, stale/no data]); bucket b holds getpages at stack distance in [sizes[b-1], sizes[b]).
    fn curve(&self, member: usize) -> PyResult<(Vec<u64>, Vec<[u64; 4]>)> {
        if member >= self.inner.config.members {
            return Err(PyValueError::new_err(format!("member {member}: no such member")));
        }
        let (s, c) = self.inner.curve(member);
        Ok((s.to_vec(), c.to_vec()))
    }

    fn rate(&self) -> f64 {
        self.inner.rate()
    }

    /// LBP sizes as simulated (scaled by the sampling rate).
    fn lbp_sizes(&self) -> Vec<u64> {
        self.inner.lbp_sizes()
    }

    /// (data entries, directory entries) of each point as simulated (scaled).
    fn gbp_sizes(&self) -> Vec<(u64, u64)> {
        self.inner.points.iter().map(|p| (p.data_cap, p.dir_cap)).collect()
    }

    fn tracked_pages(&self) -> usize {
        self.inner.tracked_pages()
    }

    fn snapshot<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        snapshot_bytes(py, GROUP_MAGIC, &self.inner)
    }

    #[staticmethod]
    fn restore(data: &[u8]) -> PyResult<Self> {
        if data.len() < 8 || &data[..8] != GROUP_MAGIC {
            return Err(PyValueError::new_err("not a poolsight group snapshot (bad magic)"));
        }
        let inner = bincode::deserialize(&data[8..])
            .map_err(|e| PyValueError::new_err(format!("corrupt group snapshot: {e}")))?;
        Ok(PyGroupSim { inner })
    }
}

#[pymodule]
fn _kernel(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Kernel>()?;
    m.add_class::<PyGroupSim>()?;
    m.add_class::<PyPoolModel>()?;
    m.add_class::<PyGroupModel>()?;
    m.add_function(wrap_pyfunction!(decode_getpage_batch, m)?)?;
    m.add_function(wrap_pyfunction!(encode_getpage_batch, m)?)?;
    m.add_function(wrap_pyfunction!(frame_records, m)?)?;
    m.add_function(wrap_pyfunction!(parse_csv_block, m)?)?;
    m.add("AvroError", m.py().get_type::<AvroError>())?;
    Ok(())
}
