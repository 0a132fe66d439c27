//! An exact LRU stack of bounded depth, for the miniature caches that are LRU (mini_set.rs):
//! each reference's distance (distinct pages referenced since the page's previous reference)
//! and the pages in recency order, each with the kind of its latest reference.
//!
//! Olken's marks over positions (olken.rs) and a page table (table.rs) from a page to its
//! latest position, the kind in the slot's spare word. A page deeper than `depth` answers no
//! cache of the stack's: pages that deep are dropped when the positions are renumbered, so the
//! stack holds at most `depth` pages plus the references of one renumbering's room, whatever
//! the footprint.

use crate::mini::Key;
use crate::olken::Olken;
use crate::table::PageTable;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The distance of a first reference, or of a page deeper than the stack keeps.
pub const NOT_HELD: u64 = u64::MAX;

#[derive(Clone, Debug)]
pub struct LruStack {
    depth: usize,
    pages: PageTable, // page -> latest position; `pane` 1 when that reference was sequential
    olken: Olken,
}

impl LruStack {
    pub fn new(depth: usize) -> Self {
        LruStack {
            depth: depth.max(1),
            pages: PageTable::default(),
            olken: Olken::default(),
        }
    }

    /// Keep pages only `depth` deep from the next renumbering on (the largest cache asking is smaller).
    pub fn set_depth(&mut self, depth: usize) {
        self.depth = depth.max(1);
    }

    pub fn depth(&self) -> usize {
        self.depth
    }

    /// Pages held (some may be deeper than `depth`, not dropped yet).
    pub fn len(&self) -> usize {
        self.pages.len()
    }

    pub fn is_empty(&self) -> bool {
        self.pages.is_empty()
    }

    /// Start loading what a coming reference of `key` reads: stage 0 its table slot, stage 1
    /// (the slot loaded by then) the line of its position's mark.
    #[inline]
    pub fn prefetch(&self, key: Key, stage: u8) {
        if stage == 0 {
            self.pages.prefetch(key.0, key.1);
        } else if let Some(pos) = self.pages.position_hint(key.0, key.1) {
            self.olken.prefetch(pos);
        }
    }

    /// Reference `key` (`sequential`: by a sequential getpage): its distance, NOT_HELD when the
    /// stack does not hold it.
    #[inline]
    pub fn access(&mut self, key: Key, sequential: bool) -> u64 {
        if self.olken.is_full() {
            self.renumber();
        }
        let (i, present) = self.pages.entry(key.0, key.1);
        let e = self.pages.slot_mut(i);
        let d = if present {
            let d = self.olken.distance(e.pos);
            self.olken.unmark(e.pos);
            d
        } else {
            NOT_HELD
        };
        e.pos = self.olken.mark_next();
        e.pane = i32::from(sequential);
        d
    }

    /// Number the pages again from 0 in their order, the ones deeper than `depth` dropped, with
    /// room for twice as many references as pages kept (at least 512, at most twice `depth`)
    /// before the next time: each renumbering's pass is paid for by the references since, and
    /// the positions never outgrow the pages held.
    #[cold]
    fn renumber(&mut self) {
        let live = self.pages.len();
        let cut = live.saturating_sub(self.depth) as u32; // ranks below it are too deep
        let mut gone = Vec::new();
        {
            let rank = self.olken.ranks();
            for (key, slot) in self.pages.entries() {
                if rank(slot.pos) < cut {
                    gone.push(key);
                }
            }
            for slot in self.pages.occupied_mut() {
                // The gone ones are removed next: any position but the table's free mark.
                slot.pos = rank(slot.pos).saturating_sub(cut);
            }
        }
        for key in gone {
            self.pages.remove(key.0, key.1);
        }
        let kept = self.pages.len();
        self.olken.renumbered(kept, 2 * kept.clamp(512, self.depth.max(512)));
    }

    /// The `n` most recent pages (fewer when the stack holds fewer), least recent first, each
    /// with whether a sequential getpage referenced it last.
    pub fn recent(&self, n: usize) -> Vec<(Key, bool)> {
        let live = self.pages.len();
        let from = live.saturating_sub(n) as u32;
        let rank = self.olken.ranks();
        let mut v: Vec<(u32, Key, bool)> = self
            .pages
            .entries()
            .map(|(key, s)| (rank(s.pos), key, s.pane != 0))
            .filter(|&(r, _, _)| r >= from)
            .collect();
        v.sort_unstable_by_key(|&(r, _, _)| r);
        v.into_iter().map(|(_, key, seq)| (key, seq)).collect()
    }

    /// A stack holding `pages` (least recent first, none twice) and nothing else.
    fn of(depth: usize, pages: &[(Key, bool)]) -> Result<LruStack, String> {
        let mut s = LruStack::new(depth);
        s.olken.renumbered(0, pages.len() + 512);
        for &(key, seq) in pages {
            if s.access(key, seq) != NOT_HELD {
                return Err(format!("LRU stack's snapshot: page {key:?} twice"));
            }
        }
        Ok(s)
    }
}

/// A snapshot is the depth and the pages that deep, least recent first: what the stack answers
/// from (the positions and deeper pages are not).
impl Serialize for LruStack {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        (self.depth as u64, self.recent(self.depth)).serialize(s)
    }
}

impl<'de> Deserialize<'de> for LruStack {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let (depth, pages): (u64, Vec<(Key, bool)>) = Deserialize::deserialize(d)?;
        if depth == 0 || depth > u64::from(u32::MAX / 4) || pages.len() as u64 > depth {
            return Err(serde::de::Error::custom(format!(
                "LRU stack's snapshot: {} pages at depth {depth}",
                pages.len()
            )));
        }
        LruStack::of(depth as usize, &pages).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{naive_distances, Rng};

    fn refs(seed: u64, n: usize, pages: u64) -> Vec<(Key, bool)> {
        let mut rng = Rng(seed);
        (0..n)
            .map(|_| ((rng.below(4) as u32, rng.skewed(pages)), rng.below(5) == 0))
            .collect()
    }

    #[test]
    fn distances_up_to_the_depth_equal_brute_force() {
        // A footprint far deeper than the stack: it renumbers and drops many times.
        let r = refs(5, 40_000, 6000);
        let keys: Vec<Key> = r.iter().map(|x| x.0).collect();
        let want = naive_distances(&keys);
        let depth = 700;
        let mut s = LruStack::new(depth);
        for (t, (&(key, seq), w)) in r.iter().zip(&want).enumerate() {
            let d = s.access(key, seq);
            match w {
                Some(w) if (*w as usize) < depth => assert_eq!(d, *w, "reference {t}"),
                _ => assert!(d == NOT_HELD || d as usize >= depth, "reference {t}: {d} for {w:?}"),
            }
            // A renumbering leaves room for twice the depth, in whole blocks of 512 positions.
            assert!(
                s.len() <= depth + 2 * depth + 512,
                "reference {t}: {} pages held",
                s.len()
            );
        }
        // The most recent pages in order, with the kind of their latest reference.
        let mut last: Vec<(Key, bool)> = Vec::new();
        for &(key, seq) in r.iter().rev() {
            if !last.iter().any(|x| x.0 == key) {
                last.push((key, seq));
            }
        }
        last.truncate(depth);
        last.reverse();
        assert_eq!(s.recent(depth), last);
        assert_eq!(s.recent(3), last[depth - 3..]);
    }

    #[test]
    fn a_snapshot_goes_on_identically_and_one_with_a_page_twice_is_refused() {
        let r = refs(9, 20_000, 3000);
        let (first, rest) = r.split_at(12_000);
        let mut a = LruStack::new(400);
        first.iter().for_each(|&(k, s)| {
            a.access(k, s);
        });
        let mut b: LruStack = bincode::deserialize(&bincode::serialize(&a).unwrap()).unwrap();
        assert_eq!(b.recent(400), a.recent(400));
        for &(k, s) in rest {
            let (x, y) = (a.access(k, s), b.access(k, s));
            assert!(x == y || (x as usize >= 400 && y as usize >= 400), "{x} {y}");
        }
        let twice = (400u64, vec![((1u32, 5u64), false), ((1, 5), true)]);
        let err = bincode::deserialize::<LruStack>(&bincode::serialize(&twice).unwrap()).unwrap_err();
        assert!(err.to_string().contains("twice"), "{err}");
    }
}
