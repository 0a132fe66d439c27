//! Miniature caches for policies that are not stack algorithms (Waldspurger et
//! al., ATC 2017): each candidate size gets a small real cache of size*rate
//! buffers fed the spatially sampled references.
//!
//! Policies: LRU; FIFO (PGSTEAL FIFO); and LRU with DB2's sequential steal
//! threshold VPSEQT, where a buffer last touched by a sequential getpage sits
//! on the sequential chain and, once that chain holds more than VPSEQT % of the
//! pool, steals come from it first.
//!
//! A pool's caches share one page index (`Caches`): a getpage is one probe for
//! all of them, then a row with each cache's mark for the page, instead of one
//! hash-map probe per cache. Each cache keeps its own chains over the index's
//! entry ids, as queues of uses (`One`), and sees the same inserts, touches and
//! steals as a cache on its own (the tests compare them with `Cache`, the
//! one-cache reference over linked lists).

use crate::table::PageTable;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;
#[cfg(test)]
use {
    crate::chains::Chains,
    rustc_hash::{FxHashMap, FxHashSet},
};

pub type Key = (u32, u64);

const NIL: u32 = u32::MAX;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Policy {
    Lru,
    Fifo,
    LruVpseqt,
}

impl Policy {
    /// Whether caches of `self` can go on from caches of `other` (`Caches::retargeted`): the
    /// same policy, or LRU and LRU with VPSEQT, which both keep every page on the chain of its
    /// last getpage; FIFO keeps another order.
    pub fn goes_on_from(self, other: Policy) -> bool {
        self == other || (self != Policy::Fifo && other != Policy::Fifo)
    }
}

/// A buffer's place in one cache, as its entry's row holds it: the chain in the top bit, the
/// cache's tick at its last use below; NIL when the cache does not hold the page.
type Mark = u32;
const SEQ_BIT: Mark = 1 << 31;
// Ticks stay below this (NIL's tick part is never a real one): the queues are renumbered first.
// The tests use small limits so that every test goes through the renumbering and compaction.
#[cfg(not(test))]
const TICK_LIMIT: u32 = SEQ_BIT - 1;
#[cfg(test)]
const TICK_LIMIT: u32 = 20_000;
// A cache's queues are compacted once its stale uses outnumber its buffers by STALE_SLACK.
#[cfg(not(test))]
const STALE_SLACK: usize = 4096;
#[cfg(test)]
const STALE_SLACK: usize = 40;

/// A use of a buffer, in its chain's queue: valid while the entry's row still holds `mark`.
#[derive(Clone, Copy, Debug)]
struct Use {
    entry: u32,
    mark: Mark,
}

/// One miniature cache over the shared index's entry ids. Each chain is a queue of uses in
/// tick order: a touch appends a new use and leaves the old one stale in place, so a hit writes
/// its row, the queue's tail and the cache's counts, and reads nothing cold. The chain's least
/// recently used buffer is the first valid use (stale ones are dropped as a steal reaches them),
/// which is exactly what a linked list would give, without the three dependent loads of an
/// unlink per hit.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct One {
    cap: usize,
    seq_limit: usize, // buffers the sequential chain may hold before it is stolen from first
    len: usize,
    lens: [usize; 2], // buffers per chain
    tick: u32,
    #[serde(skip)] // the rows' marks say it all: rebuilt on restore (`Caches::try_from`)
    queues: [VecDeque<Use>; 2],
    #[cfg(test)]
    #[serde(skip)]
    compactions: usize,
}

impl One {
    fn new(policy: Policy, cap: usize, vpseqt_pct: f64) -> Self {
        let cap = cap.max(1);
        One {
            cap,
            seq_limit: seq_limit(policy, cap, vpseqt_pct),
            len: 0,
            lens: [0; 2],
            tick: 0,
            queues: [VecDeque::new(), VecDeque::new()],
            #[cfg(test)]
            compactions: 0,
        }
    }

    /// Buffer `e` used (`old` its mark, NIL if not held) by a getpage of `chain`'s kind: most
    /// recently used there. Returns its new mark, which the caller writes to the row.
    #[inline]
    fn use_entry(&mut self, e: u32, old: Mark, chain: u8, rows: &mut [u32], stride: usize, k: usize) -> Mark {
        // Before the counts change: the queues then hold one valid use per buffer, the rest stale.
        if self.tick >= TICK_LIMIT {
            self.renumber(rows, stride, k);
        } else if self.stale() > self.len + STALE_SLACK {
            self.compact(rows, stride, k);
        }
        if old != NIL {
            self.lens[(old >> 31) as usize] -= 1;
        } else {
            self.len += 1;
        }
        let mark = (u32::from(chain) << 31) | self.tick;
        self.tick += 1;
        self.lens[chain as usize] += 1;
        self.queues[chain as usize].push_back(Use { entry: e, mark });
        mark
    }

    fn stale(&self) -> usize {
        self.queues[0].len() + self.queues[1].len() - self.len
    }

    /// The first valid use of `chain`'s queue (its least recently used buffer), stale ones dropped.
    #[inline]
    fn oldest(&mut self, chain: usize, rows: &[u32], stride: usize, k: usize) -> Option<Use> {
        let q = &mut self.queues[chain];
        while let Some(&u) = q.front() {
            // The rows a steal checks next are cold: load them while this one is checked.
            if let Some(a) = q.get(AHEAD) {
                prefetch(rows, a.entry as usize * stride + k);
            }
            if rows[u.entry as usize * stride + k] == u.mark {
                return Some(u);
            }
            q.pop_front();
        }
        None
    }

    /// The buffer a steal takes (DB2's rule, as `Chains::victim`): the sequential chain's least
    /// recently used while that chain holds more than `seq_limit` buffers, else the least
    /// recently used of either. Taken off its queue; the caller clears its row.
    fn steal(&mut self, rows: &[u32], stride: usize, k: usize) -> Option<u32> {
        let (c, u) = if self.lens[1] > self.seq_limit || self.lens[0] == 0 {
            (1, self.oldest(1, rows, stride, k)?)
        } else if self.lens[1] == 0 {
            (0, self.oldest(0, rows, stride, k)?)
        } else {
            let a = self.oldest(0, rows, stride, k)?;
            let b = self.oldest(1, rows, stride, k)?;
            if b.mark & !SEQ_BIT < a.mark & !SEQ_BIT {
                (1, b)
            } else {
                (0, a)
            }
        };
        self.queues[c].pop_front();
        self.lens[c] -= 1;
        self.len -= 1;
        Some(u.entry)
    }

    /// Drop the stale uses, in place. Amortised: it runs after at least `len` + STALE_SLACK stale
    /// uses, so each use is checked about twice. (Waiting for twice as many was slower: the
    /// queues then outgrow the caches.)
    #[cold]
    fn compact(&mut self, rows: &[u32], stride: usize, k: usize) {
        #[cfg(test)]
        {
            self.compactions += 1;
        }
        for q in self.queues.iter_mut() {
            let s = q.make_contiguous();
            let mut w = 0;
            for r in 0..s.len() {
                if let Some(a) = s.get(r + AHEAD) {
                    prefetch(rows, a.entry as usize * stride + k);
                }
                let u = s[r];
                if rows[u.entry as usize * stride + k] == u.mark {
                    s[w] = u;
                    w += 1;
                }
            }
            q.truncate(w);
        }
    }

    /// Compact, then number the valid uses again from 0 in their order across both chains,
    /// rows included, so ticks never wrap.
    #[cold]
    fn renumber(&mut self, rows: &mut [u32], stride: usize, k: usize) {
        self.compact(rows, stride, k);
        let [a, b] = &mut self.queues;
        let (mut i, mut j, mut t) = (0, 0, 0u32);
        while i < a.len() || j < b.len() {
            // Marks not yet renumbered are compared: each queue is in tick order.
            let u = if j == b.len() || (i < a.len() && (a[i].mark & !SEQ_BIT) < (b[j].mark & !SEQ_BIT)) {
                i += 1;
                &mut a[i - 1]
            } else {
                j += 1;
                &mut b[j - 1]
            };
            u.mark = (u.mark & SEQ_BIT) | t;
            rows[u.entry as usize * stride + k] = u.mark;
            t += 1;
        }
        self.tick = t;
    }
}

// How far ahead in a queue a steal loads the rows it will check.
const AHEAD: usize = 8;

#[inline(always)]
fn prefetch(rows: &[u32], at: usize) {
    if let Some(r) = rows.get(at) {
        crate::prefetch::line(r);
    }
}

pub(crate) fn seq_limit(policy: Policy, cap: usize, vpseqt_pct: f64) -> usize {
    match policy {
        Policy::LruVpseqt => ((cap as f64) * vpseqt_pct.clamp(0.0, 100.0) / 100.0).floor() as usize,
        _ => cap,
    }
}

/// A cache line of an entry's row.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
#[repr(C, align(64))]
struct Line([u32; 16]);

/// Rows as one slice of u32 (a Line is 16 of them, nothing else).
fn flat(rows: &[Line]) -> &[u32] {
    // SAFETY: Line is repr(C) over [u32; 16]: same layout, size 64, no padding.
    unsafe { std::slice::from_raw_parts(rows.as_ptr() as *const u32, rows.len() * 16) }
}

fn flat_mut(rows: &mut [Line]) -> &mut [u32] {
    // SAFETY: as flat().
    unsafe { std::slice::from_raw_parts_mut(rows.as_mut_ptr() as *mut u32, rows.len() * 16) }
}

/// A pool's miniature caches of one policy over one page index.
///
/// Everything a steal reads of an entry is in its row, whole cache lines (one for up to 12
/// caches): each cache's mark, then how many caches hold it, then its page (object, page's low
/// and high word) for the index's removal once none does.
///
/// A snapshot is the rows and each cache's counts: the index and the queues follow from the
/// rows (a held entry's page, each mark's chain and tick), so they are rebuilt on restore, with
/// the stale uses gone. Against writing them too, a third of the bytes to compress at every
/// pane (day-posting's BP1).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(try_from = "Stored")]
pub struct Caches {
    policy: Policy,
    #[serde(skip)]
    index: PageTable, // (object, page) -> entry id (in the slot's pos)
    rows: Vec<Line>, // per entry, `stride` u32 wide
    stride: usize,
    free: Vec<u32>, // released entry ids
    caches: Vec<One>,
}

/// What a snapshot holds of `Caches`, in its fields' order.
#[derive(Deserialize)]
struct Stored {
    policy: Policy,
    rows: Vec<Line>,
    stride: usize,
    free: Vec<u32>,
    caches: Vec<One>,
}

impl TryFrom<Stored> for Caches {
    type Error = String;

    /// The index and the queues again from the rows, every count, the free list and the ticks
    /// checked against them: what restores is a state access() could have reached.
    fn try_from(s: Stored) -> Result<Caches, String> {
        let (nk, stride) = (s.caches.len(), s.stride);
        let bad = |what: String| Err(format!("miniature caches' snapshot: {what}"));
        if stride != stride_for(nk) {
            return bad(format!("rows {stride} wide for {nk} caches"));
        }
        if !s.rows.len().is_multiple_of(stride / 16) {
            return bad(format!("{} lines of rows {stride} wide", s.rows.len()));
        }
        let rows = flat(&s.rows);
        let n = rows.len() / stride;
        let mut index = PageTable::default();
        let mut uses: Vec<[Vec<Use>; 2]> = (0..nk).map(|_| [Vec::new(), Vec::new()]).collect();
        for e in 0..n {
            let at = e * stride;
            let marks = &rows[at..at + nk];
            let held = marks.iter().filter(|&&m| m != NIL).count();
            if held != rows[at + nk] as usize {
                return bad(format!("entry {e} counts {} caches, {held} hold it", rows[at + nk]));
            }
            for (k, &mark) in marks.iter().enumerate().filter(|(_, &m)| m != NIL) {
                uses[k][(mark >> 31) as usize].push(Use { entry: e as u32, mark });
            }
            if held > 0 {
                let key = key_at(rows, at + nk);
                let (i, present) = index.entry(key.0, key.1);
                if present {
                    return bad(format!("page {key:?} in two entries"));
                }
                index.slot_mut(i).pos = e as u32;
            }
        }
        // The free list is exactly the entries no cache holds, each once.
        let mut free = vec![false; n];
        for &e in &s.free {
            let e = e as usize;
            if e >= n || rows[e * stride + nk] != 0 || std::mem::replace(&mut free[e], true) {
                return bad(format!("free entry {e} of {n}: held, listed twice or past the rows"));
            }
        }
        if n - index.len() != s.free.len() {
            return bad(format!("{} free entries of {n}, {} held", s.free.len(), index.len()));
        }
        let mut caches = s.caches;
        for (k, (c, u)) in caches.iter_mut().zip(uses).enumerate() {
            for (ch, mut q) in u.into_iter().enumerate() {
                q.sort_unstable_by_key(|u| u.mark);
                if q.len() != c.lens[ch] || q.last().is_some_and(|u| u.mark & !SEQ_BIT >= c.tick) {
                    return bad(format!(
                        "cache {k} chain {ch}: {} buffers, {} marked",
                        c.lens[ch],
                        q.len()
                    ));
                }
                c.queues[ch] = q.into();
            }
            if c.len != c.lens[0] + c.lens[1] || c.len > c.cap || c.cap == 0 || c.tick > TICK_LIMIT {
                return bad(format!("cache {k}: {} buffers of {}, tick {}", c.len, c.cap, c.tick));
            }
            // Each use its own tick, across both chains (the steal rule compares them).
            let mut ticks: Vec<u32> = c.queues.iter().flatten().map(|u| u.mark & !SEQ_BIT).collect();
            ticks.sort_unstable();
            if ticks.windows(2).any(|w| w[0] == w[1]) {
                return bad(format!("cache {k}: two buffers used at one tick"));
            }
        }
        Ok(Caches {
            policy: s.policy,
            index,
            rows: s.rows,
            stride,
            free: s.free,
            caches,
        })
    }
}

fn stride_for(caches: usize) -> usize {
    (caches + 4).div_ceil(16) * 16
}

impl Caches {
    /// Caches of `policy`, one per (buffers, VPSEQT %) in `specs`, empty.
    pub fn new(policy: Policy, specs: &[(usize, f64)]) -> Self {
        Caches {
            policy,
            index: PageTable::default(),
            rows: Vec::new(),
            stride: stride_for(specs.len()),
            free: Vec::new(),
            caches: specs.iter().map(|&(cap, pct)| One::new(policy, cap, pct)).collect(),
        }
    }

    pub fn policy(&self) -> Policy {
        self.policy
    }

    pub fn count(&self) -> usize {
        self.caches.len()
    }

    /// Buffers cache `k` holds.
    pub fn len(&self, k: usize) -> usize {
        self.caches[k].len
    }

    /// Pages held by any cache (the index's entries).
    pub fn pages(&self) -> usize {
        self.index.len()
    }

    /// Entry ids handed out so far (held or free).
    fn entries(&self) -> usize {
        self.rows.len() * 16 / self.stride
    }

    fn key(&self, e: usize) -> Key {
        key_at(flat(&self.rows), e * self.stride + self.caches.len())
    }

    /// Start loading what a coming access of `key` reads: stage 0 its index slot, stage 1 (the
    /// slot loaded by then) its row.
    #[inline]
    pub fn prefetch(&self, key: Key, stage: u8) {
        if stage == 0 {
            self.index.prefetch(key.0, key.1);
            return;
        }
        if let Some(s) = self.index.get(key.0, key.1) {
            prefetch(flat(&self.rows), s.pos as usize * self.stride);
        }
    }

    /// Reference `key` in every cache (`sequential`: a sequential-prefetch getpage); `hit(k,
    /// was_hit)` is called for each cache k in order.
    #[inline]
    pub fn access(&mut self, key: Key, sequential: bool, mut hit: impl FnMut(usize, bool)) {
        let (nk, stride) = (self.caches.len(), self.stride);
        let e = self.entry(key);
        let chain = sequential as u8;
        let fifo = self.policy == Policy::Fifo;
        let at = e as usize * stride;
        let rows = flat_mut(&mut self.rows);
        for (k, c) in self.caches.iter_mut().enumerate() {
            let old = rows[at + k];
            if old != NIL {
                if !fifo {
                    rows[at + k] = c.use_entry(e, old, chain, rows, stride, k);
                }
                hit(k, true);
                continue;
            }
            // FIFO: one chain in insertion order, never touched; the steal takes its oldest.
            rows[at + k] = c.use_entry(e, NIL, if fifo { 0 } else { chain }, rows, stride, k);
            rows[at + nk] += 1;
            while c.len > c.cap {
                let Some(ve) = c.steal(rows, stride, k) else { break };
                let vat = ve as usize * stride;
                rows[vat + k] = NIL;
                rows[vat + nk] -= 1;
                // The page itself stays until every cache has seen it (one at VPSEQT 0 may
                // steal what it just took in); others go when no cache holds them.
                if rows[vat + nk] == 0 && ve != e {
                    Self::release(&mut self.index, &mut self.free, rows, vat + nk, ve);
                }
            }
            hit(k, false);
        }
        if rows[at + nk] == 0 {
            Self::release(&mut self.index, &mut self.free, rows, at + nk, e);
        }
    }

    /// The entry of `key`, a new one (held by no cache yet) when the index has none.
    #[inline(always)]
    fn entry(&mut self, key: Key) -> u32 {
        let (nk, stride) = (self.caches.len(), self.stride);
        let (i, present) = self.index.entry(key.0, key.1);
        if present {
            return self.index.slot_mut(i).pos;
        }
        let e = match self.free.pop() {
            Some(e) => e,
            None => {
                let e = self.entries() as u32;
                self.rows.resize(self.rows.len() + stride / 16, Line([NIL; 16]));
                e
            }
        };
        let at = e as usize * stride + nk;
        let row = flat_mut(&mut self.rows);
        row[at] = 0;
        put_key(row, at, key);
        self.index.slot_mut(i).pos = e;
        e
    }

    /// Caches of `policy`, one per (buffers, VPSEQT %) in `specs`, cache k holding the pages of
    /// `lists[k]` (least recently used first, each with whether a sequential getpage used it
    /// last; no page twice in a list), cut down to its size by the steal rule: what the cache
    /// would hold had those been its references. A FIFO cache puts every page on its one chain.
    pub fn filled(policy: Policy, specs: &[(usize, f64)], lists: &[Vec<(Key, bool)>]) -> Caches {
        let mut out = Caches::new(policy, specs);
        let (nk, stride) = (specs.len(), out.stride);
        for (k, list) in lists.iter().enumerate().take(nk) {
            for &(key, sequential) in list {
                let e = out.entry(key);
                let at = e as usize * stride;
                let rows = flat_mut(&mut out.rows);
                if rows[at + k] != NIL {
                    continue; // listed twice: the first place stands
                }
                let chain = if policy == Policy::Fifo { 0 } else { sequential as u8 };
                rows[at + k] = out.caches[k].use_entry(e, NIL, chain, rows, stride, k);
                rows[at + nk] += 1;
            }
            let rows = flat_mut(&mut out.rows);
            let c = &mut out.caches[k];
            while c.len > c.cap {
                let Some(ve) = c.steal(rows, stride, k) else { break };
                let vat = ve as usize * stride;
                rows[vat + k] = NIL;
                rows[vat + nk] -= 1;
                if rows[vat + nk] == 0 {
                    Self::release(&mut out.index, &mut out.free, rows, vat + nk, ve);
                }
            }
        }
        out
    }

    /// What cache `k` holds, least recently used first (in insertion order for FIFO), each page
    /// with whether it is on the sequential chain: a list `filled` takes.
    pub fn contents(&self, k: usize) -> Vec<(Key, bool)> {
        let rows = flat(&self.rows);
        let mut uses: Vec<Use> = self.caches[k]
            .queues
            .iter()
            .flatten()
            .filter(|u| rows[u.entry as usize * self.stride + k] == u.mark)
            .copied()
            .collect();
        uses.sort_unstable_by_key(|u| u.mark & !SEQ_BIT);
        uses.iter()
            .map(|u| (self.key(u.entry as usize), u.mark & SEQ_BIT != 0))
            .collect()
    }

    /// Entry `e`, held by no cache, out of the index (`at`: its count's place in the row).
    fn release(index: &mut PageTable, free: &mut Vec<u32>, rows: &[u32], at: usize, e: u32) {
        let key = key_at(rows, at);
        index.remove(key.0, key.1);
        free.push(e);
    }

    /// New caches of this policy, one per (from, buffers, VPSEQT %) in `specs`: a copy of old
    /// cache `from` holding only the pages `keep` accepts (a sample at a lower rate of the same
    /// pool), in their order, cut down to size by the steal rule as access() does (growing
    /// keeps everything), or an empty cache when `from` is None. What a pool resized by -ALTER
    /// BUFFERPOOL holds at that moment.
    ///
    /// `policy` may differ from the caches' own only between LRU and LRU with VPSEQT (a pool
    /// altered across VPSEQT 100): both keep every page on the chain of its last getpage, so the
    /// caches go on warm, stealing at the new policy's limit.
    pub fn retargeted(
        &self,
        policy: Policy,
        specs: &[(Option<usize>, usize, f64)],
        keep: impl Fn(&Key) -> bool,
    ) -> Caches {
        assert!(
            policy.goes_on_from(self.policy),
            "FIFO caches are not retargeted to another policy"
        );
        let (nk, n) = (specs.len(), self.entries());
        let (stride, old_stride) = (stride_for(nk), self.stride);
        let mut out = Caches {
            policy,
            index: self.index.clone(),
            rows: vec![Line([NIL; 16]); n * stride / 16],
            stride,
            free: self.free.clone(),
            caches: Vec::with_capacity(nk),
        };
        let old = flat(&self.rows);
        let keys: Vec<Key> = (0..n).map(|e| self.key(e)).collect();
        {
            // The counts are set once the caches are copied, below.
            let rows = flat_mut(&mut out.rows);
            for (e, &key) in keys.iter().enumerate() {
                put_key(rows, e * stride + nk, key);
            }
        }
        let mut live = vec![true; n];
        for &e in &self.free {
            live[e as usize] = false;
        }
        for (k, &(from, cap, pct)) in specs.iter().enumerate() {
            let Some(i) = from else {
                out.caches.push(One::new(policy, cap, pct));
                continue;
            };
            let rows = flat_mut(&mut out.rows);
            let mut c = self.caches[i].clone();
            // A released entry's row is all NIL: only the held pages are visited. The copied
            // uses stay valid for the pages kept (their marks are copied) and go stale for the rest.
            for (e, key) in keys.iter().enumerate() {
                let mark = old[e * old_stride + i];
                if mark == NIL {
                    continue;
                }
                if keep(key) {
                    rows[e * stride + k] = mark;
                } else {
                    c.lens[(mark >> 31) as usize] -= 1;
                    c.len -= 1;
                }
            }
            c.cap = cap.max(1);
            // The new VPSEQT's limit, as a new cache's (plain LRU keeps none): a pool altered
            // from VPSEQT 100 to 50 steals from its sequential chain from then on.
            c.seq_limit = seq_limit(policy, c.cap, pct);
            while c.len > c.cap {
                let Some(ve) = c.steal(rows, stride, k) else { break };
                rows[ve as usize * stride + k] = NIL;
            }
            c.renumber(rows, stride, k);
            out.caches.push(c);
        }
        let rows = flat_mut(&mut out.rows);
        for (e, &alive) in live.iter().enumerate() {
            let at = e * stride;
            rows[at + nk] = rows[at..at + nk].iter().filter(|&&m| m != NIL).count() as u32;
            if alive && rows[at + nk] == 0 {
                Self::release(&mut out.index, &mut out.free, rows, at + nk, e as u32);
            }
        }
        out
    }

    /// What cache `k` holds, per chain, most recently used first.
    #[cfg(test)]
    fn chain(&self, k: usize, chain: usize) -> Vec<u32> {
        let rows = flat(&self.rows);
        let q = &self.caches[k].queues[chain];
        q.iter()
            .rev()
            .filter(|u| rows[u.entry as usize * self.stride + k] == u.mark)
            .map(|u| u.entry)
            .collect()
    }

    /// The same, as pages.
    #[cfg(test)]
    fn chain_keys(&self, k: usize, chain: usize) -> Vec<Key> {
        self.chain(k, chain).iter().map(|&e| self.key(e as usize)).collect()
    }

    /// Every entry's row and count agree with the caches (one valid use per buffer, in tick
    /// order, on its mark's chain), and the index holds exactly the held pages.
    #[cfg(test)]
    fn check(&self) {
        let (nk, stride) = (self.caches.len(), self.stride);
        let rows = flat(&self.rows);
        let mut held = vec![0u32; self.entries()];
        for (k, c) in self.caches.iter().enumerate() {
            for ch in 0..2 {
                let marks: Vec<u32> = c.queues[ch].iter().map(|u| u.mark).collect();
                assert!(marks.iter().all(|m| (m >> 31) as usize == ch), "cache {k} chain {ch}");
                assert!(
                    marks.windows(2).all(|w| w[0] < w[1]),
                    "cache {k} chain {ch}: out of order"
                );
                assert!(marks.iter().all(|m| m & !SEQ_BIT < c.tick), "cache {k}");
                assert!(c.tick <= TICK_LIMIT, "cache {k}: tick {}", c.tick);
                assert_eq!(self.chain(k, ch).len(), c.lens[ch], "cache {k} chain {ch}");
            }
            let all: Vec<u32> = [0, 1].iter().flat_map(|&ch| self.chain(k, ch)).collect();
            assert_eq!(all.len(), c.len, "cache {k}");
            assert!(c.len <= c.cap);
            for e in all {
                assert_ne!(rows[e as usize * stride + k], NIL, "cache {k} entry {e}");
                held[e as usize] += 1;
            }
        }
        let live = held.iter().filter(|&&h| h > 0).count();
        assert_eq!(self.index.len(), live);
        for (e, &h) in held.iter().enumerate() {
            if h > 0 {
                assert_eq!(rows[e * stride + nk], h, "entry {e}");
                let key = self.key(e);
                assert_eq!(self.index.get(key.0, key.1).map(|s| s.pos), Some(e as u32));
            } else {
                assert!(self.free.contains(&(e as u32)), "entry {e} neither held nor free");
                assert!(rows[e * stride..e * stride + nk].iter().all(|&n| n == NIL), "entry {e}");
            }
        }
    }
}

/// The page stored after an entry's count (at `at`).
#[inline]
fn key_at(rows: &[u32], at: usize) -> Key {
    (rows[at + 1], u64::from(rows[at + 2]) | (u64::from(rows[at + 3]) << 32))
}

/// Store `key` after an entry's count (at `at`), as `key_at` reads it.
#[inline]
fn put_key(rows: &mut [u32], at: usize, key: Key) {
    rows[at + 1] = key.0;
    rows[at + 2] = key.1 as u32;
    rows[at + 3] = (key.1 >> 32) as u32;
}

/// One cache on its own (its own hash map): the reference the shared index is tested against.
#[cfg(test)]
#[derive(Clone, Debug)]
pub enum Cache {
    Fifo {
        cap: usize,
        queue: VecDeque<Key>,
        set: FxHashSet<Key>,
    },
    Chains(Lru2),
}

/// LRU with DB2's two chains and a sequential steal threshold, over chains::Chains.
#[cfg(test)]
#[derive(Clone, Debug)]
pub struct Lru2 {
    cap: usize,
    seq_limit: usize, // buffers the sequential chain may hold before it is stolen from first
    plain: bool,      // PGSTEAL LRU without VPSEQT: the limit is always the size
    chains: Chains<Key>,
    at: FxHashMap<Key, u32>,
}

#[cfg(test)]
impl Lru2 {
    fn new(cap: usize, seq_limit: usize, plain: bool) -> Self {
        Lru2 {
            cap,
            seq_limit,
            plain,
            chains: Chains::with_capacity(0),
            at: FxHashMap::default(),
        }
    }

    fn steal(&mut self) {
        if let Some(victim) = self.chains.victim(self.seq_limit) {
            let key = self.chains.remove(victim);
            self.at.remove(&key);
        }
    }

    fn access(&mut self, key: Key, sequential: bool) -> bool {
        let chain = sequential as u8;
        if let Some(&i) = self.at.get(&key) {
            self.chains.touch(i, chain);
            return true;
        }
        let i = self.chains.insert(key, chain);
        self.at.insert(key, i);
        while self.at.len() > self.cap {
            self.steal();
        }
        false
    }
}

#[cfg(test)]
impl Cache {
    pub fn new(policy: Policy, cap: usize, vpseqt_pct: f64) -> Self {
        let cap = cap.max(1);
        match policy {
            Policy::Fifo => Cache::Fifo {
                cap,
                queue: VecDeque::new(),
                set: FxHashSet::default(),
            },
            Policy::Lru | Policy::LruVpseqt => {
                let pct = if policy == Policy::Lru {
                    100.0
                } else {
                    vpseqt_pct.clamp(0.0, 100.0)
                };
                Cache::Chains(Lru2::new(
                    cap,
                    ((cap as f64) * pct / 100.0).floor() as usize,
                    policy == Policy::Lru,
                ))
            }
        }
    }

    /// Reference key; `sequential` for sequential-prefetch getpages. True on a hit.
    pub fn access(&mut self, key: Key, sequential: bool) -> bool {
        match self {
            Cache::Fifo { cap, queue, set } => {
                if set.contains(&key) {
                    return true;
                }
                set.insert(key);
                queue.push_back(key);
                if queue.len() > *cap {
                    if let Some(old) = queue.pop_front() {
                        set.remove(&old);
                    }
                }
                false
            }
            Cache::Chains(c) => c.access(key, sequential),
        }
    }

    /// Drop every buffer whose key `keep` refuses, the others' order unchanged: a sample taken
    /// at a lower rate (SHARDS keeps a page while its hash is under the rate) of the same pool.
    pub fn retain(&mut self, keep: impl Fn(&Key) -> bool) {
        match self {
            Cache::Fifo { queue, set, .. } => {
                queue.retain(|k| keep(k));
                set.retain(|k| keep(k));
            }
            Cache::Chains(c) => {
                let gone: Vec<(Key, u32)> = c.at.iter().filter(|(k, _)| !keep(k)).map(|(k, &i)| (*k, i)).collect();
                for (k, i) in gone {
                    c.chains.remove(i);
                    c.at.remove(&k);
                }
            }
        }
    }

    /// This cache's contents in a cache of `cap` buffers (and, for the chains, VPSEQT `vpseqt_pct`):
    /// what a pool resized by -ALTER BUFFERPOOL holds at that moment. Shrinking steals as
    /// access() does; growing keeps everything.
    pub fn resized(&self, cap: usize, vpseqt_pct: f64) -> Cache {
        let cap = cap.max(1);
        let mut out = self.clone();
        match &mut out {
            Cache::Fifo { cap: c, queue, set } => {
                *c = cap;
                while queue.len() > cap {
                    if let Some(old) = queue.pop_front() {
                        set.remove(&old);
                    }
                }
            }
            Cache::Chains(c) => {
                c.cap = cap;
                c.seq_limit = if c.plain {
                    cap
                } else {
                    ((cap as f64) * vpseqt_pct.clamp(0.0, 100.0) / 100.0).floor() as usize
                };
                while c.at.len() > cap {
                    c.steal();
                }
            }
        }
        out
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn len(&self) -> usize {
        match self {
            Cache::Fifo { set, .. } => set.len(),
            Cache::Chains(c) => c.at.len(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{naive_distances, naive_lru_hits, Rng};

    fn refs(seed: u64, n: usize, pages: u64) -> Vec<(Key, bool)> {
        let mut rng = Rng(seed);
        (0..n)
            .map(|_| ((rng.below(3) as u32, rng.skewed(pages)), rng.below(3) == 1))
            .collect()
    }

    fn hits(cache: &mut Cache, refs: &[(Key, bool)]) -> u64 {
        refs.iter().filter(|(k, seq)| cache.access(*k, *seq)).count() as u64
    }

    #[test]
    fn lru_hits_equal_the_stack_distance_prediction() {
        let r = refs(11, 20_000, 3000);
        let keys: Vec<Key> = r.iter().map(|(k, _)| *k).collect();
        let d = naive_distances(&keys);
        for size in [1usize, 10, 100, 500, 2000] {
            let mut c = Cache::new(Policy::Lru, size, 80.0);
            assert_eq!(hits(&mut c, &r), naive_lru_hits(&d, size as u64), "size {size}");
            assert!(c.len() <= size);
        }
    }

    #[test]
    fn fifo_equals_a_naive_queue() {
        let r = refs(12, 20_000, 2000);
        for size in [1usize, 50, 700] {
            let mut queue: VecDeque<Key> = VecDeque::new();
            let mut want = 0u64;
            for (k, _) in &r {
                if queue.contains(k) {
                    want += 1;
                } else {
                    queue.push_back(*k);
                    if queue.len() > size {
                        queue.pop_front();
                    }
                }
            }
            let mut c = Cache::new(Policy::Fifo, size, 80.0);
            assert_eq!(hits(&mut c, &r), want, "size {size}");
        }
    }

    /// DB2's two chains, naively: a list of (key, sequential, last use); steal the oldest
    /// sequential buffer while the sequential chain is over its limit, else the oldest of all.
    fn naive_vpseqt_hits(refs: &[(Key, bool)], cap: usize, pct: f64) -> u64 {
        let limit = ((cap as f64) * pct / 100.0).floor() as usize;
        let mut bufs: Vec<(Key, bool, usize)> = Vec::new();
        let mut hits = 0;
        for (t, (k, seq)) in refs.iter().enumerate() {
            if let Some(b) = bufs.iter_mut().find(|b| b.0 == *k) {
                *b = (*k, *seq, t);
                hits += 1;
                continue;
            }
            bufs.push((*k, *seq, t));
            while bufs.len() > cap {
                let seq_count = bufs.iter().filter(|b| b.1).count();
                let victim = (0..bufs.len())
                    .filter(|&i| seq_count <= limit || bufs[i].1)
                    .min_by_key(|&i| bufs[i].2)
                    .unwrap();
                bufs.remove(victim);
            }
        }
        hits
    }

    #[test]
    fn vpseqt_equals_a_naive_two_chain_pool() {
        let r = refs(13, 8000, 600);
        for (size, pct) in [(50usize, 20.0), (200, 40.0), (200, 0.0), (400, 80.0)] {
            let mut c = Cache::new(Policy::LruVpseqt, size, pct);
            assert_eq!(
                hits(&mut c, &r),
                naive_vpseqt_hits(&r, size, pct),
                "size {size}, VPSEQT {pct}"
            );
        }
    }

    #[test]
    fn a_resized_cache_holds_what_a_cache_of_that_size_would() {
        // LRU has the inclusion property: a big cache cut down to size holds exactly the
        // small cache's pages, so both go on with the same hits.
        let r = refs(15, 20_000, 3000);
        let (first, rest) = r.split_at(12_000);
        let mut big = Cache::new(Policy::Lru, 1200, 100.0);
        let mut small = Cache::new(Policy::Lru, 300, 100.0);
        hits(&mut big, first);
        hits(&mut small, first);
        let mut cut = big.resized(300, 100.0);
        assert_eq!(cut.len(), 300);
        assert_eq!(hits(&mut cut, rest), hits(&mut small, rest));
        // Growing keeps every page: the first references after it hit as in the old cache.
        let mut grown = small.resized(5000, 100.0);
        assert_eq!(grown.len(), small.len());
        let again: Vec<(Key, bool)> = first[first.len() - 50..].to_vec();
        let mut copy = small.clone();
        assert_eq!(hits(&mut grown, &again), hits(&mut copy, &again));
        // FIFO keeps its newest pages.
        let mut f = Cache::new(Policy::Fifo, 500, 80.0);
        hits(&mut f, first);
        assert_eq!(f.resized(100, 80.0).len(), 100);
    }

    #[test]
    fn a_vpseqt_cache_cut_down_steals_from_the_sequential_chain_first() {
        let mut c = Cache::new(Policy::LruVpseqt, 100, 50.0);
        for p in 0..60u64 {
            c.access((0, p), true); // 60 sequential buffers
        }
        for p in 0..40u64 {
            c.access((1, p), false); // 40 random buffers, newer
        }
        let cut = c.resized(80, 50.0); // limit 40 sequential: the 20 oldest sequential go
        let Cache::Chains(c) = &cut else { panic!() };
        let (random, sequential) = (c.chains.chain(0), c.chains.chain(1));
        assert_eq!((random.len(), sequential.len()), (40, 40));
        assert!(sequential.iter().all(|k| k.1 >= 20));
    }

    #[test]
    fn vpseqt_100_is_plain_lru() {
        let r = refs(14, 10_000, 1500);
        let mut a = Cache::new(Policy::LruVpseqt, 300, 100.0);
        let mut b = Cache::new(Policy::Lru, 300, 0.0);
        assert_eq!(hits(&mut a, &r), hits(&mut b, &r));
    }

    /// The reference: each cache on its own.
    fn separate(policy: Policy, specs: &[(usize, f64)]) -> Vec<Cache> {
        specs.iter().map(|&(cap, pct)| Cache::new(policy, cap, pct)).collect()
    }

    fn contents(c: &Cache) -> [Vec<Key>; 2] {
        match c {
            Cache::Fifo { queue, .. } => [queue.iter().rev().copied().collect(), Vec::new()],
            Cache::Chains(c) => [c.chains.chain(0), c.chains.chain(1)],
        }
    }

    /// Feed both; every cache's hit or miss, and at the end its chains, must agree.
    fn same(shared: &mut Caches, alone: &mut [Cache], refs: &[(Key, bool)], what: &str) {
        for (t, (k, seq)) in refs.iter().enumerate() {
            let mut got = Vec::new();
            shared.access(*k, *seq, |ci, hit| got.push((ci, hit)));
            let want: Vec<(usize, bool)> = alone.iter_mut().map(|c| c.access(*k, *seq)).enumerate().collect();
            assert_eq!(got, want, "{what}: reference {t}");
            if t % 997 == 0 {
                shared.check();
            }
        }
        shared.check();
        for (k, c) in alone.iter().enumerate() {
            let want = contents(c);
            assert_eq!(
                [shared.chain_keys(k, 0), shared.chain_keys(k, 1)],
                want,
                "{what}: cache {k}"
            );
            assert_eq!(shared.len(k), c.len(), "{what}: cache {k}");
        }
    }

    /// Many objects, skewed pages, a third of them sequential.
    fn mixed(seed: u64, n: usize, pages: u64, objects: u64) -> Vec<(Key, bool)> {
        let mut rng = Rng(seed);
        (0..n)
            .map(|_| ((rng.below(objects) as u32, rng.skewed(pages)), rng.below(3) == 1))
            .collect()
    }

    #[test]
    fn the_shared_index_hits_as_separate_caches_do() {
        // Sizes from 1 buffer to more than the footprint; VPSEQT 0 (a sequential page is stolen
        // as soon as it comes in), 100, and between; two caches of one size.
        let specs = [
            (1usize, 50.0),
            (7, 0.0),
            (60, 20.0),
            (60, 80.0),
            (300, 0.0),
            (300, 100.0),
            (1500, 40.0),
            (9000, 80.0),
        ];
        for (seed, policy) in [(21, Policy::Lru), (22, Policy::Fifo), (23, Policy::LruVpseqt)] {
            let r = mixed(seed, 30_000, 2500, 40);
            let mut shared = Caches::new(policy, &specs);
            let mut alone = separate(policy, &specs);
            same(&mut shared, &mut alone, &r, &format!("{policy:?}"));
            let lens: Vec<usize> = (0..specs.len()).map(|k| shared.len(k)).collect();
            assert_eq!(lens[7], 9000, "{policy:?}: the biggest cache never filled");
            assert!(
                shared.pages() >= 9000 && shared.pages() <= lens.iter().sum(),
                "{policy:?}"
            );
        }
    }

    #[test]
    fn only_caches_at_vpseqt_0_give_the_page_it_stays_until_all_saw_it() {
        // Every cache at VPSEQT 0 steals a sequential page it just took in: the entry is released
        // after the last cache, and the next page reuses it.
        let specs = [(5usize, 0.0), (9, 0.0)];
        let mut shared = Caches::new(Policy::LruVpseqt, &specs);
        let mut alone = separate(Policy::LruVpseqt, &specs);
        let r: Vec<(Key, bool)> = (0..200u64).map(|p| ((p as u32 % 3, p % 37), p % 4 == 0)).collect();
        same(&mut shared, &mut alone, &r, "VPSEQT 0");
        let mut seen = Vec::new();
        shared.access((9, 9), true, |_, hit| seen.push(hit));
        assert_eq!(seen, vec![false, false]);
        assert!(shared.index.get(9, 9).is_none(), "a page no cache holds stays indexed");
        shared.check();
    }

    #[test]
    fn retargeted_caches_go_on_as_separate_caches_copied_cut_and_resized() {
        // After a first part, new caches from old ones (some cut to a lower rate's sample, some
        // shrunk, grown, at another VPSEQT, one empty), then a second part: the same as copying
        // each cache on its own (retain, resized, new).
        let specs = [(40usize, 30.0), (200, 80.0), (800, 100.0), (800, 0.0)];
        for (seed, policy) in [(31, Policy::Lru), (32, Policy::Fifo), (33, Policy::LruVpseqt)] {
            let r = mixed(seed, 24_000, 1800, 12);
            let (first, rest) = r.split_at(12_000);
            let mut shared = Caches::new(policy, &specs);
            let mut alone = separate(policy, &specs);
            same(&mut shared, &mut alone, first, "first part");
            let keep = |k: &Key| !(k.1 ^ k.0 as u64).is_multiple_of(3);
            let new: [(Option<usize>, usize, f64); 6] = [
                (Some(2), 100, 50.0),
                (Some(0), 500, 20.0),
                (Some(1), 200, 0.0),
                (None, 300, 80.0),
                (Some(2), 800, 100.0),
                (Some(3), 10, 0.0),
            ];
            for cut in [false, true] {
                let mut shared = shared.retargeted(policy, &new, |k| !cut || keep(k));
                shared.check();
                let mut alone: Vec<Cache> = new
                    .iter()
                    .map(|&(from, cap, pct)| match from {
                        Some(i) => {
                            let mut c = alone[i].clone();
                            if cut {
                                c.retain(keep);
                            }
                            c.resized(cap, pct)
                        }
                        None => Cache::new(policy, cap, pct),
                    })
                    .collect();
                same(&mut shared, &mut alone, rest, &format!("{policy:?} after, cut {cut}"));
            }
        }
    }

    #[test]
    fn a_vpseqt_altered_from_100_limits_the_sequential_chain_from_then_on() {
        // -ALTER BUFFERPOOL VPSEQT(20) on a pool at 100, its size kept: the cache holds what it
        // held and from then on steals as a cache at 20 does. The reference's limit is set by
        // hand here (not by `resized`); a cache left at 100 hits differently on this trace.
        let r = mixed(34, 24_000, 1800, 12);
        let (first, rest) = r.split_at(12_000);
        let mut shared = Caches::new(Policy::LruVpseqt, &[(800, 100.0)]);
        let mut alone = separate(Policy::LruVpseqt, &[(800, 100.0)]);
        same(&mut shared, &mut alone, first, "at VPSEQT 100");
        let mut left = alone[0].clone();
        if let Cache::Chains(c) = &mut alone[0] {
            c.seq_limit = 160;
        }
        let mut altered = shared.retargeted(Policy::LruVpseqt, &[(Some(0), 800, 20.0)], |_| true);
        let at_20 = hits(&mut alone[0].clone(), rest);
        same(&mut altered, &mut alone, rest, "altered to VPSEQT 20");
        assert_ne!(hits(&mut left, rest), at_20);
    }

    #[test]
    fn lru_and_lru_with_vpseqt_go_on_from_each_other() {
        // A pool altered across VPSEQT 100 changes policy (at 100 it is plain LRU): the caches
        // keep their chains and steal at the new policy's limit, as the references do with
        // their limit set by hand.
        let r = mixed(35, 24_000, 1800, 12);
        let (first, rest) = r.split_at(12_000);
        for (from, to, limit) in [
            (Policy::Lru, Policy::LruVpseqt, 160),
            (Policy::LruVpseqt, Policy::Lru, 800),
        ] {
            let mut shared = Caches::new(from, &[(800, 20.0)]);
            let mut alone = separate(from, &[(800, 20.0)]);
            same(&mut shared, &mut alone, first, &format!("{from:?}"));
            let before = hits(&mut alone[0].clone(), rest);
            if let Cache::Chains(c) = &mut alone[0] {
                (c.seq_limit, c.plain) = (limit, to == Policy::Lru);
            }
            let mut altered = shared.retargeted(to, &[(Some(0), 800, 20.0)], |_| true);
            assert_ne!(
                hits(&mut alone[0].clone(), rest),
                before,
                "{from:?} to {to:?}: the limit matters here"
            );
            same(&mut altered, &mut alone, rest, &format!("{from:?} to {to:?}"));
        }
    }

    #[test]
    fn a_cache_compacts_only_after_stale_slack_stale_uses() {
        // Each compaction follows more than STALE_SLACK new uses (FIFO makes no stale ones: it
        // never compacts); a count off by one once compacted at every miss.
        let specs = [(20usize, 50.0), (200, 80.0), (1500, 100.0)];
        let r = mixed(61, 12_000, 250, 1); // mostly hits: stale uses pile up
        for policy in [Policy::Fifo, Policy::Lru, Policy::LruVpseqt] {
            let mut c = Caches::new(policy, &specs);
            r.iter().for_each(|(k, s)| c.access(*k, *s, |_, _| {}));
            for (k, one) in c.caches.iter().enumerate() {
                let most = if policy == Policy::Fifo {
                    0
                } else {
                    r.len() / (STALE_SLACK + 1)
                };
                assert!(
                    one.compactions <= most,
                    "{policy:?} cache {k}: {} compactions",
                    one.compactions
                );
            }
            let ran: usize = c.caches.iter().map(|o| o.compactions).sum();
            assert!(policy == Policy::Fifo || ran > 0, "{policy:?}: never compacted");
        }
    }

    #[test]
    fn a_snapshot_whose_rows_disagree_with_the_counts_is_refused() {
        let specs = [(50usize, 30.0), (400, 80.0)];
        let mut a = Caches::new(Policy::LruVpseqt, &specs);
        mixed(42, 3000, 900, 5)
            .iter()
            .for_each(|(k, s)| a.access(*k, *s, |_, _| {}));
        let nk = specs.len();
        let e = a.chain(1, 0)[0] as usize; // held by the big cache
        let restore = |c: &Caches| bincode::deserialize::<Caches>(&bincode::serialize(c).unwrap()).map(|_| ());
        let mut held = a.clone();
        flat_mut(&mut held.rows)[e * held.stride + nk] += 1;
        let err = restore(&held).unwrap_err().to_string();
        assert!(err.contains(&format!("entry {e} counts")), "{err}");
        let mut lens = a.clone();
        lens.caches[0].lens[0] += 1;
        let err = restore(&lens).unwrap_err().to_string();
        assert!(err.contains("cache 0 chain 0"), "{err}");
        let mut wide = a.clone();
        wide.stride = 32;
        assert!(restore(&wide).unwrap_err().to_string().contains("wide for 2 caches"));
        // A free entry listed twice (another one, held by none, left off), and two uses at one tick.
        let mut twice = a.clone();
        let spare = twice.entries() as u32;
        twice.rows.push(Line([NIL; 16]));
        flat_mut(&mut twice.rows)[spare as usize * twice.stride + nk] = 0;
        twice.free.push(spare);
        restore(&twice).unwrap();
        let first = twice.free[0];
        twice.free.push(first);
        twice.free.retain(|&e| e != spare);
        let err = restore(&twice).unwrap_err().to_string();
        assert!(err.contains("listed twice"), "{err}");
        let mut tie = a.clone();
        let (x, y) = (tie.chain(1, 0)[0], tie.chain(1, 0)[1]);
        let rows = flat_mut(&mut tie.rows);
        rows[x as usize * tie.stride + 1] = rows[y as usize * tie.stride + 1];
        let err = restore(&tie).unwrap_err().to_string();
        assert!(err.contains("one tick"), "{err}");
        restore(&a).unwrap();
    }

    #[test]
    fn ticks_near_their_limit_are_numbered_again_and_the_caches_go_on_alike() {
        // The ticks as if the caches had run for 2^31 uses: the next uses renumber them first
        // (check() asserts none passes the limit) and every hit and steal stays the reference's.
        let specs = [(30usize, 0.0), (300, 40.0), (2000, 80.0)];
        for (seed, policy) in [(51, Policy::Lru), (52, Policy::LruVpseqt)] {
            let r = mixed(seed, 16_000, 1500, 6);
            let (first, rest) = r.split_at(5000);
            let mut shared = Caches::new(policy, &specs);
            let mut alone = separate(policy, &specs);
            same(&mut shared, &mut alone, first, "before");
            for c in shared.caches.iter_mut() {
                c.tick = TICK_LIMIT - 3;
            }
            shared.check();
            same(&mut shared, &mut alone, rest, &format!("{policy:?} after"));
        }
    }

    #[test]
    fn a_snapshot_of_the_shared_caches_goes_on_identically() {
        let specs = [(50usize, 30.0), (400, 80.0)];
        let r = mixed(41, 10_000, 900, 5);
        let (first, rest) = r.split_at(6000);
        let mut a = Caches::new(Policy::LruVpseqt, &specs);
        first.iter().for_each(|(k, s)| a.access(*k, *s, |_, _| {}));
        let mut b: Caches = bincode::deserialize(&bincode::serialize(&a).unwrap()).unwrap();
        b.check();
        for k in 0..specs.len() {
            for ch in 0..2 {
                assert_eq!(b.chain_keys(k, ch), a.chain_keys(k, ch), "cache {k} chain {ch}");
            }
        }
        let (mut ha, mut hb) = (Vec::new(), Vec::new());
        rest.iter().for_each(|(k, s)| a.access(*k, *s, |c, h| ha.push((c, h))));
        rest.iter().for_each(|(k, s)| b.access(*k, *s, |c, h| hb.push((c, h))));
        assert_eq!(ha, hb);
        b.check();
    }
}
