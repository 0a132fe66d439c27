//! A pool's miniature caches, the LRU ones answered by one LRU stack.
//!
//! An LRU cache of C buffers holds a page exactly when fewer than C other pages were referenced
//! since its last reference (Mattson et al., 1970), so one stack distance per getpage answers
//! every LRU cache of the pool at once, where each cache of its own (mini.rs) updates its chains
//! at every getpage and steals at every miss. DB2's LRU with VPSEQT below 100 is LRU while no
//! buffer is on the sequential chain: such caches leave the stack at the first sequential
//! getpage, each built from the stack's most recent pages (what it holds then), and run on
//! their own from there. A cache at VPSEQT 100, or of a plain LRU pool, steals the least
//! recently used buffer of either chain whatever they hold: always LRU, it stays on the stack.
//! FIFO is no stack algorithm: its caches never use it. An -ALTER (`retargeted`) puts every
//! cache on its own: a copy cut down by the steal rule need not be the top of one order. Every
//! cache sees the hits and misses it would on its own; the tests compare the two.

use crate::lru_stack::LruStack;
use crate::mini::{seq_limit, Caches, Key, Policy};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(try_from = "Stored")]
pub struct CacheSet {
    policy: Policy,
    specs: Vec<(usize, f64)>,   // every cache's (buffers, VPSEQT %), in the pool's order
    stacked: Vec<(usize, u64)>, // (cache, buffers) of the caches the stack answers
    leaving: bool,              // some of them leave it at the next sequential getpage
    stack: LruStack,            // as deep as the largest of them
    chained: Vec<usize>,        // the cache each of `caches` is
    caches: Caches,
}

/// What a snapshot holds of `CacheSet`, in its fields' order.
#[derive(Deserialize)]
struct Stored {
    policy: Policy,
    specs: Vec<(usize, f64)>,
    stacked: Vec<(usize, u64)>,
    leaving: bool,
    stack: LruStack,
    chained: Vec<usize>,
    caches: Caches,
}

impl TryFrom<Stored> for CacheSet {
    type Error = String;

    /// Every cache either on the stack at its size or one of `caches`, once; none of FIFO's on
    /// the stack; caches leaving it only while none has left: a state `new` and `access` reach.
    fn try_from(s: Stored) -> Result<CacheSet, String> {
        let bad = |what: String| Err(format!("miniature caches' snapshot: {what}"));
        let mut seen = vec![0u8; s.specs.len()];
        for &k in s.stacked.iter().map(|(k, _)| k).chain(&s.chained) {
            match seen.get_mut(k) {
                Some(n) => *n += 1,
                None => return bad(format!("cache {k} of {}", s.specs.len())),
            }
        }
        if let Some(k) = seen.iter().position(|&n| n != 1) {
            return bad(format!("cache {k} listed {} times", seen[k]));
        }
        if let Some(&(k, cap)) = s.stacked.iter().find(|&&(k, cap)| cap != s.specs[k].0.max(1) as u64) {
            return bad(format!("cache {k} of {} buffers on the stack at {cap}", s.specs[k].0));
        }
        if s.caches.count() != s.chained.len() || s.caches.policy() != s.policy {
            return bad(format!(
                "{} caches on their own, {} listed",
                s.caches.count(),
                s.chained.len()
            ));
        }
        let leaving = s.stacked.iter().any(|&(k, _)| !always_lru(s.policy, s.specs[k]));
        let fifo = s.policy == Policy::Fifo && !s.stacked.is_empty();
        if fifo || leaving != s.leaving || (leaving && !s.chained.is_empty()) {
            return bad("caches on the stack that cannot be there".into());
        }
        if s.stack.depth() != depth(&s.stacked) {
            return bad(format!(
                "a stack {} deep for caches up to {}",
                s.stack.depth(),
                depth(&s.stacked)
            ));
        }
        Ok(CacheSet {
            policy: s.policy,
            specs: s.specs,
            stacked: s.stacked,
            leaving: s.leaving,
            stack: s.stack,
            chained: s.chained,
            caches: s.caches,
        })
    }
}

/// Whether a cache steals the least recently used buffer whatever the chains hold.
fn always_lru(policy: Policy, (cap, pct): (usize, f64)) -> bool {
    let cap = cap.max(1); // as the cache itself counts it
    policy != Policy::Fifo && seq_limit(policy, cap, pct) >= cap
}

/// What an LRU cache of `cap` buffers holds of the stack's `recent` pages (least recent first).
fn top(recent: &[(Key, bool)], cap: u64) -> Vec<(Key, bool)> {
    recent[recent.len().saturating_sub(cap as usize)..].to_vec()
}

fn depth(stacked: &[(usize, u64)]) -> usize {
    stacked.iter().map(|&(_, cap)| cap as usize).max().unwrap_or(1)
}

impl CacheSet {
    /// Caches of `policy`, one per (buffers, VPSEQT %) in `specs`, empty: every one but FIFO's
    /// on the stack.
    pub fn new(policy: Policy, specs: &[(usize, f64)]) -> Self {
        let lru = policy != Policy::Fifo;
        let stacked: Vec<(usize, u64)> = if lru {
            specs
                .iter()
                .enumerate()
                .map(|(k, &(cap, _))| (k, cap.max(1) as u64))
                .collect()
        } else {
            Vec::new()
        };
        let chained: Vec<usize> = if lru { Vec::new() } else { (0..specs.len()).collect() };
        CacheSet {
            policy,
            specs: specs.to_vec(),
            leaving: specs.iter().any(|&s| lru && !always_lru(policy, s)),
            stack: LruStack::new(depth(&stacked)),
            stacked,
            caches: Caches::new(policy, &chained.iter().map(|&k| specs[k]).collect::<Vec<_>>()),
            chained,
        }
    }

    /// The same caches, every one on its own (what `new` and the references so far give). With
    /// none on the stack, they are `caches` as they are (nothing to rebuild).
    fn all_chained(&self) -> Caches {
        if self.stacked.is_empty() && self.chained.iter().enumerate().all(|(j, &k)| j == k) {
            return self.caches.clone();
        }
        // Caches on the stack exist only in a set `new` made, whose specs give every limit.
        let recent = self.stack.recent(depth(&self.stacked));
        let lists: Vec<Vec<(Key, bool)>> = (0..self.specs.len())
            .map(|k| match self.stacked.iter().find(|&&(c, _)| c == k) {
                Some(&(_, cap)) => top(&recent, cap),
                None => self.caches.contents(self.position(k)),
            })
            .collect();
        Caches::filled(self.policy, &self.specs, &lists)
    }

    /// Where chained cache `k` is in `caches`.
    fn position(&self, k: usize) -> usize {
        self.chained
            .iter()
            .position(|&c| c == k)
            .expect("a cache is stacked or chained")
    }

    /// What cache `k` holds, least recently used first (`Caches::contents`).
    #[cfg(test)]
    fn contents(&self, k: usize) -> Vec<(Key, bool)> {
        if let Some(&(_, cap)) = self.stacked.iter().find(|&&(c, _)| c == k) {
            return self.stack.recent(cap as usize);
        }
        self.caches.contents(self.position(k))
    }

    pub fn policy(&self) -> Policy {
        self.policy
    }

    /// Caches in the set, on the stack or not.
    pub fn count(&self) -> usize {
        self.specs.len()
    }

    /// Buffers cache `k` holds.
    pub fn len(&self, k: usize) -> usize {
        match self.stacked.iter().find(|&&(c, _)| c == k) {
            Some(&(_, cap)) => self.stack.len().min(cap as usize),
            None => self.caches.len(self.position(k)),
        }
    }

    /// Caches the stack answers.
    pub fn stacked(&self) -> usize {
        self.stacked.len()
    }

    /// Start loading what a coming access of `key` reads (stage 0, then 1).
    #[inline]
    pub fn prefetch(&self, key: Key, stage: u8) {
        if !self.stacked.is_empty() {
            self.stack.prefetch(key, stage);
        }
        if !self.chained.is_empty() {
            self.caches.prefetch(key, stage);
        }
    }

    /// Reference `key` in every cache (`sequential`: a sequential-prefetch getpage); `hit(k,
    /// was_hit)` is called once for each cache k.
    #[inline]
    pub fn access(&mut self, key: Key, sequential: bool, mut hit: impl FnMut(usize, bool)) {
        if sequential && self.leaving {
            self.unstack();
        }
        if !self.stacked.is_empty() {
            let d = self.stack.access(key, sequential);
            for &(k, cap) in &self.stacked {
                hit(k, d < cap);
            }
        }
        if !self.chained.is_empty() {
            let chained = &self.chained;
            self.caches.access(key, sequential, |j, h| hit(chained[j], h));
        }
    }

    /// The caches that are not always LRU off the stack, each holding its most recent pages:
    /// no getpage so far was sequential, so all are on the random chain, in the stack's order.
    #[cold]
    fn unstack(&mut self) {
        debug_assert!(self.chained.is_empty(), "caches left the stack before");
        let (stay, leave): (Vec<_>, Vec<_>) = self
            .stacked
            .iter()
            .partition(|&&(k, _)| always_lru(self.policy, self.specs[k]));
        let recent = self.stack.recent(depth(&leave));
        let lists: Vec<Vec<(Key, bool)>> = leave.iter().map(|&(_, cap)| top(&recent, cap)).collect();
        let specs: Vec<(usize, f64)> = leave.iter().map(|&(k, _)| self.specs[k]).collect();
        self.caches = Caches::filled(self.policy, &specs, &lists);
        self.chained = leave.iter().map(|&(k, _)| k).collect();
        if stay.is_empty() {
            self.stack = LruStack::new(1);
        } else {
            self.stack.set_depth(depth(&stay));
        }
        self.stacked = stay;
        self.leaving = false;
    }

    /// New caches of this policy, one per (from, buffers, VPSEQT %) in `specs`, as
    /// `Caches::retargeted` makes them from these: each on its own (a copy cut down by the
    /// steal rule holds what it holds, not the top of one order).
    pub fn retargeted(
        &self,
        policy: Policy,
        specs: &[(Option<usize>, usize, f64)],
        keep: impl Fn(&Key) -> bool,
    ) -> CacheSet {
        let caches = self.all_chained().retargeted(policy, specs, keep);
        CacheSet {
            policy,
            specs: specs.iter().map(|&(_, cap, pct)| (cap, pct)).collect(),
            stacked: Vec::new(),
            leaving: false,
            stack: LruStack::new(1),
            chained: (0..specs.len()).collect(),
            caches,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::Rng;

    /// Random references to skewed pages of a few objects, sequential ones (a third) only from
    /// reference `seq_from` on.
    fn refs(seed: u64, n: usize, pages: u64, seq_from: usize) -> Vec<(Key, bool)> {
        let mut rng = Rng(seed);
        (0..n)
            .map(|t| {
                (
                    (rng.below(6) as u32, rng.skewed(pages)),
                    t >= seq_from && rng.below(3) == 0,
                )
            })
            .collect()
    }

    fn hits_set(c: &mut CacheSet, key: Key, seq: bool) -> Vec<(usize, bool)> {
        let mut v = Vec::new();
        c.access(key, seq, |k, h| v.push((k, h)));
        v.sort_unstable();
        v
    }

    fn hits_alone(c: &mut Caches, key: Key, seq: bool) -> Vec<(usize, bool)> {
        let mut v = Vec::new();
        c.access(key, seq, |k, h| v.push((k, h)));
        v
    }

    /// Feed both: every cache's hit or miss and, at the end, what it holds must agree.
    fn same(set: &mut CacheSet, alone: &mut Caches, refs: &[(Key, bool)], what: &str) {
        for (t, &(k, seq)) in refs.iter().enumerate() {
            assert_eq!(
                hits_set(set, k, seq),
                hits_alone(alone, k, seq),
                "{what}: reference {t}"
            );
        }
        for k in 0..set.specs.len() {
            assert_eq!(set.contents(k), alone.contents(k), "{what}: cache {k}");
            assert_eq!(set.len(k), alone.len(k), "{what}: cache {k}");
        }
    }

    // Sizes from 1 buffer to more than the footprint, VPSEQT 0, 100 and between.
    const SPECS: [(usize, f64); 8] = [
        (1, 50.0),
        (7, 0.0),
        (60, 20.0),
        (60, 100.0),
        (300, 0.0),
        (900, 100.0),
        (1500, 40.0),
        (4000, 80.0),
    ];

    #[test]
    fn the_stack_hits_as_caches_on_their_own_do_before_and_after_the_first_sequential_getpage() {
        for (seed, policy, stacked_after) in [(1, Policy::Lru, 8), (2, Policy::LruVpseqt, 2), (3, Policy::Fifo, 0)] {
            // Long enough that the stack renumbers and drops pages deeper than its largest cache.
            let r = refs(seed, 60_000, 9000, 30_000);
            let mut set = CacheSet::new(policy, &SPECS);
            let mut alone = Caches::new(policy, &SPECS);
            let (first, rest) = r.split_at(30_000);
            same(&mut set, &mut alone, first, &format!("{policy:?} random"));
            let all = if policy == Policy::Fifo { 0 } else { 8 };
            assert_eq!(set.stacked(), all, "{policy:?}");
            same(&mut set, &mut alone, rest, &format!("{policy:?} mixed"));
            assert_eq!(set.stacked(), stacked_after, "{policy:?}");
            assert!(
                set.stack.len() <= 3 * 4000 + 512,
                "{policy:?}: {} pages",
                set.stack.len()
            );
        }
    }

    #[test]
    fn a_snapshot_goes_on_identically_on_and_off_the_stack() {
        let r = refs(4, 30_000, 3000, 20_000);
        for cut in [10_000, 25_000] {
            let (first, rest) = r.split_at(cut);
            let mut a = CacheSet::new(Policy::LruVpseqt, &SPECS);
            first.iter().for_each(|&(k, s)| a.access(k, s, |_, _| {}));
            let mut b: CacheSet = bincode::deserialize(&bincode::serialize(&a).unwrap()).unwrap();
            assert_eq!(b.stacked(), a.stacked(), "at {cut}");
            for &(k, s) in rest {
                assert_eq!(hits_set(&mut a, k, s), hits_set(&mut b, k, s), "at {cut}");
            }
        }
    }

    #[test]
    fn a_snapshot_that_lists_a_cache_twice_or_puts_fifo_on_the_stack_is_refused() {
        let ok = CacheSet::new(Policy::LruVpseqt, &SPECS);
        let reread = |c: &CacheSet| bincode::deserialize::<CacheSet>(&bincode::serialize(c).unwrap());
        assert!(reread(&ok).is_ok());
        let mut twice = ok.clone();
        twice.stacked[1].0 = 0;
        let err = reread(&twice).unwrap_err().to_string();
        assert!(err.contains("cache 0 listed 2 times"), "{err}");
        let mut fifo = ok.clone();
        fifo.policy = Policy::Fifo;
        fifo.caches = Caches::new(Policy::Fifo, &[]);
        let err = reread(&fifo).unwrap_err().to_string();
        assert!(err.contains("cannot be there"), "{err}");
        let mut shallow = ok.clone();
        shallow.stack.set_depth(300);
        let err = reread(&shallow).unwrap_err().to_string();
        assert!(err.contains("a stack 300 deep for caches up to 4000"), "{err}");
        let mut size = ok;
        size.stacked[2].1 = 61;
        let err = reread(&size).unwrap_err().to_string();
        assert!(err.contains("cache 2 of 60 buffers on the stack at 61"), "{err}");
    }

    #[test]
    fn retargeted_caches_go_on_as_the_caches_on_their_own_retargeted() {
        let r = refs(5, 24_000, 2500, 8_000);
        let new: [(Option<usize>, usize, f64); 5] = [
            (Some(5), 700, 50.0),
            (Some(0), 500, 20.0),
            (Some(3), 60, 0.0),
            (None, 300, 80.0),
            (Some(7), 5000, 100.0),
        ];
        let keep = |k: &Key| !(k.1 ^ k.0 as u64).is_multiple_of(3);
        for policy in [Policy::Lru, Policy::LruVpseqt, Policy::Fifo] {
            for at in [5_000, 12_000] {
                let (first, rest) = r.split_at(at);
                let mut set = CacheSet::new(policy, &SPECS);
                let mut alone = Caches::new(policy, &SPECS);
                same(&mut set, &mut alone, first, "first part");
                for cut in [false, true] {
                    let mut set = set.retargeted(policy, &new, |k| !cut || keep(k));
                    let mut alone = alone.retargeted(policy, &new, |k| !cut || keep(k));
                    let (middle, last) = rest.split_at(rest.len() / 2);
                    same(&mut set, &mut alone, middle, &format!("{policy:?} at {at}, cut {cut}"));
                    // Altered again: the set off the stack goes on as the caches on their own.
                    let again = [(Some(4), 5000, 0.0), (Some(0), 40, 100.0), (Some(2), 70, 30.0)];
                    let mut set = set.retargeted(policy, &again, |_| true);
                    let mut alone = alone.retargeted(policy, &again, |_| true);
                    same(
                        &mut set,
                        &mut alone,
                        last,
                        &format!("{policy:?} at {at}, cut {cut}, again"),
                    );
                }
            }
        }
    }
}
