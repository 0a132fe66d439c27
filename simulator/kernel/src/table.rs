//! The page table: (object, page) -> latest position and pane, by linear
//! probing in one flat array. Flat slots let the feed loop prefetch the slot
//! of a reference a few steps ahead, so the cache misses of a large footprint
//! overlap instead of queueing (the hash table was the exact mode's bottleneck).
//!
//! A slot is 16 bytes, four to a cache line and never across two: the object and page packed
//! in one word (an object id below 2^24 and a page below 2^40, every DB2 page number), the
//! position and the pane. Against 24-byte slots that is one line prefetched per reference
//! instead of two and a third less memory to fault in and probe (bench/README.md has the
//! figures). A key that does not pack goes to a small map beside the table.

use crate::mapped::Mapped;
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

const EMPTY: u32 = u32::MAX;
const PAGE_BITS: u32 = 40;
const OBJ_LIMIT: u32 = 1 << (64 - PAGE_BITS);
/// An index of `entry` with this bit set is in the overflow map's list.
const OVER: usize = 1 << (usize::BITS - 1);

#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
#[repr(C, align(16))]
pub struct Slot {
    key: u64,
    pub pos: u32, // EMPTY marks a free slot
    /// The pane of the latest touch, as its owner counts it (PoolState: relative to a base).
    pub pane: i32,
}

const FREE: Slot = Slot {
    key: 0,
    pos: EMPTY,
    pane: 0,
};

/// (object, page) in one word; one-to-one only for the keys `pack` accepts.
#[inline]
fn word(obj: u32, page: u64) -> u64 {
    ((obj as u64) << PAGE_BITS) | page
}

/// The (object, page) a packed word holds.
#[inline]
fn unword(key: u64) -> (u32, u64) {
    ((key >> PAGE_BITS) as u32, key & ((1u64 << PAGE_BITS) - 1))
}

/// (object, page) in one word, when both fit.
#[inline]
fn pack(obj: u32, page: u64) -> Option<u64> {
    (page >> PAGE_BITS == 0 && obj < OBJ_LIMIT).then_some(word(obj, page))
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PageTable {
    slots: Mapped<Slot>,
    bits: u32,
    len: usize,
    /// Keys that do not pack: (object, page) -> index in `over_slots`.
    over: FxHashMap<(u32, u64), usize>,
    over_slots: Vec<((u32, u64), Slot)>,
}

impl Default for PageTable {
    fn default() -> Self {
        PageTable {
            slots: Mapped::new(1024, FREE),
            bits: 10,
            len: 0,
            over: FxHashMap::default(),
            over_slots: Vec::new(),
        }
    }
}

#[inline]
fn hash(key: u64) -> u64 {
    (key ^ (key >> 40).rotate_right(24)).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (key >> 29)
}

impl PageTable {
    #[inline]
    fn home(&self, key: u64) -> usize {
        (hash(key).wrapping_mul(0xD6E8_FEB8_6659_FD93) >> (64 - self.bits)) as usize
    }

    pub fn len(&self) -> usize {
        self.len + self.over_slots.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Start loading the line a probe for (obj, page) reads first: its home slot's (probes
    /// that run past it are rare at the table's load). A hint: a key that does not pack loads
    /// some line of the table.
    #[inline]
    pub fn prefetch(&self, obj: u32, page: u64) {
        if let Some(s) = self.slots.get(self.home(word(obj, page))) {
            crate::prefetch::line(s);
        }
    }

    /// The position of (obj, page), to prefetch by: no check that the key packs (a key that
    /// does not may give another page's position, or none).
    #[inline]
    pub fn position_hint(&self, obj: u32, page: u64) -> Option<u32> {
        self.find(word(obj, page)).map(|i| self.slots[i].pos)
    }

    /// Index of the slot holding (obj, page), inserting a free slot for it when absent
    /// (its pos is then EMPTY: the caller fills it). Returns (index, was_present).
    #[inline(always)]
    pub fn entry(&mut self, obj: u32, page: u64) -> (usize, bool) {
        let Some(key) = pack(obj, page) else {
            return self.over_entry(obj, page);
        };
        if (self.len + 1) * 10 > self.slots.len() * 6 {
            self.grow();
        }
        let mask = self.slots.len() - 1;
        let mut i = self.home(key);
        loop {
            let s = &self.slots[i];
            if s.pos == EMPTY {
                self.slots[i] = Slot {
                    key,
                    pos: EMPTY,
                    pane: 0,
                };
                self.len += 1;
                return (i, false);
            }
            if s.key == key {
                return (i, true);
            }
            i = (i + 1) & mask;
        }
    }

    #[cold]
    #[inline(never)]
    fn over_entry(&mut self, obj: u32, page: u64) -> (usize, bool) {
        if let Some(&i) = self.over.get(&(obj, page)) {
            return (i | OVER, true);
        }
        self.over.insert((obj, page), self.over_slots.len());
        self.over_slots.push(((obj, page), FREE));
        ((self.over_slots.len() - 1) | OVER, false)
    }

    #[inline(always)]
    pub fn slot_mut(&mut self, i: usize) -> &mut Slot {
        if i & OVER != 0 {
            return &mut self.over_slots[i & !OVER].1;
        }
        &mut self.slots[i]
    }

    /// The slot of (obj, page), if any.
    #[inline]
    pub fn get(&self, obj: u32, page: u64) -> Option<&Slot> {
        match pack(obj, page) {
            Some(key) => self.find(key).map(|i| &self.slots[i]),
            None => self.over_get(obj, page),
        }
    }

    #[cold]
    #[inline(never)]
    fn over_get(&self, obj: u32, page: u64) -> Option<&Slot> {
        self.over.get(&(obj, page)).map(|&i| &self.over_slots[i].1)
    }

    /// Index of the slot holding `key`, if any.
    #[inline]
    fn find(&self, key: u64) -> Option<usize> {
        let mask = self.slots.len() - 1;
        let mut i = self.home(key);
        loop {
            let s = &self.slots[i];
            if s.pos == EMPTY {
                return None;
            }
            if s.key == key {
                return Some(i);
            }
            i = (i + 1) & mask;
        }
    }

    /// Remove (obj, page); backward-shift deletion keeps probe chains intact.
    pub fn remove(&mut self, obj: u32, page: u64) -> Option<Slot> {
        let Some(key) = pack(obj, page) else {
            let i = self.over.remove(&(obj, page))?;
            let (_, removed) = self.over_slots.swap_remove(i);
            if let Some((moved, _)) = self.over_slots.get(i) {
                self.over.insert(*moved, i);
            }
            return Some(removed);
        };
        let i = self.find(key)?;
        let mask = self.slots.len() - 1;
        let removed = self.slots[i];
        let mut hole = i;
        let mut j = (i + 1) & mask;
        loop {
            let s = self.slots[j];
            if s.pos == EMPTY {
                break;
            }
            let home = self.home(s.key);
            // Move s into the hole when its home is not cyclically in (hole, j].
            let in_range = if hole <= j {
                home > hole && home <= j
            } else {
                home > hole || home <= j
            };
            if !in_range {
                self.slots[hole] = s;
                hole = j;
            }
            j = (j + 1) & mask;
        }
        self.slots[hole] = FREE;
        self.len -= 1;
        Some(removed)
    }

    /// Double the table where it lies (`Mapped`: no copy, only the new half touched for the
    /// first time) and place the keys again from the last slot down. A home is the hash's top
    /// bits, so a key's new home is 2h or 2h + 1 for its old home h: it lands in slots already
    /// passed, free or placed, and reading and writing both sweep downwards. A key that would
    /// land below its old slot (displaced past its home by more than the home's index, near slot
    /// 0) or run past the end (a cluster near the top) waits and is inserted at the end. Lookups
    /// stay right: a key is only ever placed past placed keys, and slots later freed lie below.
    #[cold]
    #[inline(never)]
    fn grow(&mut self) {
        let n = self.slots.len();
        self.slots.grow(2 * n, FREE);
        self.bits += 1;
        let mut waiting = Vec::new();
        for i in (0..n).rev() {
            let s = self.slots[i];
            if s.pos == EMPTY {
                continue;
            }
            self.slots[i] = FREE;
            let mut q = self.home(s.key);
            if q < i {
                waiting.push(s);
                continue;
            }
            while q < 2 * n && self.slots[q].pos != EMPTY {
                q += 1;
            }
            if q == 2 * n {
                waiting.push(s);
            } else {
                self.slots[q] = s;
            }
        }
        let mask = 2 * n - 1;
        for s in waiting {
            let mut q = self.home(s.key);
            while self.slots[q].pos != EMPTY {
                q = (q + 1) & mask;
            }
            self.slots[q] = s;
        }
    }

    /// Every occupied slot with its page.
    pub fn entries(&self) -> impl Iterator<Item = ((u32, u64), &Slot)> {
        let over = self.over_slots.iter().map(|(k, s)| (*k, s));
        self.slots
            .iter()
            .filter(|s| s.pos != EMPTY)
            .map(|s| (unword(s.key), s))
            .chain(over)
    }

    /// Every occupied slot, for compaction.
    pub fn occupied_mut(&mut self) -> impl Iterator<Item = &mut Slot> {
        let over = self.over_slots.iter_mut().map(|(_, s)| s);
        self.slots.iter_mut().filter(|s| s.pos != EMPTY).chain(over)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::Rng;
    use std::collections::HashMap;

    #[test]
    fn entries_and_removals_match_a_hashmap() {
        // Keys that pack and keys that do not (an object id from 2^24, a page from 2^40), mixed.
        let mut rng = Rng(3);
        let mut t = PageTable::default();
        let mut want: HashMap<(u32, u64), u32> = HashMap::new();
        for step in 0..80_000u32 {
            let obj = [0, 1, 2, 3, OBJ_LIMIT - 1, OBJ_LIMIT, u32::MAX][rng.below(7) as usize];
            let page =
                rng.below(3000) + [0, (1 << PAGE_BITS) - 3000, 1 << PAGE_BITS, u64::MAX - 3000][rng.below(4) as usize];
            let key = (obj, page);
            if rng.below(4) == 0 {
                assert_eq!(t.remove(key.0, key.1).map(|s| s.pos), want.remove(&key), "step {step}");
            } else {
                let (i, present) = t.entry(key.0, key.1);
                assert_eq!(present, want.contains_key(&key), "step {step}");
                if present {
                    assert_eq!(t.slot_mut(i).pos, want[&key]);
                }
                t.slot_mut(i).pos = step;
                want.insert(key, step);
            }
            assert_eq!(t.len(), want.len());
        }
        assert!(t.bits > 10, "the table never grew");
        assert!(
            !t.over_slots.is_empty() && t.len > 0,
            "both the table and the overflow map hold keys"
        );
        for (key, pos) in &want {
            assert_eq!(t.get(key.0, key.1).map(|s| s.pos), Some(*pos), "{key:?}");
        }
        let mut seen: Vec<u32> = t.occupied_mut().map(|s| s.pos).collect();
        let mut expected: Vec<u32> = want.into_values().collect();
        seen.sort_unstable();
        expected.sort_unstable();
        assert_eq!(seen, expected);
    }

    #[test]
    fn a_slot_is_a_quarter_of_a_cache_line() {
        assert_eq!(std::mem::size_of::<Slot>(), 16);
        assert_eq!(std::mem::align_of::<Slot>(), 16);
        // Keys that differ only above the packed bits do not meet in the table.
        assert_eq!(pack(1, 5), Some((1 << PAGE_BITS) | 5));
        assert_eq!(pack(0, (1 << PAGE_BITS) | 5), None);
        assert_eq!(pack(OBJ_LIMIT, 5), None);
    }

    #[test]
    fn keys_stay_reachable_as_the_table_doubles_in_place_into_huge_pages() {
        // 400,000 keys: the table doubles ten times, the last ones in 2 MiB pages. Among them
        // keys whose homes are the table's top 1/256th at every size, so clusters run off the
        // end and wrap round to slot 0, and each growth has keys that must wait.
        let mut rng = Rng(21);
        let mut t = PageTable::default();
        let top = |page: u64| (hash(word(1, page)).wrapping_mul(0xD6E8_FEB8_6659_FD93) >> 56) == 255;
        let mut keys: Vec<(u32, u64)> = Vec::new();
        let mut tops = 0;
        for n in 0..400_000u32 {
            let key = if n % 100 == 0 {
                tops += 1;
                (1, (0..).map(|_| rng.below(1 << 39)).find(|&p| top(p)).unwrap())
            } else {
                (2, rng.below(1 << 39))
            };
            let (i, present) = t.entry(key.0, key.1);
            if !present {
                t.slot_mut(i).pos = n;
                keys.push(key);
            }
        }
        assert!(t.bits >= 20 && tops == 4000, "the table did not reach 2 MiB pages");
        let wrapped = (0..16)
            .filter(|&i| t.slots[i].pos != EMPTY && t.home(t.slots[i].key) > 1 << 19)
            .count();
        assert!(wrapped > 0, "no cluster wrapped round");
        for (n, key) in keys.iter().enumerate() {
            assert!(t.get(key.0, key.1).is_some(), "key {n} {key:?} lost");
        }
        // Removals after the growths keep the rest reachable.
        for key in keys.iter().step_by(3) {
            assert!(t.remove(key.0, key.1).is_some());
        }
        for (n, key) in keys.iter().enumerate() {
            assert_eq!(t.get(key.0, key.1).is_some(), n % 3 != 0, "key {n} {key:?}");
        }
        assert_eq!(t.len(), keys.len() - keys.len().div_ceil(3));
    }

    #[test]
    fn removal_keeps_colliding_keys_reachable() {
        // Many keys on a small table: long probe chains that wrap around the end.
        let mut t = PageTable::default();
        let keys: Vec<(u32, u64)> = (0..600).map(|i| (i % 3, (i as u64) * 1024)).collect();
        for (n, k) in keys.iter().enumerate() {
            let (i, _) = t.entry(k.0, k.1);
            t.slot_mut(i).pos = n as u32;
        }
        for k in keys.iter().step_by(2) {
            assert!(t.remove(k.0, k.1).is_some());
        }
        for (n, k) in keys.iter().enumerate() {
            assert_eq!(t.get(k.0, k.1).is_some(), n % 2 == 1, "key {k:?}");
        }
        assert_eq!(t.remove(7, 7).map(|s| s.pos), None);
    }
}
