//! A DB2-like buffer pool, buffer by buffer: what the workload generator runs
//! to decide hits, reads and writes (an implementation independent of the
//! stack-distance simulator it is checked against).
//!
//! Two LRU chains (random and sequential, as DB2 keeps with VPSEQT), steals
//! from the sequential chain first when it holds more than VPSEQT % of the
//! pool; a sequential getpage that misses triggers a prefetch of up to
//! `prefetch_quantity` pages; dirty pages are written asynchronously when the
//! pool's dirty count passes DWQT % or an object's passes VDWQT %, and
//! synchronously when a dirty buffer must be stolen. In data sharing, an
//! update by another member cross-invalidates this member's copy.

use crate::chains::Chains;
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

pub type Key = (u32, u64);

#[derive(Clone, Copy, Serialize, Deserialize)]
struct Buf {
    key: Key,
    dirty: bool,
    invalid: bool, // cross-invalidated: stays in place until its next getpage refreshes it
}

/// Counters of one statistics interval (names as in the pool_stats schema).
#[derive(Clone, Copy, Default, Debug)]
pub struct Counters {
    pub getpages_random: u64,
    pub getpages_sequential: u64,
    pub getpages_rid: u64,
    pub sync_reads_random: u64,
    pub sync_reads_sequential: u64,
    pub dyn_prefetch_requests: u64,
    pub dyn_prefetch_reads: u64,
    pub dyn_prefetch_pages: u64,
    pub list_prefetch_requests: u64,
    pub list_prefetch_reads: u64,
    pub list_prefetch_pages: u64,
    pub buffer_updates: u64,
    pub pages_written: u64,
    pub sync_writes: u64,
    pub async_writes: u64,
    pub dwqt_reached: u64,
    pub vdwqt_reached: u64,
    pub xi_invalidations: u64,
    pub xi_reads: u64,
}

pub struct ReadIo {
    pub t: f64,
    pub obj: u32,
    pub page: u64,
    pub pages: u32,
    pub kind: u8, // 0 sync, 1 sequential prefetch, 2 list prefetch, 3 dynamic prefetch
}

pub struct WriteIo {
    pub t: f64,
    pub obj: u32,
    pub pages: u32,
    pub kind: u8, // 0 sync, 1 async
}

pub struct PoolModel {
    cap: usize,
    seq_limit: usize,
    dwqt_pct: f64,
    vdwqt_pct: f64,
    prefetch: u32,
    dwqt: usize,
    vdwqt: usize,
    bufs: Chains<Buf>,
    map: FxHashMap<Key, u32>,
    dirty: usize,
    dirty_by_obj: FxHashMap<u32, usize>,
    dirty_queue: VecDeque<Key>,
    /// With `track_steals`, every stolen page in order (the group model unregisters them).
    pub(crate) track_steals: bool,
    pub(crate) stolen: Vec<Key>,
    pub counters: Counters,
    pub reads: Vec<ReadIo>,
    pub writes: Vec<WriteIo>,
}

impl PoolModel {
    pub fn new(vpsize: usize, vpseqt_pct: f64, prefetch: u32, dwqt_pct: f64, vdwqt_pct: f64) -> Self {
        let cap = vpsize.max(1);
        let pct = |p: f64| ((cap as f64) * p.clamp(0.0, 100.0) / 100.0).floor() as usize;
        PoolModel {
            cap,
            seq_limit: pct(vpseqt_pct),
            dwqt_pct,
            vdwqt_pct,
            prefetch: prefetch.max(1),
            dwqt: pct(dwqt_pct).max(1),
            vdwqt: pct(vdwqt_pct).max(1),
            bufs: Chains::with_capacity(cap.min(1 << 22)),
            map: FxHashMap::default(),
            dirty: 0,
            dirty_by_obj: FxHashMap::default(),
            dirty_queue: VecDeque::new(),
            track_steals: false,
            stolen: Vec::new(),
            counters: Counters::default(),
            reads: Vec::new(),
            writes: Vec::new(),
        }
    }

    fn steal(&mut self, t: f64) {
        let Some(victim) = self.bufs.victim(self.seq_limit) else {
            return;
        };
        let b = *self.bufs.get(victim);
        if b.dirty {
            self.clean(b.key);
            self.counters.sync_writes += 1;
            self.counters.pages_written += 1;
            self.writes.push(WriteIo {
                t,
                obj: b.key.0,
                pages: 1,
                kind: 0,
            });
        }
        self.map.remove(&b.key);
        self.bufs.remove(victim);
        if self.track_steals {
            self.stolen.push(b.key);
        }
    }

    fn insert(&mut self, key: Key, chain: u8, t: f64) {
        while self.map.len() >= self.cap {
            self.steal(t);
        }
        let i = self.bufs.insert(
            Buf {
                key,
                dirty: false,
                invalid: false,
            },
            chain,
        );
        self.map.insert(key, i);
    }

    fn clean(&mut self, key: Key) {
        if let Some(&i) = self.map.get(&key) {
            if self.bufs.get(i).dirty {
                self.bufs.get_mut(i).dirty = false;
                self.dirty -= 1;
                if let Some(d) = self.dirty_by_obj.get_mut(&key.0) {
                    *d -= 1;
                }
            }
        }
    }

    /// Write up to `limit` of the oldest dirty pages (of `obj` only, when given), in
    /// asynchronous write I/Os of up to 32 pages of one object each.
    fn write_out(&mut self, t: f64, obj: Option<u32>, limit: usize) {
        let mut by_obj: FxHashMap<u32, u32> = FxHashMap::default();
        let mut written = 0;
        let mut keep = VecDeque::new();
        while written < limit {
            let Some(key) = self.dirty_queue.pop_front() else { break };
            let still = self.map.get(&key).is_some_and(|&i| self.bufs.get(i).dirty);
            if !still {
                continue; // stale queue entry
            }
            if obj.is_some_and(|o| o != key.0) {
                keep.push_back(key);
                continue;
            }
            self.clean(key);
            *by_obj.entry(key.0).or_insert(0) += 1;
            written += 1;
        }
        while let Some(k) = keep.pop_back() {
            self.dirty_queue.push_front(k);
        }
        let mut objs: Vec<_> = by_obj.into_iter().collect();
        objs.sort_unstable();
        for (o, pages) in objs {
            let mut left = pages;
            while left > 0 {
                let n = left.min(32);
                self.writes.push(WriteIo {
                    t,
                    obj: o,
                    pages: n,
                    kind: 1,
                });
                self.counters.async_writes += 1;
                self.counters.pages_written += n as u64;
                left -= n;
            }
        }
    }

    fn update(&mut self, t: f64, key: Key) {
        self.counters.buffer_updates += 1;
        let Some(&i) = self.map.get(&key) else { return };
        if self.bufs.get(i).dirty {
            return;
        }
        self.bufs.get_mut(i).dirty = true;
        self.dirty += 1;
        let d = self.dirty_by_obj.entry(key.0).or_insert(0);
        *d += 1;
        let obj_dirty = *d;
        self.dirty_queue.push_back(key);
        if obj_dirty > self.vdwqt {
            self.counters.vdwqt_reached += 1;
            self.write_out(t, Some(key.0), 32);
        }
        if self.dirty > self.dwqt {
            self.counters.dwqt_reached += 1;
            self.write_out(t, None, 128);
        }
    }

    /// -ALTER BUFFERPOOL at time `t`: a new VPSIZE and VPSEQT. The thresholds in % follow the
    /// new size; a smaller pool steals (writing dirty pages) until it fits, a bigger one keeps
    /// its pages and fills its new buffers as reads come.
    pub fn alter(&mut self, t: f64, vpsize: usize, vpseqt_pct: f64) {
        let cap = vpsize.max(1);
        let pct = |p: f64| ((cap as f64) * p.clamp(0.0, 100.0) / 100.0).floor() as usize;
        self.cap = cap;
        self.seq_limit = pct(vpseqt_pct);
        self.dwqt = pct(self.dwqt_pct).max(1);
        self.vdwqt = pct(self.vdwqt_pct).max(1);
        while self.map.len() > self.cap {
            self.steal(t);
        }
    }

    /// Pages in the pool now.
    pub fn pages(&self) -> usize {
        self.map.len()
    }

    /// Another member changed this page: our copy is invalid (data sharing). As in DB2 the
    /// buffer stays where it is on its chain (only its validity flips, and its own change, if
    /// any, is the GBP's now); the next getpage refreshes it from the group buffer pool.
    pub fn cross_invalidate(&mut self, key: Key) {
        let Some(&i) = self.map.get(&key) else { return };
        if !self.bufs.get(i).invalid {
            self.bufs.get_mut(i).invalid = true;
            self.clean(key);
            self.counters.xi_invalidations += 1;
        }
    }

    /// One event; true when a getpage found its page in the pool.
    pub fn access(&mut self, t: f64, obj: u32, page: u64, access: u8, function: u8) -> bool {
        let key = (obj, page);
        if function == 1 {
            self.update(t, key);
            return true;
        }
        if function != 0 {
            return true;
        }
        let seq = access == 1;
        match access {
            1 => self.counters.getpages_sequential += 1,
            2 => self.counters.getpages_rid += 1,
            _ => self.counters.getpages_random += 1,
        }
        if let Some(&i) = self.map.get(&key) {
            if self.bufs.get(i).invalid {
                self.bufs.get_mut(i).invalid = false;
                // Refreshed from the group buffer pool, which caches changed pages: no disk
                // read, and the buffer was found (the trace's hit flag: no read I/O).
                self.counters.xi_reads += 1;
            }
            self.bufs.touch(i, seq as u8);
            return true;
        }
        match access {
            1 => {
                // Dynamic prefetch: this page and the next ones not yet in the pool, one I/O.
                let mut pages = 0u32;
                for p in page..page + self.prefetch as u64 {
                    if !self.map.contains_key(&(obj, p)) {
                        self.insert((obj, p), 1, t);
                        pages += 1;
                    }
                }
                self.counters.dyn_prefetch_requests += 1;
                self.counters.dyn_prefetch_reads += 1;
                self.counters.dyn_prefetch_pages += pages as u64;
                self.reads.push(ReadIo {
                    t,
                    obj,
                    page,
                    pages,
                    kind: 3,
                });
            }
            2 => {
                self.insert(key, 0, t);
                self.counters.list_prefetch_requests += 1;
                self.counters.list_prefetch_reads += 1;
                self.counters.list_prefetch_pages += 1;
                self.reads.push(ReadIo {
                    t,
                    obj,
                    page,
                    pages: 1,
                    kind: 2,
                });
            }
            _ => {
                self.insert(key, 0, t);
                self.counters.sync_reads_random += 1;
                self.reads.push(ReadIo {
                    t,
                    obj,
                    page,
                    pages: 1,
                    kind: 0,
                });
            }
        }
        false
    }

    // Primitives for the group model (gbpmodel.rs), which decides where a GBP-dependent page
    // comes from and so runs a getpage step by step.

    pub(crate) fn count_getpage(&mut self, access: u8) {
        match access {
            1 => self.counters.getpages_sequential += 1,
            2 => self.counters.getpages_rid += 1,
            _ => self.counters.getpages_random += 1,
        }
    }

    pub(crate) fn count_update(&mut self) {
        self.counters.buffer_updates += 1;
    }

    /// The page's buffer and whether it is valid (not cross-invalidated).
    pub(crate) fn find(&self, key: Key) -> Option<(u32, bool)> {
        self.map.get(&key).map(|&i| (i, !self.bufs.get(i).invalid))
    }

    /// A buffer found (or refreshed in place) by a getpage of `chain`'s kind: most recently used.
    pub(crate) fn touch_slot(&mut self, slot: u32, chain: u8) {
        self.bufs.touch(slot, chain);
    }

    /// An invalid buffer refreshed in place: valid again.
    pub(crate) fn revalidate(&mut self, slot: u32) {
        self.bufs.get_mut(slot).invalid = false;
    }

    /// Steal until a buffer is free (stolen pages go to `stolen` when tracked).
    pub(crate) fn make_room(&mut self, t: f64) {
        while self.map.len() >= self.cap {
            self.steal(t);
        }
    }

    /// A page read into a free buffer (after `make_room`), most recently used on `chain`.
    pub(crate) fn insert_new(&mut self, key: Key, chain: u8) {
        let i = self.bufs.insert(
            Buf {
                key,
                dirty: false,
                invalid: false,
            },
            chain,
        );
        self.map.insert(key, i);
    }

    /// A synchronous read I/O of one page from disk for a getpage of `access` type.
    pub(crate) fn sync_read(&mut self, t: f64, key: Key, access: u8) {
        if access == 1 {
            self.counters.sync_reads_sequential += 1;
        } else {
            self.counters.sync_reads_random += 1;
        }
        self.reads.push(ReadIo {
            t,
            obj: key.0,
            page: key.1,
            pages: 1,
            kind: 0,
        });
    }

    /// A prefetch request for a getpage of `access` type (1 dynamic, 2 list) that read `pages`
    /// pages from disk starting at `first` (none: every page came from the group buffer pool).
    pub(crate) fn prefetch_read(&mut self, t: f64, first: Key, access: u8, pages: u32) {
        let c = &mut self.counters;
        let kind = if access == 1 {
            c.dyn_prefetch_requests += 1;
            c.dyn_prefetch_reads += u64::from(pages > 0);
            c.dyn_prefetch_pages += pages as u64;
            3
        } else {
            c.list_prefetch_requests += 1;
            c.list_prefetch_reads += u64::from(pages > 0);
            c.list_prefetch_pages += pages as u64;
            2
        };
        if pages > 0 {
            self.reads.push(ReadIo {
                t,
                obj: first.0,
                page: first.1,
                pages,
                kind,
            });
        }
    }

    /// Prefetch quantity (pages per dynamic prefetch).
    pub(crate) fn prefetch_quantity(&self) -> u32 {
        self.prefetch
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{naive_distances, naive_lru_hits, Rng};

    #[test]
    fn random_getpages_hit_as_an_lru_stack_predicts() {
        let mut rng = Rng(21);
        let refs: Vec<Key> = (0..20_000).map(|_| (rng.below(2) as u32, rng.skewed(3000))).collect();
        let d = naive_distances(&refs);
        for size in [10usize, 300, 1200] {
            let mut m = PoolModel::new(size, 80.0, 32, 90.0, 90.0);
            let hits = refs.iter().filter(|k| m.access(0.0, k.0, k.1, 0, 0)).count() as u64;
            assert_eq!(hits, naive_lru_hits(&d, size as u64), "size {size}");
            assert_eq!(m.counters.getpages_random, refs.len() as u64);
            assert_eq!(m.counters.sync_reads_random, refs.len() as u64 - hits);
            assert_eq!(m.reads.len() as u64, m.counters.sync_reads_random);
        }
    }

    #[test]
    fn a_crafted_sequence_counted_by_hand() {
        // 4 buffers, prefetch 4 pages. Object 1: a sequential miss at page 10 reads 10-13 in one I/O;
        // 11 and 12 then hit. A random miss on page 50, a RID-list miss on page 60.
        let mut m = PoolModel::new(4, 100.0, 4, 90.0, 90.0);
        let got: Vec<bool> = [(10, 1), (11, 1), (12, 1), (50, 0), (60, 2), (50, 0)]
            .iter()
            .map(|&(page, access)| m.access(0.0, 1, page, access, 0))
            .collect();
        assert_eq!(got, vec![false, true, true, false, false, true]);
        let c = m.counters;
        assert_eq!((c.getpages_sequential, c.getpages_random, c.getpages_rid), (3, 2, 1));
        assert_eq!((c.dyn_prefetch_requests, c.dyn_prefetch_pages), (1, 4));
        assert_eq!((c.sync_reads_random, c.list_prefetch_pages), (1, 1));
        // 6 pages went into 4 buffers: the two least recently used (13, then 10) were stolen.
        assert!(m.map.len() == 4 && !m.map.contains_key(&(1, 13)) && !m.map.contains_key(&(1, 10)));
    }

    #[test]
    fn updates_are_written_when_vdwqt_is_passed_and_a_dirty_steal_writes_synchronously() {
        // 10 buffers, VDWQT 20 % = 2 pages of one object, DWQT high.
        let mut m = PoolModel::new(10, 80.0, 1, 90.0, 20.0);
        for p in 0..3 {
            m.access(0.0, 7, p, 0, 0);
            m.access(0.0, 7, p, 0, 1); // set write intent: the buffer is dirty
        }
        let c = m.counters;
        assert_eq!(
            (c.buffer_updates, c.vdwqt_reached, c.async_writes, c.pages_written),
            (3, 1, 1, 3)
        );
        // Dirty again, then pushed out by 10 other pages: one synchronous write.
        m.access(0.0, 7, 0, 0, 1);
        for p in 100..110 {
            m.access(0.0, 8, p, 0, 0);
        }
        assert_eq!(m.counters.sync_writes, 1);
    }

    #[test]
    fn an_altered_pool_shrinks_by_stealing_and_grows_keeping_its_pages() {
        let mut m = PoolModel::new(10, 80.0, 1, 90.0, 90.0);
        for p in 0..10 {
            m.access(0.0, 1, p, 0, 0);
        }
        m.access(0.0, 1, 9, 0, 1); // the newest page is dirty
        m.alter(1.0, 4, 80.0); // the 6 least recently used go, none dirty
        assert_eq!(m.pages(), 4);
        assert!((6..10).all(|p| m.map.contains_key(&(1, p))));
        assert_eq!(m.counters.sync_writes, 0);
        m.alter(2.0, 2, 80.0); // 6 and 7 go
        assert!(m.map.contains_key(&(1, 8)) && m.map.contains_key(&(1, 9)));
        m.alter(3.0, 1, 80.0); // 8 goes; 9 stays (most recent)
        assert_eq!((m.pages(), m.counters.sync_writes), (1, 0));
        m.alter(4.0, 100, 80.0); // grown: nothing lost, new pages fill the buffers
        for p in 20..60 {
            m.access(5.0, 1, p, 0, 0);
        }
        assert_eq!(m.pages(), 41);
        assert!(m.access(6.0, 1, 9, 0, 0));
    }

    #[test]
    fn a_cross_invalidated_page_is_refreshed_in_its_buffer_without_a_disk_read() {
        let mut m = PoolModel::new(2, 100.0, 1, 90.0, 90.0);
        assert!(!m.access(0.0, 1, 5, 0, 0));
        assert!(!m.access(0.0, 1, 6, 0, 0));
        m.cross_invalidate((1, 5));
        m.cross_invalidate((1, 5)); // invalid already: one invalidation
        m.cross_invalidate((1, 7)); // not in the pool: nothing to invalidate
        assert!(m.access(0.0, 1, 5, 0, 0)); // refreshed from the GBP, in place, now the newest
        let c = m.counters;
        assert_eq!((c.xi_invalidations, c.xi_reads, c.sync_reads_random), (1, 1, 2));
        assert!(!m.access(0.0, 1, 7, 0, 0)); // steals page 6, the oldest: 5 kept its buffer
        assert!(m.access(0.0, 1, 5, 0, 0));
        assert_eq!(m.counters.xi_reads, 1);
        // An invalid page stolen before its next getpage is read from disk like any other.
        m.cross_invalidate((1, 7));
        assert!(!m.access(0.0, 1, 8, 0, 0));
        assert!(!m.access(0.0, 1, 9, 0, 0));
        assert!(!m.access(0.0, 1, 7, 0, 0));
        assert_eq!((m.counters.xi_reads, m.counters.sync_reads_random), (1, 6));
    }
}
