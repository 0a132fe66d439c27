//! Olken's exact LRU stack distance: a mark at each page's latest access
//! position; the distance of a re-reference is the number of marks after the
//! page's previous position (distinct pages referenced since).
//!
//! Marks live in 64-bit words (one bit per position) with a Fenwick tree over
//! the words' counts: the tree is 64 times smaller than one over positions, so
//! it stays in cache, and a query is one popcount plus a short tree walk.
//! Positions only grow; when full, the caller renumbers its live pages in
//! order and the structure is rebuilt with room to grow.

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Olken {
    words: Vec<u64>, // bit p % 64 of word p / 64 marks position p (0-based)
    tree: Vec<u32>,  // 1-based Fenwick tree over the words' popcounts
    next: u32,       // next free position (0-based)
    live: u32,       // number of marks
}

impl Default for Olken {
    fn default() -> Self {
        Self::with_capacity(0, 1024)
    }
}

impl Olken {
    fn with_capacity(live: usize, cap: usize) -> Self {
        let nwords = cap.div_ceil(64).max(1);
        let mut o = Olken {
            words: vec![0; nwords],
            tree: vec![0; nwords + 1],
            next: live as u32,
            live: live as u32,
        };
        // The first `live` positions are marked.
        for p in 0..live {
            o.words[p / 64] |= 1u64 << (p % 64);
        }
        for w in 0..nwords {
            let i = w + 1;
            o.tree[i] += o.words[w].count_ones();
            let j = i + (i & i.wrapping_neg());
            if j <= nwords {
                let v = o.tree[i];
                o.tree[j] += v;
            }
        }
        o
    }

    #[inline]
    fn tree_add(&mut self, word: usize, delta: i32) {
        let n = self.tree.len();
        let mut i = word + 1;
        while i < n {
            self.tree[i] = self.tree[i].wrapping_add(delta as u32);
            i += i & i.wrapping_neg();
        }
    }

    /// Marks in words [0, word).
    #[inline]
    fn words_before(&self, word: usize) -> u32 {
        let mut i = word;
        let mut s = 0u32;
        while i > 0 {
            s = s.wrapping_add(self.tree[i]);
            i &= i - 1;
        }
        s
    }

    pub fn is_full(&self) -> bool {
        self.next as usize >= self.words.len() * 64
    }

    /// Distinct pages referenced after position `pos` (the page at pos excluded).
    #[inline]
    pub fn distance(&self, pos: u32) -> u64 {
        let w = pos as usize / 64;
        let upto = self.words[w] & (u64::MAX >> (63 - pos % 64)); // bits 0..=pos
        (self.live - self.words_before(w) - upto.count_ones()) as u64
    }

    #[inline]
    pub fn unmark(&mut self, pos: u32) {
        let w = pos as usize / 64;
        self.words[w] &= !(1u64 << (pos % 64));
        self.tree_add(w, -1);
        self.live -= 1;
    }

    /// Mark the next position; the caller must compact first when full.
    #[inline]
    pub fn mark_next(&mut self) -> u32 {
        let pos = self.next;
        self.next += 1;
        let w = pos as usize / 64;
        self.words[w] |= 1u64 << (pos % 64);
        self.tree_add(w, 1);
        self.live += 1;
        pos
    }

    /// After the caller renumbered its `live` pages to positions 0..live
    /// (keeping their order), rebuild with room to grow.
    pub fn compacted(&mut self) {
        // Room for 7x the live pages: the bitmap costs a bit per position, and
        // compaction (a sort of the live pages) then comes once per 7x live references.
        let live = self.live as usize;
        *self = Self::with_capacity(live, (8 * live).max(1024));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{naive_distances, Rng};
    use std::collections::HashMap;

    /// Feed references through Olken the way the pool does (renumbering live pages when full).
    fn olken_distances(refs: &[u64]) -> (Vec<Option<u64>>, usize) {
        let mut o = Olken::default();
        let mut at: HashMap<u64, u32> = HashMap::new();
        let mut compactions = 0;
        let out = refs
            .iter()
            .map(|&page| {
                if o.is_full() {
                    let mut live: Vec<(u32, u64)> = at.iter().map(|(&p, &pos)| (pos, p)).collect();
                    live.sort_unstable();
                    for (i, (_, p)) in live.into_iter().enumerate() {
                        at.insert(p, i as u32);
                    }
                    o.compacted();
                    compactions += 1;
                }
                let d = at.get(&page).map(|&pos| {
                    let d = o.distance(pos);
                    o.unmark(pos);
                    d
                });
                at.insert(page, o.mark_next());
                d
            })
            .collect();
        (out, compactions)
    }

    #[test]
    fn distances_equal_a_naive_stack() {
        let mut rng = Rng(1);
        let refs: Vec<u64> = (0..6000).map(|_| rng.skewed(700)).collect();
        let (got, compactions) = olken_distances(&refs);
        assert_eq!(got, naive_distances(&refs));
        assert!(compactions > 0, "the test did not reach a compaction");
    }

    #[test]
    fn crafted_sequence_cold_misses_and_repeats() {
        let refs = [1u64, 2, 3, 1, 1, 2, 4, 3, 3];
        let (got, _) = olken_distances(&refs);
        assert_eq!(
            got,
            vec![None, None, None, Some(2), Some(0), Some(2), None, Some(3), Some(0)]
        );
    }

    #[test]
    fn fenwick_prefix_counts_equal_a_naive_sum() {
        let mut rng = Rng(7);
        let mut o = Olken::with_capacity(0, 64 * 40);
        let mut marked = vec![false; 64 * 40];
        for _ in 0..2000 {
            marked[o.mark_next() as usize] = true;
        }
        for _ in 0..900 {
            let p = rng.below(2000) as usize;
            if marked[p] {
                o.unmark(p as u32);
                marked[p] = false;
            }
        }
        for w in 0..=40 {
            let naive = marked[..w * 64].iter().filter(|m| **m).count() as u32;
            assert_eq!(o.words_before(w), naive, "words before {w}");
        }
        assert_eq!(o.live as usize, marked.iter().filter(|m| **m).count());
    }
}
