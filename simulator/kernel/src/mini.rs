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
//! all of them, then a row with each cache's node for the page, instead of one
//! hash-map probe per cache. Each cache keeps its own chains over the index's
//! entry ids and sees the same inserts, touches and steals as a cache on its
//! own (the tests compare them with `Cache`, the one-cache reference).

use crate::chains::Chains;
use crate::table::PageTable;
use serde::{Deserialize, Serialize};
#[cfg(test)]
use {
    rustc_hash::{FxHashMap, FxHashSet},
    std::collections::VecDeque,
};

pub type Key = (u32, u64);

const NIL: u32 = u32::MAX;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Policy {
    Lru,
    Fifo,
    LruVpseqt,
}

/// One miniature cache: its chains over the shared index's entry ids.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct One {
    cap: usize,
    seq_limit: usize, // buffers the sequential chain may hold before it is stolen from first
    len: usize,
    chains: Chains<u32>,
}

impl One {
    fn new(policy: Policy, cap: usize, vpseqt_pct: f64) -> Self {
        let cap = cap.max(1);
        let seq_limit = match policy {
            Policy::LruVpseqt => ((cap as f64) * vpseqt_pct.clamp(0.0, 100.0) / 100.0).floor() as usize,
            _ => cap,
        };
        One {
            cap,
            seq_limit,
            len: 0,
            chains: Chains::with_capacity(0),
        }
    }
}

/// A pool's miniature caches of one policy over one page index.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Caches {
    policy: Policy,
    index: PageTable, // (object, page) -> entry id (in the slot's pos)
    keys: Vec<Key>,   // per entry: its page
    rows: Vec<u32>,   // per entry: each cache's node for it (NIL: not held), caches.len() wide
    held: Vec<u32>,   // per entry: how many caches hold it; released at 0
    free: Vec<u32>,   // released entry ids
    caches: Vec<One>,
}

impl Caches {
    /// Caches of `policy`, one per (buffers, VPSEQT %) in `specs`, empty.
    pub fn new(policy: Policy, specs: &[(usize, f64)]) -> Self {
        Caches {
            policy,
            index: PageTable::default(),
            keys: Vec::new(),
            rows: Vec::new(),
            held: Vec::new(),
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

    /// Start loading what a coming access of `key` reads: stage 0 its index slot, stage 1 (the
    /// slot loaded by then) its row.
    #[inline]
    pub fn prefetch(&self, key: Key, stage: u8) {
        if stage == 0 {
            self.index.prefetch(key.0, key.1);
            return;
        }
        #[cfg(target_arch = "x86_64")]
        if let Some(s) = self.index.get(key.0, key.1) {
            let at = s.pos as usize * self.caches.len();
            if at < self.rows.len() {
                // SAFETY: prefetching is a hint; the pointer is in bounds of a live Vec.
                unsafe {
                    use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
                    _mm_prefetch(self.rows.as_ptr().add(at) as *const i8, _MM_HINT_T0);
                }
            }
        }
    }

    /// Reference `key` in every cache (`sequential`: a sequential-prefetch getpage); `hit(k,
    /// was_hit)` is called for each cache k in order.
    #[inline]
    pub fn access(&mut self, key: Key, sequential: bool, mut hit: impl FnMut(usize, bool)) {
        let nk = self.caches.len();
        let (i, present) = self.index.entry(key.0, key.1);
        let e = if present {
            self.index.slot_mut(i).pos
        } else {
            let e = match self.free.pop() {
                Some(e) => {
                    self.keys[e as usize] = key;
                    e
                }
                None => {
                    self.keys.push(key);
                    self.held.push(0);
                    self.rows.resize(self.rows.len() + nk, NIL);
                    (self.keys.len() - 1) as u32
                }
            };
            self.index.slot_mut(i).pos = e;
            e
        };
        let chain = sequential as u8;
        let fifo = self.policy == Policy::Fifo;
        for (k, c) in self.caches.iter_mut().enumerate() {
            let node = self.rows[e as usize * nk + k];
            if node != NIL {
                if !fifo {
                    c.chains.touch(node, chain);
                }
                hit(k, true);
                continue;
            }
            // FIFO: one chain in insertion order, never touched; the steal takes its oldest.
            self.rows[e as usize * nk + k] = c.chains.insert(e, if fifo { 0 } else { chain });
            self.held[e as usize] += 1;
            c.len += 1;
            while c.len > c.cap {
                let Some(v) = c.chains.victim(c.seq_limit) else { break };
                let ve = c.chains.remove(v) as usize;
                c.len -= 1;
                self.rows[ve * nk + k] = NIL;
                self.held[ve] -= 1;
                // The page itself stays until every cache has seen it (one at VPSEQT 0 may
                // steal what it just took in); others go when no cache holds them.
                if self.held[ve] == 0 && ve != e as usize {
                    Self::release(&mut self.index, &mut self.free, &self.keys, ve as u32);
                }
            }
            hit(k, false);
        }
        if self.held[e as usize] == 0 {
            Self::release(&mut self.index, &mut self.free, &self.keys, e);
        }
    }

    fn release(index: &mut PageTable, free: &mut Vec<u32>, keys: &[Key], e: u32) {
        let key = keys[e as usize];
        index.remove(key.0, key.1);
        free.push(e);
    }

    /// New caches of this policy, one per (from, buffers, VPSEQT %) in `specs`: a copy of old
    /// cache `from` holding only the pages `keep` accepts (a sample at a lower rate of the same
    /// pool), in their order, cut down to size by the steal rule as access() does (growing
    /// keeps everything), or an empty cache when `from` is None. What a pool resized by -ALTER
    /// BUFFERPOOL holds at that moment.
    pub fn retargeted(&self, specs: &[(Option<usize>, usize, f64)], keep: impl Fn(&Key) -> bool) -> Caches {
        let (nk, ok) = (specs.len(), self.caches.len());
        let mut out = Caches {
            policy: self.policy,
            index: self.index.clone(),
            keys: self.keys.clone(),
            rows: vec![NIL; self.keys.len() * nk],
            held: vec![0; self.keys.len()],
            free: self.free.clone(),
            caches: Vec::with_capacity(nk),
        };
        let live: Vec<bool> = {
            let mut live = vec![true; self.keys.len()];
            for &e in &self.free {
                live[e as usize] = false;
            }
            live
        };
        for (k, &(from, cap, pct)) in specs.iter().enumerate() {
            let Some(i) = from else {
                out.caches.push(One::new(self.policy, cap, pct));
                continue;
            };
            let mut c = self.caches[i].clone();
            // A released entry's row is all NIL: only the held pages are visited.
            for (e, key) in self.keys.iter().enumerate() {
                let node = self.rows[e * ok + i];
                if node == NIL {
                    continue;
                }
                if keep(key) {
                    out.rows[e * nk + k] = node;
                } else {
                    c.chains.remove(node);
                    c.len -= 1;
                }
            }
            let plain_lru = c.seq_limit >= c.cap; // an LRU cache keeps no sequential limit
            c.cap = cap.max(1);
            c.seq_limit = if plain_lru {
                c.cap
            } else {
                ((c.cap as f64) * pct.clamp(0.0, 100.0) / 100.0).floor() as usize
            };
            while c.len > c.cap {
                let Some(v) = c.chains.victim(c.seq_limit) else { break };
                let ve = c.chains.remove(v) as usize;
                c.len -= 1;
                out.rows[ve * nk + k] = NIL;
            }
            out.caches.push(c);
        }
        for (e, &alive) in live.iter().enumerate() {
            out.held[e] = out.rows[e * nk..(e + 1) * nk].iter().filter(|&&n| n != NIL).count() as u32;
            if alive && out.held[e] == 0 {
                Self::release(&mut out.index, &mut out.free, &out.keys, e as u32);
            }
        }
        out
    }

    /// What cache `k` holds, per chain, most recently used first.
    #[cfg(test)]
    fn chain(&self, k: usize, chain: usize) -> Vec<Key> {
        self.caches[k]
            .chains
            .chain(chain)
            .iter()
            .map(|&e| self.keys[e as usize])
            .collect()
    }

    /// Every entry's row and count agree with the caches, and the index holds exactly the
    /// held pages.
    #[cfg(test)]
    fn check(&self) {
        let nk = self.caches.len();
        let mut held = vec![0u32; self.keys.len()];
        for (k, c) in self.caches.iter().enumerate() {
            let all: Vec<u32> = [0, 1].iter().flat_map(|&ch| c.chains.chain(ch)).collect();
            assert_eq!(all.len(), c.len, "cache {k}");
            assert!(c.len <= c.cap);
            for e in all {
                assert_ne!(self.rows[e as usize * nk + k], NIL, "cache {k} entry {e}");
                held[e as usize] += 1;
            }
        }
        let live = held.iter().filter(|&&h| h > 0).count();
        assert_eq!(self.index.len(), live);
        for (e, &h) in held.iter().enumerate() {
            if h > 0 {
                assert_eq!(self.held[e], h, "entry {e}");
                let key = self.keys[e];
                assert_eq!(self.index.get(key.0, key.1).map(|s| s.pos), Some(e as u32));
            } else {
                assert!(self.free.contains(&(e as u32)), "entry {e} neither held nor free");
                assert!(self.rows[e * nk..(e + 1) * nk].iter().all(|&n| n == NIL), "entry {e}");
            }
        }
    }
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
    chains: Chains<Key>,
    at: FxHashMap<Key, u32>,
}

#[cfg(test)]
impl Lru2 {
    fn new(cap: usize, seq_limit: usize) -> Self {
        Lru2 {
            cap,
            seq_limit,
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
                Cache::Chains(Lru2::new(cap, ((cap as f64) * pct / 100.0).floor() as usize))
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
                let plain_lru = c.seq_limit >= c.cap; // an LRU cache keeps no sequential limit
                c.cap = cap;
                c.seq_limit = if plain_lru {
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
            assert_eq!([shared.chain(k, 0), shared.chain(k, 1)], want, "{what}: cache {k}");
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
                let mut shared = shared.retargeted(&new, |k| !cut || keep(k));
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
    fn a_snapshot_of_the_shared_caches_goes_on_identically() {
        let specs = [(50usize, 30.0), (400, 80.0)];
        let r = mixed(41, 10_000, 900, 5);
        let (first, rest) = r.split_at(6000);
        let mut a = Caches::new(Policy::LruVpseqt, &specs);
        first.iter().for_each(|(k, s)| a.access(*k, *s, |_, _| {}));
        let mut b: Caches = bincode::deserialize(&bincode::serialize(&a).unwrap()).unwrap();
        let (mut ha, mut hb) = (Vec::new(), Vec::new());
        rest.iter().for_each(|(k, s)| a.access(*k, *s, |c, h| ha.push((c, h))));
        rest.iter().for_each(|(k, s)| b.access(*k, *s, |c, h| hb.push((c, h))));
        assert_eq!(ha, hb);
        b.check();
    }
}
