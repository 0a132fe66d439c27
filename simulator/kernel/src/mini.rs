//! Miniature caches for policies that are not stack algorithms (Waldspurger et
//! al., ATC 2017): each candidate size gets a small real cache of size*rate
//! buffers fed the spatially sampled references.
//!
//! Policies: LRU; FIFO (PGSTEAL FIFO); and LRU with DB2's sequential steal
//! threshold VPSEQT, where a buffer last touched by a sequential getpage sits
//! on the sequential chain and, once that chain holds more than VPSEQT % of the
//! pool, steals come from it first.

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
    Chains(Chains),
}

const NIL: u32 = u32::MAX;

#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
struct Node {
    key: Key,
    prev: u32, // towards the most recently used
    next: u32, // towards the least recently used
    tick: u64,
    chain: u8,
}

/// LRU with DB2's two chains: 0 random/RID, 1 sequential, each a doubly linked list in
/// `nodes` (O(1) per reference; the page table finds a page's node).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Chains {
    cap: usize,
    seq_limit: usize, // buffers the sequential chain may hold before it is stolen from first
    tick: u64,
    nodes: Vec<Node>,
    free: Vec<u32>,
    at: FxHashMap<Key, u32>,
    head: [u32; 2], // most recently used
    tail: [u32; 2], // least recently used
    len: [usize; 2],
}

impl Chains {
    fn new(cap: usize, seq_limit: usize) -> Self {
        Chains {
            cap,
            seq_limit,
            tick: 0,
            nodes: Vec::new(),
            free: Vec::new(),
            at: FxHashMap::default(),
            head: [NIL; 2],
            tail: [NIL; 2],
            len: [0; 2],
        }
    }

    fn unlink(&mut self, i: u32) {
        let n = self.nodes[i as usize];
        let c = n.chain as usize;
        if n.prev != NIL {
            self.nodes[n.prev as usize].next = n.next;
        } else {
            self.head[c] = n.next;
        }
        if n.next != NIL {
            self.nodes[n.next as usize].prev = n.prev;
        } else {
            self.tail[c] = n.prev;
        }
        self.len[c] -= 1;
    }

    fn push_front(&mut self, i: u32, chain: u8) {
        self.tick += 1;
        let c = chain as usize;
        let old = self.head[c];
        {
            let n = &mut self.nodes[i as usize];
            n.prev = NIL;
            n.next = old;
            n.chain = chain;
            n.tick = self.tick;
        }
        if old != NIL {
            self.nodes[old as usize].prev = i;
        } else {
            self.tail[c] = i;
        }
        self.head[c] = i;
        self.len[c] += 1;
    }

    /// Steal one buffer: the sequential chain's oldest while that chain is over its limit,
    /// else the least recently used of either chain.
    fn steal(&mut self) {
        let from = if self.len[1] > self.seq_limit || self.tail[0] == NIL {
            1
        } else if self.tail[1] == NIL {
            0
        } else {
            let (a, b) = (
                self.nodes[self.tail[0] as usize].tick,
                self.nodes[self.tail[1] as usize].tick,
            );
            usize::from(b < a)
        };
        let victim = self.tail[from];
        if victim == NIL {
            return;
        }
        self.unlink(victim);
        self.at.remove(&self.nodes[victim as usize].key);
        self.free.push(victim);
    }

    fn access(&mut self, key: Key, sequential: bool) -> bool {
        let chain = sequential as u8;
        if let Some(&i) = self.at.get(&key) {
            self.unlink(i);
            self.push_front(i, chain);
            return true;
        }
        let node = Node {
            key,
            prev: NIL,
            next: NIL,
            tick: 0,
            chain,
        };
        let i = match self.free.pop() {
            Some(i) => {
                self.nodes[i as usize] = node;
                i
            }
            None => {
                self.nodes.push(node);
                (self.nodes.len() - 1) as u32
            }
        };
        self.at.insert(key, i);
        self.push_front(i, chain);
        while self.at.len() > self.cap {
            self.steal();
        }
        false
    }

    /// Pages on each chain (random/RID, sequential).
    #[cfg(test)]
    fn chain_keys(&self, c: usize) -> Vec<Key> {
        let mut out = Vec::new();
        let mut i = self.head[c];
        while i != NIL {
            out.push(self.nodes[i as usize].key);
            i = self.nodes[i as usize].next;
        }
        out
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
                Cache::Chains(Chains::new(cap, ((cap as f64) * pct / 100.0).floor() as usize))
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
        let (random, sequential) = (c.chain_keys(0), c.chain_keys(1));
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
