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
    Fifo { cap: usize, queue: VecDeque<Key>, set: FxHashSet<Key> },
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
            Policy::Fifo => Cache::Fifo { cap, queue: VecDeque::new(), set: FxHashSet::default() },
            Policy::Lru | Policy::LruVpseqt => {
                let pct = if policy == Policy::Lru { 100.0 } else { vpseqt_pct.clamp(0.0, 100.0) };
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
            Cache::Chains { cap, seq_limit, tick, chains, at } => {
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

    pub fn len(&self) -> usize {
        match self {
            Cache::Fifo { set, .. } => set.len(),
            Cache::Chains { at, .. } => at.len(),
        }
    }
}
