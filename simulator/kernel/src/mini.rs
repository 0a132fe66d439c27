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
use std::collections::{BTreeMap, VecDeque};

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
    Chains {
        cap: usize,
        seq_limit: usize, // buffers the sequential chain may hold before it is stolen from first
        tick: u64,
        chains: [BTreeMap<u64, Key>; 2], // 0 random/RID chain, 1 sequential chain; stamp -> key
        at: FxHashMap<Key, (u8, u64)>,
    },
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
                Cache::Chains {
                    cap,
                    seq_limit: ((cap as f64) * pct / 100.0).floor() as usize,
                    tick: 0,
                    chains: [BTreeMap::new(), BTreeMap::new()],
                    at: FxHashMap::default(),
                }
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
            Cache::Chains {
                cap,
                seq_limit,
                tick,
                chains,
                at,
            } => {
                *tick += 1;
                let chain = sequential as u8;
                let hit = if let Some((c, stamp)) = at.get(&key).copied() {
                    chains[c as usize].remove(&stamp);
                    true
                } else {
                    false
                };
                chains[chain as usize].insert(*tick, key);
                at.insert(key, (chain, *tick));
                if !hit {
                    while at.len() > *cap {
                        let seq_len = chains[1].len();
                        let from = if seq_len > *seq_limit {
                            1
                        } else {
                            // Steal the least recently used buffer of either chain.
                            match (chains[0].first_key_value(), chains[1].first_key_value()) {
                                (Some((a, _)), Some((b, _))) => usize::from(b < a),
                                (Some(_), None) => 0,
                                _ => 1,
                            }
                        };
                        if let Some((_, victim)) = chains[from].pop_first() {
                            at.remove(&victim);
                        }
                    }
                }
                hit
            }
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn len(&self) -> usize {
        match self {
            Cache::Fifo { set, .. } => set.len(),
            Cache::Chains { at, .. } => at.len(),
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
    fn vpseqt_100_is_plain_lru() {
        let r = refs(14, 10_000, 1500);
        let mut a = Cache::new(Policy::LruVpseqt, 300, 100.0);
        let mut b = Cache::new(Policy::Lru, 300, 0.0);
        assert_eq!(hits(&mut a, &r), hits(&mut b, &r));
    }
}
