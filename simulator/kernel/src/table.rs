//! The page table: (object, page) -> latest position and pane, by linear
//! probing in one flat array. Flat slots let the feed loop prefetch the slot
//! of a reference a few steps ahead, so the cache misses of a large footprint
//! overlap instead of queueing (the hash table was the exact mode's bottleneck).

use serde::{Deserialize, Serialize};

const EMPTY: u32 = u32::MAX;

#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct Slot {
    pub page: u64,
    pub obj: u32,
    pub pos: u32, // EMPTY marks a free slot
    pub pane: i64,
}

const FREE: Slot = Slot {
    page: 0,
    obj: 0,
    pos: EMPTY,
    pane: 0,
};

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PageTable {
    slots: Vec<Slot>,
    bits: u32,
    len: usize,
}

impl Default for PageTable {
    fn default() -> Self {
        PageTable {
            slots: free_slots(1024),
            bits: 10,
            len: 0,
        }
    }
}

/// `n` free slots. A big table is asked to be backed by 2 MiB pages before its first touch:
/// its probes land anywhere in it, and with 4 KiB pages nearly each one (and each prefetch)
/// also misses the TLB.
fn free_slots(n: usize) -> Vec<Slot> {
    let mut v: Vec<Slot> = Vec::with_capacity(n);
    crate::huge::advise(&v);
    v.resize(n, FREE);
    v
}

#[inline]
fn hash(obj: u32, page: u64) -> u64 {
    (page ^ (obj as u64).rotate_right(24)).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (page >> 29)
}

impl PageTable {
    #[inline]
    fn home(&self, obj: u32, page: u64) -> usize {
        (hash(obj, page).wrapping_mul(0xD6E8_FEB8_6659_FD93) >> (64 - self.bits)) as usize
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Start loading the lines a probe for (obj, page) reads: its home slot's line and the
    /// next (a 24-byte slot straddles two lines one time in four, and probes run on; the second
    /// line measured about 30 % more refs/s in exact mode, a third none).
    #[inline]
    pub fn prefetch(&self, obj: u32, page: u64) {
        #[cfg(target_arch = "x86_64")]
        unsafe {
            use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            let p = self.slots.as_ptr().add(self.home(obj, page)) as *const i8;
            _mm_prefetch(p, _MM_HINT_T0);
            _mm_prefetch(p.wrapping_add(64), _MM_HINT_T0);
        }
    }

    /// Index of the slot holding (obj, page), inserting a free slot for it when absent
    /// (its pos is then EMPTY: the caller fills it). Returns (index, was_present).
    #[inline]
    pub fn entry(&mut self, obj: u32, page: u64) -> (usize, bool) {
        if (self.len + 1) * 10 > self.slots.len() * 6 {
            self.grow();
        }
        let mask = self.slots.len() - 1;
        let mut i = self.home(obj, page);
        loop {
            let s = &self.slots[i];
            if s.pos == EMPTY {
                self.slots[i] = Slot {
                    page,
                    obj,
                    pos: EMPTY,
                    pane: 0,
                };
                self.len += 1;
                return (i, false);
            }
            if s.page == page && s.obj == obj {
                return (i, true);
            }
            i = (i + 1) & mask;
        }
    }

    #[inline]
    pub fn slot_mut(&mut self, i: usize) -> &mut Slot {
        &mut self.slots[i]
    }

    /// The slot of (obj, page), if any.
    #[inline]
    pub fn get(&self, obj: u32, page: u64) -> Option<&Slot> {
        self.find(obj, page).map(|i| &self.slots[i])
    }

    /// Index of the slot holding (obj, page), if any.
    #[inline]
    fn find(&self, obj: u32, page: u64) -> Option<usize> {
        let mask = self.slots.len() - 1;
        let mut i = self.home(obj, page);
        loop {
            let s = &self.slots[i];
            if s.pos == EMPTY {
                return None;
            }
            if s.page == page && s.obj == obj {
                return Some(i);
            }
            i = (i + 1) & mask;
        }
    }

    /// Remove (obj, page); backward-shift deletion keeps probe chains intact.
    pub fn remove(&mut self, obj: u32, page: u64) -> Option<Slot> {
        let i = self.find(obj, page)?;
        let mask = self.slots.len() - 1;
        let removed = self.slots[i];
        let mut hole = i;
        let mut j = (i + 1) & mask;
        loop {
            let s = self.slots[j];
            if s.pos == EMPTY {
                break;
            }
            let home = self.home(s.obj, s.page);
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

    fn grow(&mut self) {
        let old = std::mem::take(&mut self.slots);
        self.bits += 1;
        self.slots = free_slots(1usize << self.bits);
        let mask = self.slots.len() - 1;
        for s in old.into_iter().filter(|s| s.pos != EMPTY) {
            let mut i = self.home(s.obj, s.page);
            while self.slots[i].pos != EMPTY {
                i = (i + 1) & mask;
            }
            self.slots[i] = s;
        }
    }

    /// Every occupied slot, for compaction.
    pub fn occupied_mut(&mut self) -> impl Iterator<Item = &mut Slot> {
        self.slots.iter_mut().filter(|s| s.pos != EMPTY)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::Rng;
    use std::collections::HashMap;

    #[test]
    fn entries_and_removals_match_a_hashmap() {
        let mut rng = Rng(3);
        let mut t = PageTable::default();
        let mut want: HashMap<(u32, u64), u32> = HashMap::new();
        for step in 0..60_000u32 {
            let key = (rng.below(5) as u32, rng.below(4000));
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
        let mut seen: Vec<((u32, u64), u32)> = t.occupied_mut().map(|s| ((s.obj, s.page), s.pos)).collect();
        let mut expected: Vec<((u32, u64), u32)> = want.into_iter().collect();
        seen.sort_unstable();
        expected.sort_unstable();
        assert_eq!(seen, expected);
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
            assert_eq!(t.find(k.0, k.1).is_some(), n % 2 == 1, "key {k:?}");
        }
        assert_eq!(t.remove(7, 7).map(|s| s.pos), None);
    }
}
