//! Olken's exact LRU stack distance: a mark at each page's latest access
//! position; the distance of a re-reference is the number of marks after the
//! page's previous position (distinct pages referenced since).
//!
//! Marks live in 512-position blocks (eight 64-bit words, one cache line) with a
//! 16-ary tree of sums over the closed blocks' counts (`Counts`): 512 times smaller
//! than a tree over positions, so it stays in L2 beside the page table's traffic.
//! A query is one line of popcounts plus one masked sum of a 64-byte node per
//! level (four levels up to 65,536 blocks), an update one add per level (a
//! Fenwick tree walked some 15 nodes each way; this measured 2.5 % less time per
//! getpage on bench-sim's generated trace). The open block (where
//! the next mark goes, the hot end of the stack) stays outside the tree: marking
//! is then a bit and a counter, and a re-reference to a page marked in it walks
//! no tree at all. Positions only grow; when full, the caller renumbers its live
//! pages in order (rank()) and the structure is rebuilt with room to grow.

use serde::ser::{SerializeSeq, SerializeStruct};
use serde::{Deserialize, Serialize, Serializer};

const BITS: usize = 512; // positions per block
const WORDS: usize = BITS / 64;

#[derive(Clone, Copy, Debug, Default)]
#[repr(C, align(64))]
struct Block([u64; WORDS]);

impl Block {
    /// Marks at positions [0, i) of the block (i in 0..=511).
    #[inline(always)]
    fn below(&self, i: usize) -> u32 {
        #[cfg(all(target_arch = "x86_64", not(target_feature = "popcnt")))]
        if std::arch::is_x86_feature_detected!("popcnt") {
            // SAFETY: the CPU has popcnt (checked just above).
            return unsafe { self.below_popcnt(i) };
        }
        self.below_portable(i)
    }

    /// Eight popcounts: some 100 instructions fewer than the portable build's bit tricks (the
    /// pool's feed loop is compiled with popcnt and inlines this; elsewhere it is a call).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "popcnt")]
    unsafe fn below_popcnt(&self, i: usize) -> u32 {
        self.below_portable(i)
    }

    #[inline(always)]
    fn below_portable(&self, i: usize) -> u32 {
        let (w, bit) = (i / 64, i % 64);
        let mut s = 0;
        for (k, word) in self.0.iter().enumerate() {
            let mask = if k < w {
                u64::MAX
            } else if k == w {
                (1u64 << bit) - 1
            } else {
                0
            };
            s += (word & mask).count_ones();
        }
        s
    }

    #[inline]
    fn count(&self) -> u32 {
        self.0.iter().map(|w| w.count_ones()).sum()
    }

    #[inline]
    fn bit(&self, i: usize) -> bool {
        self.0[i / 64] >> (i % 64) & 1 == 1
    }
}

const FAN: usize = 16; // children per node of Counts: 16 u32 sums, one cache line

#[derive(Clone, Copy, Debug, Default)]
#[repr(C, align(64))]
struct Node([u32; FAN]);

/// PREFIX[k]: all ones in lanes [0, k), so a node's first k entries are summed by AND and add
/// over whole vectors (a compare per lane compiled to byte shuffles, slower than the Fenwick walk).
static PREFIX: [[u32; FAN]; FAN] = {
    let mut m = [[0u32; FAN]; FAN];
    let mut k = 0;
    while k < FAN {
        let mut j = 0;
        while j < k {
            m[k][j] = u32::MAX;
            j += 1;
        }
        k += 1;
    }
    m
};

impl Node {
    /// The sum of entries [0, k), k < 16.
    #[inline(always)]
    fn below(&self, k: usize) -> u32 {
        let mut s = 0u32;
        for (&v, &m) in self.0.iter().zip(&PREFIX[k]) {
            s = s.wrapping_add(v & m);
        }
        s
    }
}

/// Counts of marks per closed block, as a 16-ary tree of sums: level 0 holds a count per block,
/// entry i of level l the sum of blocks [i * 16^l, (i + 1) * 16^l); the top level is one node.
#[derive(Clone, Debug)]
struct Counts {
    levels: Vec<Vec<Node>>,
}

impl Counts {
    fn new(blocks: usize) -> Self {
        let mut levels = Vec::new();
        let mut entries = blocks.max(1);
        loop {
            levels.push(vec![Node::default(); entries.div_ceil(FAN)]);
            if entries <= FAN {
                break;
            }
            entries = entries.div_ceil(FAN);
        }
        Counts { levels }
    }

    #[inline(always)]
    fn add(&mut self, block: usize, delta: i32) {
        let mut i = block;
        for level in &mut self.levels {
            let e = &mut level[i / FAN].0[i % FAN];
            *e = e.wrapping_add(delta as u32);
            i /= FAN;
        }
    }

    /// Marks in blocks [0, block), and one mark fewer in `block`: `before` and `add(block, -1)`
    /// in one walk up the tree (the entry taken from is not among those summed at its level).
    #[inline(always)]
    fn before_less_one(&mut self, block: usize) -> u32 {
        let mut i = block;
        let mut s = 0u32;
        for level in &mut self.levels {
            let node = &mut level[i / FAN];
            s = s.wrapping_add(node.below(i % FAN));
            node.0[i % FAN] = node.0[i % FAN].wrapping_sub(1);
            i /= FAN;
        }
        s
    }

    /// Marks in blocks [0, block), block < the block count: at each level, the entries before
    /// this one in its node.
    #[inline(always)]
    fn before(&self, block: usize) -> u32 {
        debug_assert!(block < self.levels[0].len() * FAN, "block {block} past the counts");
        let mut i = block;
        let mut s = 0u32;
        for level in &self.levels {
            s = s.wrapping_add(level[i / FAN].below(i % FAN));
            i /= FAN;
        }
        s
    }
}

#[derive(Clone, Debug)]
pub struct Olken {
    blocks: Vec<Block>, // bit p % 512 of block p / 512 marks position p (0-based)
    counts: Counts,     // marks per block, over blocks [0, next / 512) (the closed ones)
    next: u32,          // next free position (0-based)
    live: u32,          // number of marks
    open: u32,          // marks in the open block, next / 512
}

impl Default for Olken {
    fn default() -> Self {
        Self::with_capacity(0, 1024)
    }
}

impl Olken {
    fn with_capacity(live: usize, cap: usize) -> Self {
        let nblocks = cap.div_ceil(BITS).max(1);
        let mut blocks = vec![Block::default(); nblocks];
        // The first `live` positions are marked.
        for (b, block) in blocks.iter_mut().enumerate().take(live.div_ceil(BITS)) {
            for (k, word) in block.0.iter_mut().enumerate() {
                let lo = b * BITS + k * 64;
                *word = match live.saturating_sub(lo) {
                    0 => 0,
                    n if n >= 64 => u64::MAX,
                    n => (1u64 << n) - 1,
                };
            }
        }
        Self::from_blocks(blocks, live as u32, live as u32)
    }

    /// The tree and the open block's count, from the marks.
    fn from_blocks(blocks: Vec<Block>, next: u32, live: u32) -> Self {
        let closed = next as usize / BITS;
        let mut counts = Counts::new(blocks.len());
        for (b, block) in blocks.iter().enumerate().take(closed) {
            counts.add(b, block.count() as i32);
        }
        let open = blocks.get(closed).map_or(0, Block::count);
        Olken {
            blocks,
            counts,
            next,
            live,
            open,
        }
    }

    /// Marks in blocks [0, block), all closed.
    #[inline(always)]
    fn blocks_before(&self, block: usize) -> u32 {
        self.counts.before(block)
    }

    pub fn is_full(&self) -> bool {
        self.next as usize >= self.blocks.len() * BITS
    }

    /// Positions left before the next compaction.
    pub fn room(&self) -> usize {
        (self.blocks.len() * BITS).saturating_sub(self.next as usize)
    }

    /// The position the next `mark_next` gives.
    pub fn next_position(&self) -> u32 {
        self.next
    }

    /// Start loading the line holding position `pos` (a query for it comes soon).
    #[inline(always)]
    pub fn prefetch(&self, pos: u32) {
        if let Some(b) = self.blocks.get(pos as usize / BITS) {
            crate::prefetch::line(b);
        }
    }

    /// Distinct pages referenced after position `pos` (the page at pos excluded).
    #[inline(always)]
    pub fn distance(&self, pos: u32) -> u64 {
        let (b, i) = (pos as usize / BITS, pos as usize % BITS);
        let upto = self.blocks[b].below(i) + 1; // marks at 0..=pos of the block (pos is marked)
        if b == self.next as usize / BITS {
            return (self.open - upto) as u64;
        }
        (self.live - self.blocks_before(b) - upto) as u64
    }

    #[inline(always)]
    pub fn unmark(&mut self, pos: u32) {
        let (b, i) = (pos as usize / BITS, pos as usize % BITS);
        self.blocks[b].0[i / 64] &= !(1u64 << (i % 64));
        if b == self.next as usize / BITS {
            self.open -= 1;
        } else {
            self.counts.add(b, -1);
        }
        self.live -= 1;
    }

    /// Mark the next position; the caller must compact first when full.
    #[inline(always)]
    pub fn mark_next(&mut self) -> u32 {
        let pos = self.next;
        let (b, i) = (pos as usize / BITS, pos as usize % BITS);
        self.blocks[b].0[i / 64] |= 1u64 << (i % 64);
        self.open += 1;
        self.live += 1;
        self.next += 1;
        if (self.next as usize).is_multiple_of(BITS) {
            // The block closes: its count goes into the tree.
            let open = std::mem::take(&mut self.open);
            self.counts.add(b, open as i32);
        }
        pos
    }

    /// For a run of references: each previous position in `marks` (`new`: a page not in the
    /// stack) becomes `bucket(distance)`, and every reference is marked at the next position,
    /// in order (the caller made room for them all). The same as `distance`, `unmark` and
    /// `mark_next` one by one, with the counters in registers: stored per reference, a store of
    /// one beside a load of both stalled the loop on store forwarding (6 % of bench-sim).
    #[inline(always)]
    pub fn walk(&mut self, marks: &mut [u32], new: u32, bucket: impl Fn(u64) -> u32) {
        const AHEAD: usize = 16;
        debug_assert!(self.room() >= marks.len(), "no room for the run's marks");
        for &q in marks.iter().take(AHEAD) {
            if q != new {
                self.prefetch(q);
            }
        }
        let (mut next, mut live, mut open) = (self.next, self.live, self.open);
        for s in 0..marks.len() {
            if let Some(&q) = marks.get(s + AHEAD) {
                if q != new {
                    self.prefetch(q);
                }
            }
            let q = marks[s];
            let open_block = next as usize / BITS;
            if q != new {
                let (b, i) = (q as usize / BITS, q as usize % BITS);
                // Not `below`: inlined into the feed loop's popcnt build, the portable form
                // compiles to popcounts, where `below` would test the CPU and call out.
                let upto = self.blocks[b].below_portable(i) + 1;
                let d = if b == open_block {
                    open -= 1;
                    open + 1 - upto
                } else {
                    live - self.counts.before_less_one(b) - upto
                };
                self.blocks[b].0[i / 64] &= !(1u64 << (i % 64));
                live -= 1;
                marks[s] = bucket(d as u64);
            }
            let i = next as usize % BITS;
            self.blocks[open_block].0[i / 64] |= 1u64 << (i % 64);
            open += 1;
            live += 1;
            next += 1;
            if (next as usize).is_multiple_of(BITS) {
                self.counts.add(open_block, open as i32);
                open = 0;
            }
        }
        (self.next, self.live, self.open) = (next, live, open);
    }

    /// Panics unless the tree, the open block's count and the live count are what the marks
    /// give (a test's check after runs of `walk`, whose counters compaction would rebuild).
    #[cfg(test)]
    pub fn assert_consistent(&self) {
        let r = Olken::from_blocks(self.blocks.clone(), self.next, self.live);
        let levels = |o: &Olken| -> Vec<Vec<[u32; FAN]>> {
            o.counts
                .levels
                .iter()
                .map(|l| l.iter().map(|n| n.0).collect())
                .collect()
        };
        assert!(levels(self) == levels(&r), "the tree disagrees with the marks");
        assert_eq!(self.open, r.open, "the open block's count");
        let marks: u32 = self.blocks.iter().map(Block::count).sum();
        assert_eq!(self.live, marks, "the live count");
    }

    /// For compaction: a function from each marked position to its rank among the marks
    /// (0-based), the position it is renumbered to. One pass over the blocks, then O(1) a query,
    /// instead of sorting the caller's pages by position.
    pub fn ranks(&self) -> impl Fn(u32) -> u32 + '_ {
        let mut before = Vec::with_capacity(self.blocks.len());
        let mut s = 0u32;
        for b in &self.blocks {
            before.push(s);
            s += b.count();
        }
        move |pos| {
            let (b, i) = (pos as usize / BITS, pos as usize % BITS);
            debug_assert!(self.blocks[b].bit(i), "position {pos} is not marked");
            before[b] + self.blocks[b].below(i)
        }
    }

    /// After the caller kept `live` pages, renumbered to positions 0..live in their order, with
    /// room for `room` references more.
    pub fn renumbered(&mut self, live: usize, room: usize) {
        *self = Self::with_capacity(live, live + room.max(1));
    }

    /// After the caller renumbered its `live` pages to positions 0..live
    /// (keeping their order), rebuild with room to grow.
    pub fn compacted(&mut self) {
        // Room for 7x the live pages: the bitmap costs a bit per position, and
        // compaction (a pass over the live pages) then comes once per 7x live references.
        let live = self.live as usize;
        *self = Self::with_capacity(live, (8 * live).max(1024));
    }
}

// The snapshot format is the word-level one of before (words, a tree, next, live), so older
// snapshots restore: the tree is not written (empty) and is rebuilt from the words on restore.
struct Words<'a>(&'a [Block]);

impl Serialize for Words<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.0.len() * WORDS))?;
        for w in self.0.iter().flat_map(|b| b.0.iter()) {
            seq.serialize_element(w)?;
        }
        seq.end()
    }
}

impl Serialize for Olken {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("Olken", 4)?;
        st.serialize_field("words", &Words(&self.blocks))?;
        st.serialize_field("tree", &[0u32; 0][..])?;
        st.serialize_field("next", &self.next)?;
        st.serialize_field("live", &self.live)?;
        st.end()
    }
}

#[derive(Deserialize)]
#[serde(rename = "Olken")]
struct Wire {
    words: Vec<u64>,
    #[allow(dead_code)] // written by older kernels; rebuilt instead
    tree: Vec<u32>,
    next: u32,
    live: u32,
}

impl<'de> Deserialize<'de> for Olken {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let w = Wire::deserialize(d)?;
        let mut blocks = vec![Block::default(); w.words.len().div_ceil(WORDS).max(1)];
        for (k, word) in w.words.into_iter().enumerate() {
            blocks[k / WORDS].0[k % WORDS] = word;
        }
        if w.next as usize > blocks.len() * BITS {
            return Err(serde::de::Error::custom("Olken: next position past the marks"));
        }
        Ok(Self::from_blocks(blocks, w.next, w.live))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{naive_distances, Rng};
    use std::collections::HashMap;

    /// Feed references through Olken the way the pool does (renumbering live pages by rank when
    /// full), checking the ranks against a sort of the positions.
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
                    {
                        let rank = o.ranks();
                        for (i, (pos, p)) in live.into_iter().enumerate() {
                            assert_eq!(rank(pos), i as u32, "rank of position {pos}");
                            at.insert(p, i as u32);
                        }
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
    fn distances_across_many_blocks_and_compactions_equal_a_naive_stack() {
        // A footprint of several blocks, uniform and hot references: queries in the open block,
        // in closed blocks, at block edges, and compactions with a partly filled open block.
        for seed in 2..6 {
            let mut rng = Rng(seed);
            let pages = 300 + 500 * seed;
            let refs: Vec<u64> = (0..12_000)
                .map(|i| {
                    if i % 3 == 0 {
                        rng.below(pages)
                    } else {
                        rng.skewed(pages)
                    }
                })
                .collect();
            let (got, compactions) = olken_distances(&refs);
            assert_eq!(got, naive_distances(&refs), "seed {seed}");
            assert!(compactions >= 2, "seed {seed}: {compactions} compactions");
        }
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
    fn block_counts_before_each_block_equal_a_naive_sum() {
        let mut rng = Rng(7);
        let mut o = Olken::with_capacity(0, BITS * 40);
        let mut marked = vec![false; BITS * 40];
        for _ in 0..15_000 {
            marked[o.mark_next() as usize] = true;
        }
        for _ in 0..9000 {
            let p = rng.below(15_000) as usize;
            if marked[p] {
                o.unmark(p as u32);
                marked[p] = false;
            }
        }
        let closed = 15_000 / BITS;
        for b in 0..=closed {
            let naive = marked[..b * BITS].iter().filter(|m| **m).count() as u32;
            assert_eq!(o.blocks_before(b), naive, "blocks before {b}");
        }
        let open = marked[closed * BITS..].iter().filter(|m| **m).count() as u32;
        assert_eq!(o.open, open);
        assert_eq!(o.live as usize, marked.iter().filter(|m| **m).count());
    }

    #[test]
    fn block_counts_over_several_levels_equal_a_naive_sum() {
        // 5,000 blocks: four levels, the top one partly filled; marks removed at random.
        let mut rng = Rng(8);
        let blocks = 5000;
        let mut o = Olken::with_capacity(blocks * BITS - 100, blocks * BITS);
        let mut per_block = vec![BITS as u32; blocks];
        per_block[blocks - 1] = (BITS - 100) as u32;
        for _ in 0..200_000 {
            let p = rng.below((blocks * BITS - 100) as u64) as usize;
            if o.blocks[p / BITS].bit(p % BITS) {
                o.unmark(p as u32);
                per_block[p / BITS] -= 1;
            }
        }
        assert_eq!(o.counts.levels.len(), 4);
        let mut naive = 0u32;
        for (b, n) in per_block.iter().enumerate().take(blocks - 1) {
            assert_eq!(o.blocks_before(b), naive, "blocks before {b}");
            naive += n;
        }
        assert_eq!(o.blocks_before(blocks - 1), naive);
        assert_eq!(o.open, per_block[blocks - 1]);
    }

    #[test]
    fn a_walk_gives_what_distance_unmark_and_mark_next_give_over_four_levels() {
        // 5,000 blocks (four tree levels), all but 100 positions marked, pages repeating within
        // a run, runs that close blocks as they mark: every bucket, then the whole structure,
        // agree with one query and update at a time.
        let mut rng = Rng(12);
        let live = 5000 * BITS - 100;
        let (mut a, mut b) = (Olken::with_capacity(live, 5000 * BITS + 60_000), Olken::default());
        b.clone_from(&a);
        let mut at: Vec<u32> = (0..live as u32).collect(); // page -> its position
        let mut hot = 0;
        while a.room() > 0 {
            let run = (rng.below(1200) as usize + 1).min(a.room());
            let first = a.next_position();
            let mut marks = Vec::with_capacity(run);
            let mut want = Vec::with_capacity(run);
            for s in 0..run {
                // Half the pages from a few hot ones, so repeats fall inside a run.
                let page = match rng.below(10) {
                    0 => at.len(), // a page new to the stack
                    1..5 => rng.below(40) as usize,
                    _ => rng.below(at.len() as u64) as usize,
                };
                hot += usize::from(page < 40);
                if page == at.len() {
                    at.push(u32::MAX);
                    marks.push(u32::MAX);
                    want.push(u32::MAX);
                } else {
                    let q = at[page];
                    marks.push(q);
                    let d = b.distance(q);
                    b.unmark(q);
                    want.push(d as u32 ^ 0x5a5a);
                }
                assert_eq!(b.mark_next(), first + s as u32);
                at[page] = first + s as u32;
            }
            a.walk(&mut marks, u32::MAX, |d| d as u32 ^ 0x5a5a);
            assert_eq!(marks, want, "a run from position {first}");
            a.assert_consistent();
        }
        assert!(hot > 10_000 && at.len() > live + 3000 && a.counts.levels.len() == 4);
        assert_eq!((a.next, a.live, a.open), (b.next, b.live, b.open));
        assert!(
            a.blocks.iter().zip(&b.blocks).all(|(x, y)| x.0 == y.0),
            "the marks differ"
        );
    }

    #[test]
    fn compaction_keeps_a_partial_open_block_right() {
        // live not a multiple of the block: the rebuilt open block holds the remainder.
        for live in [0usize, 1, 511, 512, 513, 1500] {
            let o = Olken::with_capacity(live, 8 * live + 1024);
            assert_eq!(o.open as usize, live % BITS, "live {live}");
            assert_eq!(o.blocks_before(live / BITS) as usize, live - live % BITS);
            for pos in 0..live as u32 {
                assert_eq!(o.distance(pos), (live as u64) - 1 - pos as u64, "live {live} pos {pos}");
            }
        }
    }

    #[derive(Serialize)]
    struct OldWire {
        words: Vec<u64>,
        tree: Vec<u32>,
        next: u32,
        live: u32,
    }

    #[test]
    fn snapshots_of_this_and_the_word_level_format_restore_to_the_same_distances() {
        let mut rng = Rng(9);
        let mut o = Olken::default();
        let mut at: HashMap<u64, u32> = HashMap::new();
        for _ in 0..900 {
            let page = rng.skewed(400);
            if let Some(&pos) = at.get(&page) {
                o.unmark(pos);
            }
            at.insert(page, o.mark_next());
        }
        let again: Olken = bincode::deserialize(&bincode::serialize(&o).unwrap()).unwrap();
        // An older kernel's snapshot: 64-bit words (not a whole number of blocks) and a
        // word-level tree, which is ignored.
        let words: Vec<u64> = o.blocks.iter().flat_map(|b| b.0).take(15).collect();
        let old = OldWire {
            words,
            tree: vec![7; 16],
            next: o.next,
            live: o.live,
        };
        let older: Olken = bincode::deserialize(&bincode::serialize(&old).unwrap()).unwrap();
        for r in [&again, &older] {
            assert_eq!((r.next, r.live, r.open), (o.next, o.live, o.open));
            for &pos in at.values() {
                assert_eq!(r.distance(pos), o.distance(pos));
            }
        }
    }
}
