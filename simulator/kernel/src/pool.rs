//! One buffer pool's simulation state: the LRU stack (exact or SHARDS-sampled),
//! per-pane distance histograms per pool and object and access type, working
//! sets, and optional miniature caches for non-stack policies.

use crate::hist::Buckets;
use crate::mini::{Key, Policy};
use crate::mini_set::CacheSet;
use crate::olken::Olken;
use crate::table::PageTable;
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BinaryHeap, VecDeque};

pub const TYPES: usize = 3; // random, sequential, RID-list
pub const GETPAGE: u8 = 0;
pub const SET_WRITE_INTENT: u8 = 1;
const TWO64: f64 = 18_446_744_073_709_551_616.0;

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum Mode {
    Exact,
    FixedRate,
    FixedSize(usize),
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Counts {
    pub refs: [u64; TYPES],    // every getpage, sampled or not
    pub updates: u64,          // set-write-intent records
    pub sampled: [f64; TYPES], // weighted sampled getpages (SHARDS correction)
    pub cold: [f64; TYPES],    // weighted first touches
    pub touched: f64,          // weighted distinct pages touched in the pane
    pub latest: i64,           // sampled pages whose latest touch is in the pane
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ObjPane {
    pub c: Counts,
    pub hist: FxHashMap<u32, f64>, // (access << 28 | bucket) -> weight
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Pane {
    pub id: i64,
    pub c: Counts,
    pub hist: [Vec<f64>; TYPES],
    pub objects: Vec<ObjPane>,       // indexed by the pool's object slot
    pub mini: Vec<[f64; 2 * TYPES]>, // per miniature cache: hits by type, then misses by type
    pub late: u64,
    /// The one object slot whose distances the pane has counted so far (NO_SLOT: none yet,
    /// MANY: more than one). While there is one, its histogram is the pane's own and is not
    /// kept twice (a hash-map update per getpage saved); a second object copies it out first.
    solo: u32,
}

/// Events a staged stretch holds at most: its scratch (9 KiB) stays in L1 beside the lines in flight.
const STAGE: usize = 1024;
/// A staged getpage's previous position when the page is new to the stack.
const NEW: u32 = u32::MAX;

const NO_SLOT: u32 = u32::MAX;
const MANY: u32 = u32::MAX - 1;

impl Pane {
    fn new(id: i64, minis: usize) -> Self {
        Pane {
            id,
            c: Counts::default(),
            hist: [Vec::new(), Vec::new(), Vec::new()],
            objects: Vec::new(),
            mini: vec![[0.0; 2 * TYPES]; minis],
            late: 0,
            solo: NO_SLOT,
        }
    }

    /// Count a distance (bucket b, weight w) of access type a for object `slot`.
    #[inline(always)]
    fn count(&mut self, slot: usize, a: usize, b: usize, w: f64) {
        if self.solo != slot as u32 {
            if self.solo == NO_SLOT {
                self.solo = slot as u32;
            } else if self.solo != MANY {
                // A second object: the first one's distances so far are the pane's.
                let first = self.solo as usize;
                let o = &mut self.objects[first].hist;
                for (a, h) in self.hist.iter().enumerate() {
                    for (b, &v) in h.iter().enumerate() {
                        if v != 0.0 {
                            o.insert(((a as u32) << 28) | b as u32, v);
                        }
                    }
                }
                self.solo = MANY;
            }
        }
        let hist = &mut self.hist[a];
        if hist.len() <= b {
            hist.resize(b + 1, 0.0);
        }
        hist[b] += w;
        if self.solo == MANY {
            *self.objects[slot]
                .hist
                .entry(((a as u32) << 28) | b as u32)
                .or_insert(0.0) += w;
        }
    }

    /// Object `slot`'s distance histogram in this pane: (access << 28 | bucket, weight).
    pub fn object_hist(&self, slot: usize) -> Box<dyn Iterator<Item = (u32, f64)> + '_> {
        if self.solo == slot as u32 {
            Box::new(self.hist.iter().enumerate().flat_map(|(a, h)| {
                h.iter()
                    .enumerate()
                    .filter(|(_, v)| **v != 0.0)
                    .map(move |(b, v)| (((a as u32) << 28) | b as u32, *v))
            }))
        } else {
            Box::new(self.objects[slot].hist.iter().map(|(k, v)| (*k, *v)))
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Minis {
    pub policy: Policy,
    pub vpseqt: f64,
    pub rate: f64,
    threshold: u64,
    pub sizes: Vec<u64>,
    caches: CacheSet, // one per size: the LRU ones on one stack, the rest over one page index
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PoolState {
    pub mode: Mode,
    buckets: Buckets,
    seed: u64,
    threshold: u64, // SHARDS: a page is sampled when hash < threshold
    pane_seconds: f64,
    keep: usize,
    pages: PageTable,
    olken: Olken,
    heap: BinaryHeap<(u64, Key)>, // fixed-size SHARDS: sampled pages by hash
    pub panes: VecDeque<Pane>,
    pub first_pane: Option<i64>,
    pub minis: Option<Minis>,
    slots: FxHashMap<u32, u32>, // object id -> slot in each pane's objects
    pub slot_objects: Vec<u32>,
    last_obj: (u32, u32), // (object, slot) of the previous reference
    cur: (i64, usize),    // (pane id, index) of the newest pane
    pane_base: i64,       // a page-table slot's pane is its pane id less this
}

#[inline]
fn mix64(mut x: u64) -> u64 {
    x ^= x >> 30;
    x = x.wrapping_mul(0xbf58476d1ce4e5b9);
    x ^= x >> 27;
    x = x.wrapping_mul(0x94d049bb133111eb);
    x ^ (x >> 31)
}

#[inline]
pub fn page_hash(key: Key, seed: u64) -> u64 {
    mix64(key.1 ^ mix64((key.0 as u64) ^ seed))
}

fn rate_threshold(rate: f64) -> u64 {
    if rate >= 1.0 {
        u64::MAX
    } else {
        (rate.max(0.0) * TWO64) as u64
    }
}

impl PoolState {
    pub fn new(mode: Mode, rate: f64, bits: u32, seed: u64, pane_seconds: f64, keep: usize) -> Self {
        PoolState {
            mode,
            buckets: Buckets::new(bits),
            seed,
            threshold: if mode == Mode::FixedRate {
                rate_threshold(rate)
            } else {
                u64::MAX
            },
            pane_seconds,
            keep: keep.max(2),
            pages: PageTable::default(),
            olken: Olken::default(),
            heap: BinaryHeap::new(),
            panes: VecDeque::new(),
            first_pane: None,
            minis: None,
            slots: FxHashMap::default(),
            slot_objects: Vec::new(),
            last_obj: (u32::MAX, u32::MAX),
            cur: (i64::MIN, 0),
            pane_base: 0,
        }
    }

    #[inline(always)]
    fn slot(&mut self, obj: u32) -> usize {
        if self.last_obj.0 == obj && self.last_obj.1 != u32::MAX {
            return self.last_obj.1 as usize;
        }
        self.slot_slow(obj)
    }

    #[inline(never)]
    fn slot_slow(&mut self, obj: u32) -> usize {
        let next = self.slot_objects.len() as u32;
        let slot = *self.slots.entry(obj).or_insert(next);
        if slot == next {
            self.slot_objects.push(obj);
        }
        self.last_obj = (obj, slot);
        slot as usize
    }

    pub fn set_minis(&mut self, policy: Policy, sizes: Vec<u64>, rate: f64, vpseqt: f64) {
        self.set_minis_at(policy, sizes, rate, vpseqt, &[]);
    }

    /// As set_minis, with a VPSEQT per cache (`vpseqts[i]` for `sizes[i]`; missing ones: the
    /// pool's `vpseqt`): a threshold the pool might be altered to, simulated beside its own.
    pub fn set_minis_at(&mut self, policy: Policy, sizes: Vec<u64>, rate: f64, vpseqt: f64, vpseqts: &[f64]) {
        let specs: Vec<(usize, f64)> = sizes
            .iter()
            .enumerate()
            .map(|(k, &s)| {
                let pct = vpseqts.get(k).copied().unwrap_or(vpseqt);
                (((s as f64) * rate).round() as usize, pct)
            })
            .collect();
        let caches = CacheSet::new(policy, &specs);
        for p in self.panes.iter_mut() {
            p.mini = vec![[0.0; 2 * TYPES]; sizes.len()];
        }
        self.minis = Some(Minis {
            policy,
            vpseqt,
            rate,
            threshold: rate_threshold(rate),
            sizes,
            caches,
        });
    }

    /// New candidate sizes (and VPSEQT) for the miniature caches after the pool changed: each new
    /// cache starts from the contents of the old cache of size `from[i]` when there is one (the
    /// pool's old size for its new size: what the altered pool really holds), else of the old
    /// cache nearest above its size (or the largest), so the simulation follows the change
    /// without a cold start. At a lower sampling rate (the largest size grew past the caches'
    /// budget) each old cache keeps only the pages the new rate samples, in their order: what a
    /// cache run at the new rate would hold, to within the sample's noise; at a higher rate the
    /// pages the old rate did not sample come in cold. LRU and LRU with VPSEQT go on from each other
    /// (a pool altered across VPSEQT 100, which is plain LRU); FIFO from or to them starts cold. Panes' counts are cleared
    /// (curves are ratios over what follows), but for the pool's own cache in the latest pane:
    /// the cache at the new size named by `from` (the pool's, at the pool's VPSEQT) goes on from
    /// the counts of the old one of that size, so the pane across a change counts its first part
    /// at the old setting and the rest at the new one, as the pool ran.
    pub fn retarget_minis(
        &mut self,
        policy: Policy,
        sizes: Vec<u64>,
        rate: f64,
        vpseqt: f64,
        from: &[u64],
        vpseqts: &[f64],
    ) {
        let carry = self.own_counts(&sizes, vpseqt, from, vpseqts);
        // A pool altered across VPSEQT 100 (plain LRU there) goes on warm; to or from FIFO, cold.
        let Some(old) = self.minis.as_ref().filter(|m| policy.goes_on_from(m.policy)) else {
            self.set_minis_at(policy, sizes, rate, vpseqt, vpseqts);
            return self.put_back(carry);
        };
        let (below, seed) = (rate_threshold(rate), self.seed);
        let specs: Vec<(Option<usize>, usize, f64)> = sizes
            .iter()
            .enumerate()
            .map(|(k, &s)| {
                let wanted = from.get(k).copied().unwrap_or(0);
                let from = (0..old.sizes.len())
                    .find(|&i| wanted > 0 && old.sizes[i] == wanted)
                    .or_else(|| {
                        (0..old.sizes.len())
                            .filter(|&i| old.sizes[i] >= s)
                            .min_by_key(|&i| old.sizes[i])
                    })
                    .or_else(|| (0..old.sizes.len()).max_by_key(|&i| old.sizes[i]));
                let cap = ((s as f64) * rate).round() as usize;
                let pct = vpseqts.get(k).copied().unwrap_or(vpseqt);
                (from, cap, pct)
            })
            .collect();
        let caches = old.caches.retargeted(policy, &specs, |k| {
            below >= old.threshold || page_hash(*k, seed) < below
        });
        self.set_minis_at(policy, sizes, rate, vpseqt, vpseqts);
        if let Some(m) = self.minis.as_mut() {
            m.caches = caches;
        }
        self.put_back(carry);
    }

    /// (new index, the latest pane's counts) of the new caches at the pool's VPSEQT whose `from`
    /// names an old cache of the same rate at the old VPSEQT.
    fn own_counts(&self, sizes: &[u64], vpseqt: f64, from: &[u64], vpseqts: &[f64]) -> Vec<(usize, [f64; 2 * TYPES])> {
        let (Some(old), Some(pane)) = (self.minis.as_ref(), self.panes.back()) else {
            return vec![];
        };
        (0..sizes.len())
            .filter(|&k| vpseqts.get(k).copied().unwrap_or(vpseqt) == vpseqt)
            .filter_map(|k| {
                let wanted = from.get(k).copied().unwrap_or(0);
                let i = (0..old.sizes.len()).find(|&i| wanted > 0 && old.sizes[i] == wanted)?;
                pane.mini.get(i).map(|row| (k, *row))
            })
            .collect()
    }

    fn put_back(&mut self, carry: Vec<(usize, [f64; 2 * TYPES])>) {
        if let Some(pane) = self.panes.back_mut() {
            for (k, row) in carry {
                if let Some(r) = pane.mini.get_mut(k) {
                    *r = row;
                }
            }
        }
    }

    /// What a restored pool must hold for its getpages to be counted without a panic: a row
    /// per miniature cache in every pane, and a cache per size (a snapshot's layout is checked
    /// by bincode, these lengths are not).
    pub fn check(&self) -> Result<(), String> {
        let (want, caches) = self
            .minis
            .as_ref()
            .map_or((0, 0), |m| (m.sizes.len(), m.caches.count()));
        if caches != want {
            return Err(format!("{caches} miniature caches for {want} sizes"));
        }
        match self.panes.iter().find(|p| p.mini.len() != want) {
            Some(p) => Err(format!(
                "pane {} has {} miniature cache rows, not {want}",
                p.id,
                p.mini.len()
            )),
            None => Ok(()),
        }
    }

    /// Current sampling rate (1 in exact mode).
    pub fn rate(&self) -> f64 {
        match self.mode {
            Mode::Exact => 1.0,
            _ if self.threshold == u64::MAX => 1.0,
            _ => self.threshold as f64 / TWO64,
        }
    }

    pub fn buckets(&self) -> Buckets {
        self.buckets
    }

    pub fn tracked_pages(&self) -> usize {
        self.pages.len()
    }

    /// Index of the pane for pane id `pid`, opening new panes as event time advances.
    #[inline(always)] // per event in the feed loop: the common case is one compare
    fn pane_index(&mut self, pid: i64) -> usize {
        if pid == self.cur.0 {
            return self.cur.1;
        }
        let idx = self.pane_index_slow(pid);
        let back = self.panes.len() - 1;
        self.cur = (self.panes[back].id, back);
        idx
    }

    #[cold]
    #[inline(never)]
    fn pane_index_slow(&mut self, pid: i64) -> usize {
        let minis = self.minis.as_ref().map_or(0, |m| m.sizes.len());
        let Some(back) = self.panes.back().map(|p| p.id) else {
            self.panes.push_back(Pane::new(pid, minis));
            self.first_pane = Some(pid);
            return 0;
        };
        if pid > back {
            if pid.saturating_sub(back) > self.keep as i64 {
                self.panes.clear();
                self.panes.push_back(Pane::new(pid, minis));
            } else {
                for id in back + 1..=pid {
                    self.panes.push_back(Pane::new(id, minis));
                }
                while self.panes.len() > self.keep {
                    self.panes.pop_front();
                }
            }
            return self.panes.len() - 1;
        }
        let front = self.panes[0].id;
        if pid < back {
            // Out of order; beyond the kept panes it counts in the oldest one.
            let idx = (pid.max(front) - front) as usize;
            self.panes[idx].late += 1;
            return idx;
        }
        self.panes.len() - 1
    }

    /// Renumber the live pages 0..live in stack order: each page's new position is its rank
    /// among the marks, so one pass over the table (no sort). Inlined: the feed loop's popcnt
    /// build counts the ranks too.
    #[inline(always)]
    fn compact(&mut self) {
        {
            let rank = self.olken.ranks();
            for e in self.pages.occupied_mut() {
                e.pos = rank(e.pos);
            }
        }
        self.olken.compacted();
    }

    /// The sampling hash of a page (0 when nothing samples: exact mode, no miniature caches).
    #[inline]
    pub fn hash(&self, obj: u32, page: u64) -> u64 {
        if self.hashes() {
            page_hash((obj, page), self.seed)
        } else {
            0
        }
    }

    /// Whether anything samples by the pages' hashes: a SHARDS stack or sampled caches.
    #[inline]
    fn hashes(&self) -> bool {
        self.mode != Mode::Exact || self.minis.as_ref().is_some_and(|m| m.threshold != u64::MAX)
    }

    /// Warm the cache for a reference that comes soon (h: its hash()). Stage 0 (far ahead)
    /// loads its page-table slot (and miniature caches' index slot); stage 1 (nearer, the slot
    /// loaded by then) the line of the Olken bitmap holding the page's previous position (and
    /// the caches' row).
    #[inline]
    pub fn prefetch(&self, obj: u32, page: u64, h: u64, stage: u8) {
        self.prefetch_lookups(obj, page, h, stage, true);
    }

    /// `prefetch`, with stage 1's Olken line only when `stack` (the staged run loads it itself).
    #[inline(always)]
    fn prefetch_lookups(&self, obj: u32, page: u64, h: u64, stage: u8, stack: bool) {
        if self.mode == Mode::Exact || h < self.threshold {
            if stage == 0 {
                self.pages.prefetch(obj, page);
            } else if stack {
                if let Some(pos) = self.pages.position_hint(obj, page) {
                    self.olken.prefetch(pos);
                }
            }
        }
        if let Some(m) = self
            .minis
            .as_ref()
            .filter(|m| m.threshold == u64::MAX || h < m.threshold)
        {
            m.caches.prefetch((obj, page), stage);
        }
    }

    /// Pane id `pid` as a page-table slot holds it (i32, relative to `pane_base`). A pane that
    /// does not fit moves the base to it; panes then more than 2^31 before it read as the oldest
    /// possible, which the kept panes' counts never reach.
    #[inline]
    fn slot_pane(&mut self, pid: i64) -> i32 {
        let rel = pid.wrapping_sub(self.pane_base);
        if rel as i32 as i64 == rel {
            return rel as i32;
        }
        self.rebase_panes(pid);
        0
    }

    #[cold]
    #[inline(never)]
    fn rebase_panes(&mut self, pid: i64) {
        let old = std::mem::replace(&mut self.pane_base, pid);
        for e in self.pages.occupied_mut() {
            e.pane = (old + e.pane as i64 - pid).clamp(i32::MIN as i64, i32::MAX as i64) as i32;
        }
    }

    fn move_latest(&mut self, from: i64, slot: usize, delta: i64) {
        let Some(front) = self.panes.front().map(|p| p.id) else {
            return;
        };
        if from < front {
            return;
        }
        if let Some(p) = self.panes.get_mut((from - front) as usize) {
            p.c.latest += delta;
            if let Some(o) = p.objects.get_mut(slot) {
                o.c.latest += delta;
            }
        }
    }

    /// One event; `h` is hash(obj, page), computed once by the caller (it also prefetches).
    /// Inlined into the feed loop, which is also compiled with popcnt. The reference the staged
    /// run (`run_staged`) is tested against, so its counting is written out again there rather
    /// than shared: a fault in shared code would pass that test (sharing it also measured 6 %
    /// slower with everything in cache).
    #[inline(always)]
    pub fn access(&mut self, t: f64, obj: u32, page: u64, access: u8, func: u8, h: u64) {
        let idx = self.pane_index((t / self.pane_seconds).floor() as i64);
        let a = (access as usize).min(TYPES - 1);
        let key: Key = (obj, page);
        let exact = self.mode == Mode::Exact;
        let rate = self.rate();
        let w = 1.0 / rate;
        let slot = self.slot(obj);
        let pane = &mut self.panes[idx];
        let pid = pane.id;
        if pane.objects.len() <= slot {
            pane.objects.resize_with(slot + 1, ObjPane::default);
        }
        let opane = &mut pane.objects[slot];
        if func != GETPAGE {
            if func == SET_WRITE_INTENT {
                pane.c.updates += 1;
                opane.c.updates += 1;
            }
            return;
        }
        pane.c.refs[a] += 1;
        opane.c.refs[a] += 1;
        if let Some(m) = self.minis.as_mut() {
            if m.threshold == u64::MAX || h < m.threshold {
                let w = 1.0 / m.rate.min(1.0);
                let row = &mut pane.mini;
                m.caches.access(key, a == 1, |ci, hit| {
                    row[ci][if hit { a } else { TYPES + a }] += w;
                });
            }
        }
        if !exact && h >= self.threshold {
            return;
        }
        pane.c.sampled[a] += w;
        opane.c.sampled[a] += w;
        if self.olken.is_full() {
            // Borrow dance: compaction needs &mut self; re-fetch the panes after.
            self.compact();
        }
        self.sampled_access(idx, slot, key, a, h, w, rate, pid)
    }

    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn sampled_access(&mut self, idx: usize, slot: usize, key: Key, a: usize, h: u64, w: f64, rate: f64, pid: i64) {
        let mut moved_from: Option<i64> = None;
        let mut is_new = false;
        let spid = self.slot_pane(pid);
        let base = self.pane_base;
        {
            let pane = &mut self.panes[idx];
            let (i, present) = self.pages.entry(key.0, key.1);
            let e = self.pages.slot_mut(i);
            if present {
                let d = self.olken.distance(e.pos);
                self.olken.unmark(e.pos);
                e.pos = self.olken.mark_next();
                let scaled = if rate >= 1.0 { d } else { (d as f64 / rate) as u64 };
                let b = self.buckets.index(scaled);
                pane.count(slot, a, b, w);
                let opane = &mut pane.objects[slot];
                if spid > e.pane {
                    pane.c.touched += w;
                    opane.c.touched += w;
                    pane.c.latest += 1;
                    opane.c.latest += 1;
                    moved_from = Some(base + e.pane as i64);
                    e.pane = spid;
                }
            } else {
                let opane = &mut pane.objects[slot];
                e.pos = self.olken.mark_next();
                e.pane = spid;
                pane.c.cold[a] += w;
                opane.c.cold[a] += w;
                pane.c.touched += w;
                opane.c.touched += w;
                pane.c.latest += 1;
                opane.c.latest += 1;
                is_new = true;
            }
        }
        if let Some(from) = moved_from {
            self.move_latest(from, slot, -1);
        }
        if is_new {
            if let Mode::FixedSize(max) = self.mode {
                self.heap.push((h, key));
                while self.heap.len() > max {
                    let Some((hv, victim)) = self.heap.pop() else { break };
                    self.threshold = hv;
                    if let Some(e) = self.pages.remove(victim.0, victim.1) {
                        self.olken.unmark(e.pos);
                        let vslot = self.slots[&victim.0] as usize;
                        self.move_latest(self.pane_base + e.pane as i64, vslot, -1);
                    }
                }
            }
        }
    }

    /// Whether `run_staged` may take this pool's events: every mode but fixed-size SHARDS, whose
    /// evictions change the stack between a getpage's table lookup and its distance.
    pub fn stages(&self) -> bool {
        !matches!(self.mode, Mode::FixedSize(_))
    }

    /// Events `ev(k)` (time, object, page, access, function) for k in 0..n, as `access` one by
    /// one, but in three passes over each stretch of up to STAGE events of one pane. The first
    /// looks every page up in the table (FAR ahead prefetched), counts the pane's and object's
    /// figures and the miniature caches, and gives the page its next stack position, keeping the
    /// previous one; the second walks the Olken marks in order (`Olken::walk`, each previous
    /// position's line prefetched ahead) and turns each previous position into its distance's
    /// bucket; the third counts the buckets. Apart, each loop is short enough that the processor
    /// keeps more of its misses in flight than in one loop doing all (bench/README.md). Results
    /// are identical: positions are handed out in the same order, a stretch fits in the stack's
    /// free positions (compacted before it when none is left), and all of its distances go to
    /// the one pane it counts in. A pool that does not stage (`stages`) goes one by one.
    #[inline(always)]
    pub fn run_staged(&mut self, n: usize, ev: impl Fn(usize) -> (f64, u32, u64, u8, u8)) {
        if !self.stages() {
            for k in 0..n {
                let (t, o, p, a, f) = ev(k);
                let h = self.hash(o, p);
                self.access(t, o, p, a, f, h);
            }
            return;
        }
        // Compiled once per case, so the common one (exact, no caches) tests nothing per event
        // for the others.
        match (self.hashes(), self.minis.is_some()) {
            (false, false) => self.stretches::<false, false>(n, ev),
            (false, true) => self.stretches::<false, true>(n, ev),
            (true, false) => self.stretches::<true, false>(n, ev),
            (true, true) => self.stretches::<true, true>(n, ev),
        }
    }

    /// `run_staged` where pages are hashed (HASHED: a sampled stack or sampled caches) and
    /// miniature caches run (MINIS) or not.
    #[inline(always)]
    fn stretches<const HASHED: bool, const MINIS: bool>(
        &mut self,
        n: usize,
        ev: impl Fn(usize) -> (f64, u32, u64, u8, u8),
    ) {
        const FAR: usize = 32;
        const NEAR: usize = 12;
        const RING: usize = 64;
        let hash = |s: &Self, o: u32, p: u64| if HASHED { page_hash((o, p), s.seed) } else { 0 };
        let mut ring = [0u64; RING];
        for (k, h) in ring.iter_mut().enumerate().take(FAR.min(n)) {
            let (_, o, p, _, _) = ev(k);
            *h = hash(self, o, p);
            self.prefetch_lookups(o, p, *h, 0, false);
        }
        let exact = self.mode == Mode::Exact;
        let rate = self.rate();
        let w = 1.0 / rate;
        let mut prev = [0u32; STAGE];
        let mut slots = [0u32; STAGE];
        let mut types = [0u8; STAGE];
        let mut k = 0;
        while k < n {
            if self.olken.room() == 0 {
                self.compact();
            }
            let end = n.min(k + STAGE).min(k + self.olken.room());
            let first = self.olken.next_position();
            let mut next = first;
            let mut staged = 0;
            let mut stretch: Option<(i64, usize)> = None; // (pane id, index) of the stretch
            while k < end {
                let (t, o, p, ac, fu) = ev(k);
                let pid = (t / self.pane_seconds).floor() as i64;
                if stretch.is_some_and(|(id, _)| id != pid) && staged > 0 {
                    break; // another pane: the distances so far go to theirs first
                }
                // Every event asks (a late one is counted late each time); the same pane id
                // gives the same index within a stretch, as no other opens a pane.
                let idx = self.pane_index(pid);
                stretch = Some((pid, idx));
                if k + FAR < n {
                    let (_, o, p, _, _) = ev(k + FAR);
                    let h = hash(self, o, p);
                    self.prefetch_lookups(o, p, h, 0, false);
                    ring[(k + FAR) % RING] = h;
                }
                if MINIS && k + NEAR < n {
                    let (_, o, p, _, _) = ev(k + NEAR);
                    self.prefetch_lookups(o, p, ring[(k + NEAR) % RING], 1, false);
                }
                let h = ring[k % RING];
                k += 1;
                let a = (ac as usize).min(TYPES - 1);
                let slot = self.slot(o);
                let pane = &mut self.panes[idx];
                let pid = pane.id;
                if pane.objects.len() <= slot {
                    pane.objects.resize_with(slot + 1, ObjPane::default);
                }
                let opane = &mut pane.objects[slot];
                if fu != GETPAGE {
                    if fu == SET_WRITE_INTENT {
                        pane.c.updates += 1;
                        opane.c.updates += 1;
                    }
                    continue;
                }
                pane.c.refs[a] += 1;
                opane.c.refs[a] += 1;
                if let Some(m) = self.minis.as_mut().filter(|_| MINIS) {
                    if m.threshold == u64::MAX || h < m.threshold {
                        let w = 1.0 / m.rate.min(1.0);
                        let row = &mut pane.mini;
                        m.caches.access((o, p), a == 1, |ci, hit| {
                            row[ci][if hit { a } else { TYPES + a }] += w;
                        });
                    }
                }
                if HASHED && !exact && h >= self.threshold {
                    continue;
                }
                pane.c.sampled[a] += w;
                opane.c.sampled[a] += w;
                let spid = self.slot_pane(pid);
                let base = self.pane_base;
                let pane = &mut self.panes[idx];
                let (i, present) = self.pages.entry(o, p);
                let e = self.pages.slot_mut(i);
                let mut moved_from = None;
                prev[staged] = if present {
                    if spid > e.pane {
                        let opane = &mut pane.objects[slot];
                        pane.c.touched += w;
                        opane.c.touched += w;
                        pane.c.latest += 1;
                        opane.c.latest += 1;
                        moved_from = Some(base + e.pane as i64);
                        e.pane = spid;
                    }
                    e.pos
                } else {
                    let opane = &mut pane.objects[slot];
                    e.pane = spid;
                    pane.c.cold[a] += w;
                    opane.c.cold[a] += w;
                    pane.c.touched += w;
                    opane.c.touched += w;
                    pane.c.latest += 1;
                    opane.c.latest += 1;
                    NEW
                };
                e.pos = next;
                next += 1;
                slots[staged] = slot as u32;
                types[staged] = a as u8;
                staged += 1;
                if let Some(from) = moved_from {
                    self.move_latest(from, slot, -1);
                }
            }
            let Some((_, idx)) = stretch else { continue };
            // Each previous position becomes its distance's bucket (NEW stays NEW); then the
            // buckets are counted, in a loop of their own: the histogram's lines, missed
            // after the table's traffic, are then loaded many at a time.
            let marks = &mut prev[..staged];
            debug_assert_eq!(self.olken.next_position(), first, "a staged position out of order");
            let buckets = self.buckets;
            if rate >= 1.0 {
                self.olken.walk(marks, NEW, |d| buckets.index(d) as u32);
            } else {
                self.olken
                    .walk(marks, NEW, |d| buckets.index((d as f64 / rate) as u64) as u32);
            }
            let pane = &mut self.panes[idx];
            for ((&b, &slot), &a) in marks.iter().zip(&slots).zip(&types) {
                if b != NEW {
                    pane.count(slot as usize, a as usize, b as usize, w);
                }
            }
        }
    }

    /// The last `n` panes (all kept panes when n is 0 or larger).
    pub fn window(&self, n: usize) -> impl Iterator<Item = &Pane> {
        let n = if n == 0 {
            self.panes.len()
        } else {
            n.min(self.panes.len())
        };
        self.panes.iter().skip(self.panes.len() - n)
    }

    /// Hits per access type at each size, over the window: the histogram up
    /// to each size plus the SHARDS correction (expected minus sampled
    /// weight, at distance 0).
    pub fn curve(&self, sizes: &[u64], n: usize) -> Vec<[f64; TYPES]> {
        let mut acc: [Vec<f64>; TYPES] = [Vec::new(), Vec::new(), Vec::new()];
        let mut correction = [0.0f64; TYPES];
        for p in self.window(n) {
            for a in 0..TYPES {
                if acc[a].len() < p.hist[a].len() {
                    acc[a].resize(p.hist[a].len(), 0.0);
                }
                for (b, v) in p.hist[a].iter().enumerate() {
                    acc[a][b] += v;
                }
                correction[a] += p.c.refs[a] as f64 - p.c.sampled[a];
            }
        }
        hits_at(
            &self.buckets,
            sizes,
            |a, f| {
                for (b, v) in acc[a].iter().enumerate() {
                    if *v != 0.0 {
                        f(b, *v);
                    }
                }
            },
            &correction,
        )
    }

    pub fn object_curves(&self, sizes: &[u64], n: usize) -> BTreeMap<u32, Vec<[f64; TYPES]>> {
        let mut hists: BTreeMap<u32, BTreeMap<u32, f64>> = BTreeMap::new();
        let mut corrections: BTreeMap<u32, [f64; TYPES]> = BTreeMap::new();
        for p in self.window(n) {
            for (slot, o) in p.objects.iter().enumerate() {
                let obj = &self.slot_objects[slot];
                let h = hists.entry(*obj).or_default();
                for (k, v) in p.object_hist(slot) {
                    *h.entry(k).or_insert(0.0) += v;
                }
                let c = corrections.entry(*obj).or_insert([0.0; TYPES]);
                for (a, ca) in c.iter_mut().enumerate() {
                    *ca += o.c.refs[a] as f64 - o.c.sampled[a];
                }
            }
        }
        hists
            .iter()
            .map(|(obj, h)| {
                let curve = hits_at(
                    &self.buckets,
                    sizes,
                    |a, f| {
                        let lo = (a as u32) << 28;
                        for (k, v) in h.range(lo..lo + (1 << 28)) {
                            f((k & ((1 << 28) - 1)) as usize, *v);
                        }
                    },
                    &corrections[obj],
                );
                (*obj, curve)
            })
            .collect()
    }
}

/// Evaluate hits at each size from a histogram visitor (per access type).
fn hits_at(
    buckets: &Buckets,
    sizes: &[u64],
    visit: impl Fn(usize, &mut dyn FnMut(usize, f64)),
    correction: &[f64; TYPES],
) -> Vec<[f64; TYPES]> {
    let mut out = vec![[0.0f64; TYPES]; sizes.len()];
    for a in 0..TYPES {
        visit(a, &mut |b, v| {
            for (si, &size) in sizes.iter().enumerate() {
                let f = buckets.hit_fraction(b, size);
                if f > 0.0 {
                    out[si][a] += v * f;
                }
            }
        });
        for (si, &size) in sizes.iter().enumerate() {
            if size > 0 {
                out[si][a] += correction[a];
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{naive_distances, naive_lru_hits, Rng};

    /// (time, object, page) getpages: random access, 10 per second.
    fn trace(seed: u64, n: usize, pages: u64) -> Vec<(f64, u32, u64)> {
        let mut rng = Rng(seed);
        (0..n)
            .map(|i| (i as f64 * 0.1, rng.below(4) as u32, rng.skewed(pages)))
            .collect()
    }

    /// As the feed loop does: staged when the mode allows, else one by one.
    fn feed(p: &mut PoolState, refs: &[(f64, u32, u64)]) {
        if p.stages() {
            return p.run_staged(refs.len(), |k| (refs[k].0, refs[k].1, refs[k].2, 0, GETPAGE));
        }
        for &(t, obj, page) in refs {
            let h = p.hash(obj, page);
            p.access(t, obj, page, 0, GETPAGE, h);
        }
    }

    /// Events of every kind: objects whose keys pack and one whose keys do not, pages past
    /// 2^40, all access types (3 counts as RID-list), set-write-intent and release records,
    /// late events (alone and in bursts of one pane) and, half way, a jump of `jump` seconds.
    fn mixed_events(seed: u64, n: usize, jump: f64) -> Vec<(f64, u32, u64, u8, u8)> {
        let mut rng = Rng(seed);
        let mut t = 1000.0;
        (0..n)
            .map(|i| {
                t += rng.below(3) as f64 * 0.01;
                if i == n / 2 {
                    t += jump;
                }
                let at = match (i % 97, rng.below(50)) {
                    (0..4, _) => t - 6.0, // a burst of late events of one pane
                    (_, 0) => t - 3.0 * rng.below(4) as f64,
                    _ => t,
                };
                let obj = [0, 1, 2, 3, 1 << 25][rng.below(5) as usize];
                let page = rng.skewed(3000) + if rng.below(20) == 0 { 1 << 41 } else { 0 };
                let func = [GETPAGE, GETPAGE, GETPAGE, GETPAGE, GETPAGE, GETPAGE, 1, 2][rng.below(8) as usize];
                (at, obj, page, rng.below(4) as u8, func)
            })
            .collect()
    }

    /// The state as bytes once its stack is compacted (when each path compacts may differ).
    fn compacted_bytes(p: &PoolState) -> Vec<u8> {
        let mut c = p.clone();
        c.compact();
        bincode::serialize(&c).unwrap()
    }

    #[test]
    fn a_staged_run_leaves_the_state_one_by_one_access_leaves() {
        // Panes of 2 s: stretches end at every pane change and late event; panes of 1e9 s: one
        // pane, so stretches run to their limit of events or of the stack's room. A jump of 500 s
        // passes every kept pane; one of 6e9 s moves the base page-table slots count panes from.
        let short = (2.0, 500.0);
        for (case, (mode, rate, minis, (pane, jump))) in [
            (Mode::Exact, 1.0, None, short),
            (Mode::Exact, 1.0, Some((Policy::LruVpseqt, 1.0)), short),
            (Mode::FixedRate, 0.4, Some((Policy::Fifo, 0.5)), short),
            (Mode::FixedRate, 0.4, None, short),
            (Mode::Exact, 1.0, Some((Policy::Lru, 0.3)), short),
            (Mode::Exact, 1.0, None, (1e9, 0.0)),
            (Mode::FixedRate, 0.4, Some((Policy::Lru, 1.0)), (1e9, 0.0)),
            (Mode::FixedRate, 1.0, None, (2.0, 6e9)),
        ]
        .into_iter()
        .enumerate()
        {
            let ev = mixed_events(40 + case as u64, 30_000, jump);
            // Seed 0 too: the page (0, 0) then hashes to 0.
            let mut want = PoolState::new(mode, rate, 8, case as u64 % 2 * 7, pane, 6);
            if let Some((policy, r)) = minis {
                want.set_minis(policy, vec![40, 300, 2000], r, 60.0);
            }
            let mut got = want.clone();
            assert!(got.stages());
            // Batches of several sizes, as the job feeds them, so stretches end everywhere; after
            // each, the states agree (and the staged stack's counts agree with its marks).
            let (mut k, mut batch) = (0, 0);
            for len in [1usize, 7, 1023, 1024, 1025, 5000].into_iter().cycle() {
                let part = &ev[k..(k + len).min(ev.len())];
                for &(t, o, p, a, f) in part {
                    let h = want.hash(o, p);
                    want.access(t, o, p, a, f, h);
                }
                got.run_staged(part.len(), |i| part[i]);
                got.olken.assert_consistent();
                assert!(
                    compacted_bytes(&got) == compacted_bytes(&want),
                    "case {case}: the staged state differs after batch {batch}"
                );
                (k, batch) = (k + part.len(), batch + 1);
                if k == ev.len() {
                    break;
                }
            }
            if pane < 10.0 {
                assert!(want.panes.iter().any(|p| p.late > 0), "case {case}: no late event");
            }
            if jump > 1e9 {
                assert_ne!(want.pane_base, 0, "case {case}: the base never moved");
            }
            assert_eq!(
                got.curve(&[10, 100, 1000], 0),
                want.curve(&[10, 100, 1000], 0),
                "case {case}"
            );
        }
    }

    fn hits(p: &PoolState, sizes: &[u64]) -> Vec<f64> {
        p.curve(sizes, 0).iter().map(|h| h.iter().sum()).collect()
    }

    #[test]
    fn exact_curve_equals_brute_force_lru() {
        let refs = trace(31, 30_000, 5000);
        let mut p = PoolState::new(Mode::Exact, 1.0, 14, 0, 1e9, 15); // one pane, buckets exact below 16 k
        feed(&mut p, &refs);
        let keys: Vec<(u32, u64)> = refs.iter().map(|r| (r.1, r.2)).collect();
        let d = naive_distances(&keys);
        let sizes = [1u64, 64, 500, 2000, 8000];
        for (size, got) in sizes.iter().zip(hits(&p, &sizes)) {
            assert_eq!(got, naive_lru_hits(&d, *size) as f64, "size {size}");
        }
        let c = &p.panes[0].c;
        assert_eq!(c.refs[0], 30_000);
        assert_eq!(
            c.cold[0] as usize,
            keys.iter().collect::<std::collections::HashSet<_>>().len()
        );
    }

    #[test]
    fn object_curves_equal_brute_force_lru_as_objects_join_panes() {
        // Panes where one object counts alone (its histogram is the pane's), where a second
        // joins mid-pane (the first one's is copied out), and where several interleave; and a
        // compaction or more on the way.
        let mut rng = Rng(40);
        let refs: Vec<(f64, u32, u64)> = (0..40_000)
            .map(|i| {
                let t = i as f64 * 0.01; // 100 s per 10,000: four panes of 100 s
                let obj = match i {
                    0..=9_999 => 7,                                       // pane 0: object 7 alone
                    10_000..=12_999 => 3,                                 // pane 1: object 3 alone ...
                    13_000..=19_999 => [3, 7][rng.below(2) as usize],     // ... then 7 joins
                    20_000..=29_999 => [3, 7, 11][rng.below(3) as usize], // pane 2: three
                    _ => 9,                                               // pane 3: object 9 alone
                };
                (t, obj, rng.skewed(3000))
            })
            .collect();
        let mut p = PoolState::new(Mode::Exact, 1.0, 14, 0, 100.0, 15);
        feed(&mut p, &refs);
        assert_eq!(p.panes.len(), 4);
        let solos: Vec<u32> = p.panes.iter().map(|q| q.solo).collect();
        assert_eq!(solos, vec![p.slots[&7], MANY, MANY, p.slots[&9]]);
        let keys: Vec<(u32, u64)> = refs.iter().map(|r| (r.1, r.2)).collect();
        let d = naive_distances(&keys);
        let sizes = [1u64, 30, 300, 1000, 2500];
        for (obj, curve) in p.object_curves(&sizes, 0) {
            for (k, size) in sizes.iter().enumerate() {
                let want = keys
                    .iter()
                    .zip(&d)
                    .filter(|(key, d)| key.0 == obj && matches!(d, Some(d) if d < size))
                    .count() as f64;
                assert_eq!(curve[k].iter().sum::<f64>(), want, "object {obj}, size {size}");
            }
        }
        // The last pane alone: object 9's curve is the pool's, the others count nothing.
        let last = p.object_curves(&sizes, 1);
        assert_eq!(last[&9], p.curve(&sizes, 1));
        assert!(last[&3].iter().all(|h| h.iter().all(|&v| v == 0.0)));
    }

    #[test]
    fn shards_fixed_rate_is_close_to_exact() {
        let refs = trace(32, 200_000, 40_000);
        let mut exact = PoolState::new(Mode::Exact, 1.0, 12, 0, 1e9, 15);
        let mut sampled = PoolState::new(Mode::FixedRate, 0.1, 12, 5, 1e9, 15);
        feed(&mut exact, &refs);
        feed(&mut sampled, &refs);
        assert!(sampled.tracked_pages() < exact.tracked_pages() / 5);
        let sizes = [1000u64, 4000, 10_000, 20_000];
        let n = refs.len() as f64;
        for ((size, e), s) in sizes.iter().zip(hits(&exact, &sizes)).zip(hits(&sampled, &sizes)) {
            // Miss ratios within 0.02 (SHARDS at R = 0.1 on 200 k references).
            assert!(((e - s) / n).abs() < 0.02, "size {size}: exact {e}, sampled {s}");
        }
    }

    #[test]
    fn shards_fixed_size_keeps_at_most_its_samples() {
        let refs = trace(33, 100_000, 50_000);
        let mut p = PoolState::new(Mode::FixedSize(2000), 1.0, 12, 9, 1e9, 15);
        feed(&mut p, &refs);
        assert!(p.tracked_pages() <= 2000 && p.tracked_pages() > 1900);
        assert!(p.rate() < 0.2, "the threshold did not come down: rate {}", p.rate());
    }

    #[test]
    fn panes_slide_and_keep_their_own_counts() {
        let refs = trace(34, 3000, 500); // 300 s of events
        let mut p = PoolState::new(Mode::Exact, 1.0, 12, 0, 60.0, 3);
        feed(&mut p, &refs);
        assert_eq!(p.panes.iter().map(|q| q.id).collect::<Vec<_>>(), vec![2, 3, 4]);
        assert!(p.panes.iter().all(|q| q.c.refs[0] == 600));
        assert_eq!(p.window(1).map(|q| q.id).collect::<Vec<_>>(), vec![4]);
    }

    /// (pane id, refs, cold, touched, latest) of a kept pane.
    type PaneCounts = (i64, u64, f64, f64, i64);

    /// Each kept pane's counts, and the curve at `sizes`.
    fn counts(p: &PoolState, sizes: &[u64]) -> (Vec<PaneCounts>, Vec<f64>) {
        let panes = p
            .panes
            .iter()
            .map(|q| (q.id, q.c.refs[0], q.c.cold[0], q.c.touched, q.c.latest));
        (panes.collect(), hits(p, sizes))
    }

    #[test]
    fn keys_that_do_not_pack_count_as_the_keys_that_do() {
        // The page table packs an object below 2^24 and a page below 2^40 in one word and keeps
        // other keys beside it: the same trace with its keys moved above those bounds (some
        // objects only, some pages only, some both) counts the same, and equals brute force.
        let refs = trace(35, 20_000, 3000);
        let moved: Vec<(f64, u32, u64)> = refs
            .iter()
            .map(|&(t, obj, page)| match obj {
                0 => (t, obj, page),
                1 => (t, obj + (1 << 24), page),
                2 => (t, obj, page + (1 << 40)),
                _ => (t, u32::MAX - obj, u64::MAX - page),
            })
            .collect();
        let sizes = [1u64, 50, 400, 1500, 4000];
        let (mut a, mut b) = (
            PoolState::new(Mode::Exact, 1.0, 14, 0, 200.0, 15),
            PoolState::new(Mode::Exact, 1.0, 14, 0, 200.0, 15),
        );
        feed(&mut a, &refs);
        feed(&mut b, &moved);
        assert!(!b.pages.is_empty() && b.pages.len() == a.pages.len());
        assert_eq!(counts(&a, &sizes), counts(&b, &sizes));
        let d = naive_distances(&moved.iter().map(|r| (r.1, r.2)).collect::<Vec<_>>());
        for (size, got) in sizes.iter().zip(hits(&b, &sizes)) {
            assert_eq!(got, naive_lru_hits(&d, *size) as f64, "size {size}");
        }
    }

    #[test]
    fn panes_further_apart_than_a_slot_holds_keep_their_counts() {
        // A slot holds its page's pane in 32 bits, relative to a base. Ten panes from id 5 * 10^9
        // (the base moves to the first), a jump of 3 * 10^9 (the base moves again, the first
        // panes' pages now older than any kept), ten more, a late getpage: each kept pane counts
        // as with ids from 0 and a jump of 100, and its latest pages are brute force's.
        let first = trace(36, 6000, 400); // 600 s: ten panes of 60 s
        let second = trace(37, 6000, 600);
        let at = |base: f64, refs: &[(f64, u32, u64)]| -> Vec<(f64, u32, u64)> {
            refs.iter().map(|&(t, o, p)| (base * 60.0 + t, o, p)).collect()
        };
        let run = |b0: f64, b1: f64| {
            let mut p = PoolState::new(Mode::Exact, 1.0, 12, 0, 60.0, 15);
            feed(&mut p, &at(b0, &first));
            feed(&mut p, &at(b1, &second));
            feed(&mut p, &at(b1, &[(1.0, 1, 7), (1.0, 2, 599)])); // in the oldest kept pane
            p
        };
        let (near, far) = (run(0.0, 100.0), run(5e9, 8e9));
        assert_eq!(far.pane_base, 8_000_000_000, "the base did not move to the jump");
        assert_eq!(
            far.panes.iter().map(|q| q.id - 8_000_000_000).collect::<Vec<_>>(),
            (0..10).collect::<Vec<_>>()
        );
        let strip = |p: &PoolState| {
            let (panes, curve) = counts(p, &[10, 100, 500]);
            (panes.iter().map(|x| (x.1, x.2, x.3, x.4)).collect::<Vec<_>>(), curve)
        };
        assert_eq!(strip(&near), strip(&far));
        // The newest pane a page was counted in (a late getpage does not make a page's pane older).
        let mut last: std::collections::HashMap<(u32, u64), i64> = Default::default();
        let late = [(6000.0, 1, 7), (6000.0, 2, 599)]; // counted in pane 100
        for (base, refs) in [(0, &first[..]), (100, &second[..]), (0, &late[..])] {
            for &(t, o, p) in refs {
                let pane = base + (t / 60.0).floor() as i64;
                last.entry((o, p)).and_modify(|v| *v = (*v).max(pane)).or_insert(pane);
            }
        }
        for q in &near.panes {
            assert_eq!(
                q.c.latest,
                last.values().filter(|&&v| v == q.id).count() as i64,
                "pane {}",
                q.id
            );
        }
    }

    #[test]
    fn miniature_lru_caches_agree_with_the_stack() {
        let refs = trace(35, 30_000, 4000);
        let mut p = PoolState::new(Mode::Exact, 1.0, 14, 0, 1e9, 15);
        p.set_minis(Policy::Lru, vec![300, 1500], 1.0, 80.0);
        feed(&mut p, &refs);
        let stack = hits(&p, &[300, 1500]);
        let minis = &p.panes[0].mini;
        assert_eq!(minis[0][0], stack[0]);
        assert_eq!(minis[1][0], stack[1]);
        assert_eq!(minis[0][0] + minis[0][TYPES], 30_000.0);
    }

    #[test]
    fn retargeted_caches_go_on_as_caches_run_at_those_sizes_from_the_start() {
        // LRU: after a change, a cache moved from a bigger one continues exactly as one that ran
        // at its size all along (inclusion property); the windowed counts restart at the change.
        let refs = trace(37, 30_000, 4000);
        let (first, rest) = refs.split_at(15_000);
        let mut p = PoolState::new(Mode::Exact, 1.0, 14, 0, 1e9, 15);
        p.set_minis(Policy::Lru, vec![400, 800, 1600], 1.0, 80.0);
        feed(&mut p, first);
        p.retarget_minis(Policy::Lru, vec![600, 800, 1200], 1.0, 80.0, &[], &[]);
        assert!(p.panes[0].mini.iter().all(|row| row.iter().all(|&v| v == 0.0)));
        feed(&mut p, rest);
        let mut q = PoolState::new(Mode::Exact, 1.0, 14, 0, 1e9, 15);
        q.set_minis(Policy::Lru, vec![600, 800, 1200], 1.0, 80.0);
        feed(&mut q, first);
        for pane in q.panes.iter_mut() {
            pane.mini.iter_mut().for_each(|row| *row = [0.0; 2 * TYPES]);
        }
        feed(&mut q, rest);
        assert_eq!(p.panes[0].mini, q.panes[0].mini);
        // LRU with VPSEQT (a pool altered from VPSEQT 100 to 80) goes on warm: what LRU held.
        p.retarget_minis(Policy::LruVpseqt, vec![800], 1.0, 80.0, &[], &[]);
        assert_eq!(
            p.minis.as_ref().map(|m| (m.policy, m.caches.len(0))),
            Some((Policy::LruVpseqt, 800))
        );
        // FIFO keeps another order: it starts cold.
        p.retarget_minis(Policy::Fifo, vec![600], 1.0, 80.0, &[], &[]);
        assert_eq!(p.minis.as_ref().map(|m| m.caches.len(0)), Some(0));
    }

    #[test]
    fn a_change_to_a_lower_rate_goes_on_from_the_pages_that_rate_samples() {
        // Growing past the caches' budget halves their rate: each cache keeps the pages the new
        // rate samples, which (LRU, enough of them) are exactly what a cache run at the new rate
        // all along holds at the new size, so the counts after the change are the same.
        let refs = trace(41, 40_000, 6000);
        let (first, rest) = refs.split_at(20_000);
        let run = |rate: f64| {
            let mut p = PoolState::new(Mode::Exact, 1.0, 14, 7, 1e9, 15);
            p.set_minis(Policy::Lru, vec![2000], rate, 100.0);
            feed(&mut p, first);
            p.retarget_minis(Policy::Lru, vec![1000], 0.5, 100.0, &[], &[]);
            feed(&mut p, rest);
            p
        };
        let (p, q) = (run(1.0), run(0.5));
        assert_eq!(p.minis.as_ref().map(|m| m.rate), Some(0.5));
        assert!(p.panes[0].mini[0][0] > 0.0);
        assert_eq!(p.panes[0].mini, q.panes[0].mini);
        // Started cold instead, the same cache counts fewer hits after the change.
        let mut cold = PoolState::new(Mode::Exact, 1.0, 14, 7, 1e9, 15);
        cold.set_minis(Policy::Lru, vec![2000], 1.0, 100.0);
        feed(&mut cold, first);
        cold.set_minis(Policy::Lru, vec![1000], 0.5, 100.0);
        feed(&mut cold, rest);
        assert!(
            cold.panes[0].mini[0][0] < p.panes[0].mini[0][0],
            "{:?}",
            cold.panes[0].mini
        );
    }

    #[test]
    fn the_pane_across_a_change_counts_its_parts_at_the_old_and_the_new_size() {
        // The pool's own cache (named by `from`) keeps the latest pane's counts of the old one;
        // the others restart there too.
        let refs = trace(39, 30_000, 4000);
        let (first, rest) = refs.split_at(12_000);
        let start = |minis: Vec<u64>| {
            let mut p = PoolState::new(Mode::Exact, 1.0, 14, 0, 1e9, 15);
            p.set_minis(Policy::Lru, minis, 1.0, 80.0);
            feed(&mut p, first);
            p
        };
        let before = start(vec![800]).panes[0].mini[0];
        let mut p = start(vec![400, 800, 1600]);
        p.retarget_minis(Policy::Lru, vec![600, 1200], 1.0, 80.0, &[0, 800], &[]);
        assert_eq!(p.panes[0].mini, vec![[0.0; 2 * TYPES], before]);
        let mut after = p.clone();
        after.panes[0].mini[1] = [0.0; 2 * TYPES];
        feed(&mut p, rest);
        feed(&mut after, rest);
        assert_eq!(p.panes[0].mini[0], after.panes[0].mini[0]);
        let joined: Vec<f64> = (0..2 * TYPES).map(|k| before[k] + after.panes[0].mini[1][k]).collect();
        assert_eq!(p.panes[0].mini[1].to_vec(), joined);
        assert_eq!(joined.iter().sum::<f64>(), 30_000.0);
    }

    #[test]
    fn caches_of_one_size_at_other_thresholds_run_as_pools_altered_to_them() {
        // A VPSEQT per cache: the current size at 20 % and 90 % beside the pool's own 50 %,
        // each counting exactly what a pool running at that threshold alone counts.
        let refs = trace(38, 30_000, 3000);
        let run = |p: &mut PoolState| {
            for &(t, obj, page) in &refs {
                let h = p.hash(obj, page);
                p.access(t, obj, page, (page % 3 == 0) as u8, GETPAGE, h);
            }
        };
        let mut p = PoolState::new(Mode::Exact, 1.0, 14, 0, 1e9, 15);
        p.set_minis_at(
            Policy::LruVpseqt,
            vec![400, 800, 800, 800],
            1.0,
            50.0,
            &[50.0, 50.0, 20.0, 90.0],
        );
        run(&mut p);
        for (k, pct) in [(1usize, 50.0), (2, 20.0), (3, 90.0)] {
            let mut q = PoolState::new(Mode::Exact, 1.0, 14, 0, 1e9, 15);
            q.set_minis(Policy::LruVpseqt, vec![800], 1.0, pct);
            run(&mut q);
            assert_eq!(p.panes[0].mini[k], q.panes[0].mini[0], "VPSEQT {pct}");
        }
        assert_ne!(p.panes[0].mini[2], p.panes[0].mini[3]);
    }

    #[test]
    fn a_snapshot_restored_continues_identically() {
        let refs = trace(36, 40_000, 6000);
        let (first, rest) = refs.split_at(25_000);
        let mut p = PoolState::new(Mode::FixedRate, 0.3, 12, 3, 60.0, 15);
        p.set_minis(Policy::LruVpseqt, vec![200, 800], 0.3, 40.0);
        feed(&mut p, first);
        let bytes = bincode::serialize(&p).unwrap();
        let mut q: PoolState = bincode::deserialize(&bytes).unwrap();
        feed(&mut p, rest);
        feed(&mut q, rest);
        let sizes = [100u64, 1000, 5000];
        assert_eq!(p.curve(&sizes, 0), q.curve(&sizes, 0));
        assert_eq!(p.object_curves(&sizes, 0), q.object_curves(&sizes, 0));
        assert_eq!(
            p.panes.iter().map(|x| x.mini.clone()).collect::<Vec<_>>(),
            q.panes.iter().map(|x| x.mini.clone()).collect::<Vec<_>>()
        );
        assert_eq!((p.tracked_pages(), p.rate()), (q.tracked_pages(), q.rate()));
    }

    #[test]
    fn a_restored_pool_whose_panes_miss_a_cache_row_is_refused() {
        let mut p = PoolState::new(Mode::FixedRate, 0.3, 12, 3, 60.0, 15);
        p.set_minis(Policy::LruVpseqt, vec![200, 800], 0.3, 40.0);
        feed(&mut p, &trace(36, 5_000, 6000));
        assert_eq!(p.check(), Ok(()));
        let mut q: PoolState = bincode::deserialize(&bincode::serialize(&p).unwrap()).unwrap();
        let last = q.panes.back().map(|x| x.id).unwrap();
        q.panes.back_mut().unwrap().mini.pop(); // fed on, it would index past the row (a panic)
        assert_eq!(q.check(), Err(format!("pane {last} has 1 miniature cache rows, not 2")));
        let mut r = p.clone();
        r.minis.as_mut().unwrap().sizes.push(1600);
        assert_eq!(r.check(), Err("2 miniature caches for 3 sizes".to_string()));
    }
}
