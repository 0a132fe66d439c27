//! Miniature caches for policies that are not stack algorithms (Waldspurger et
//! al., ATC 2017): each candidate size gets a small real cache of size*rate
//! buffers fed the spatially sampled references.
//!
//! Policies: LRU; FIFO (PGSTEAL FIFO); and LRU with DB2's sequential steal
//! threshold VPSEQT, where a buffer last touched by a sequential getpage sits
//! on the sequential chain and, once that chain holds more than VPSEQT % of the
//! pool, steals come from it first.

use crate::chains::Chains;
use rustc_hash::{FxHashMap, FxHashSet};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

pub type Key = (u32, u64);

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Policy {
    Lru,
    Fifo,
    LruVpseqt,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum Cache {
    Fifo {
        cap: usize,
        queue: VecDeque<Key>,
        set: FxHashSet<Key>,
    },
    Chains(Lru2),
}

/// LRU with DB2's two chains and a sequential steal threshold, over chains::Chains.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Lru2 {
    cap: usize,
    seq_limit: usize, // buffers the sequential chain may hold before it is stolen from first
    chains: Chains<Key>,
    at: FxHashMap<Key, u32>,
}

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
}
