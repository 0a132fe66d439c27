//! Data sharing: the members' local buffer pools (LBP) and one group buffer pool (GBP),
//! following the reference model of DATA-SHARING.md rule by rule, for many GBP settings
//! (data entries x RATIO) in one pass.
//!
//! What makes one pass cheap: a member's LBP contents and LRU order do not depend on the GBP.
//! A steal takes the LRU buffer whether it is valid or not, an invalidation never moves a
//! buffer, and a set-write-intent implies a getpage only when the page is not in the LBP. So
//! the LBPs are kept once (one LRU list per member over a global page table), and each grid
//! point holds only its GBP: per page a directory entry (the registered members R, data held,
//! data changed), one LRU list over directory entries and one over data entries. A member's
//! buffer is valid at a point exactly when the member is registered there (a read registers,
//! a steal or an XI unregisters), so R doubles as the LBP validity bits.
//!
//! "The LRU entry that does not hold changed data" in O(1): changed entries met at the LRU
//! end are parked on a side list (all parked entries are older than every entry left on the
//! main list); a reference moves an entry back to the main list's MRU end, and a castout of
//! every changed page appends the parked list after the main list's LRU end, which keeps the
//! exact LRU order. A castout of one class (CLASST, beyond the reference) puts that class's
//! parked entries at the LRU end in their order (approximate among old changed entries).

use crate::olken::Olken;
use crate::pool::page_hash;
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

pub const NIL: u32 = u32::MAX;
pub const MAX_MEMBERS: usize = 64;

// Counter indices, in the order of poolsight.simulator.group.COUNTERS, then getpages.
pub const LBP_HITS: usize = 0;
pub const SYNC_READS_XI: usize = 1;
pub const XI_DATA_RETURNED: usize = 2;
pub const XI_NO_DATA: usize = 3;
pub const SYNC_READS_NF: usize = 4;
pub const NF_DATA_RETURNED: usize = 5;
pub const NF_NO_DATA: usize = 6;
pub const DISK_SYNC_READS: usize = 7;
pub const DIRECTORY_RECLAIMS: usize = 8;
pub const XI_DUE_TO_RECLAIMS: usize = 9;
pub const XI_DUE_TO_WRITES: usize = 10;
pub const CHANGED_PAGES_WRITTEN: usize = 11;
pub const DATA_ENTRY_RECLAIMS: usize = 12;
pub const WRITES_FAILED_NO_STORAGE: usize = 13;
pub const CASTOUT_PAGES: usize = 14;
pub const GETPAGES: usize = 15;
pub const COUNTERS: usize = 16;

pub const GETPAGE: u8 = 0;
pub const SET_WRITE_INTENT: u8 = 1;
pub const RELEASE: u8 = 2;

/// GBPCACHE of an object.
pub const CACHE_CHANGED: u8 = 0;
pub const CACHE_ALL: u8 = 1;
pub const CACHE_NONE: u8 = 2;

// Entry flags.
const F_DATA: u8 = 1;
const F_CHANGED: u8 = 2;
const F_PARKED: [u8; 2] = [4, 8]; // on the parked list of the directory / data LRU
const DIR: usize = 0;
const DATA: usize = 1;
const MAIN: usize = 0;
const PARKED: usize = 1;

#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
struct Link {
    prev: u32, // towards the most recently used
    next: u32, // towards the least recently used
}

const UNLINKED: Link = Link { prev: NIL, next: NIL };

/// A doubly linked list over links stored elsewhere (intrusive).
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
struct List {
    head: u32, // most recently used
    tail: u32, // least recently used
    len: u64,
}

const EMPTY: List = List {
    head: NIL,
    tail: NIL,
    len: 0,
};

trait Links {
    fn link(&mut self, i: u32) -> &mut Link;
}

impl Links for [Link] {
    #[inline]
    fn link(&mut self, i: u32) -> &mut Link {
        &mut self[i as usize]
    }
}

/// The directory (w = DIR) or data (w = DATA) links of a point's entries.
struct EntryLinks<'a>(&'a mut [Entry], usize);

impl Links for EntryLinks<'_> {
    #[inline]
    fn link(&mut self, i: u32) -> &mut Link {
        &mut self.0[i as usize].links[self.1]
    }
}

impl List {
    #[inline]
    fn push_front<L: Links + ?Sized>(&mut self, l: &mut L, i: u32) {
        let old = self.head;
        *l.link(i) = Link { prev: NIL, next: old };
        if old != NIL {
            l.link(old).prev = i;
        } else {
            self.tail = i;
        }
        self.head = i;
        self.len += 1;
    }

    #[inline]
    fn push_back<L: Links + ?Sized>(&mut self, l: &mut L, i: u32) {
        let old = self.tail;
        *l.link(i) = Link { prev: old, next: NIL };
        if old != NIL {
            l.link(old).next = i;
        } else {
            self.head = i;
        }
        self.tail = i;
        self.len += 1;
    }

    #[inline]
    fn unlink<L: Links + ?Sized>(&mut self, l: &mut L, i: u32) {
        let Link { prev, next } = *l.link(i);
        if prev != NIL {
            l.link(prev).next = next;
        } else {
            self.head = next;
        }
        if next != NIL {
            l.link(next).prev = prev;
        } else {
            self.tail = prev;
        }
        self.len -= 1;
        *l.link(i) = UNLINKED;
    }

    /// `other`'s entries after this list's LRU end, in their order; `other` becomes empty.
    fn append<L: Links + ?Sized>(&mut self, l: &mut L, other: &mut List) {
        if other.head == NIL {
            return;
        }
        if self.tail == NIL {
            *self = *other;
        } else {
            l.link(self.tail).next = other.head;
            l.link(other.head).prev = self.tail;
            self.tail = other.tail;
            self.len += other.len;
        }
        *other = EMPTY;
    }
}

/// A directory entry (with its data entry, if any) at one grid point.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
struct Entry {
    reg: u64, // registered members (= members whose buffer of the page is valid)
    gid: u32,
    links: [Link; 2], // directory LRU, data LRU
    flags: u8,
}

/// One GBP setting's state and counters.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Point {
    pub data_cap: u64,
    pub dir_cap: u64,
    entries: Vec<Entry>,
    free: Vec<u32>,
    dir_used: u64,
    data_used: u64,
    lists: [[List; 2]; 2],             // [DIR | DATA][MAIN | PARKED]
    changed: FxHashMap<u32, Vec<u32>>, // castout class -> changed entries
    changed_total: u64,
    pub counters: Vec<[u64; COUNTERS]>, // per member
}

/// What a point's operations need from the rest of the group.
struct Ctx<'a> {
    slots: &'a mut [u32], // gid * points + k -> entry, NIL when the page has no directory entry
    keys: &'a [(u32, u64)],
    np: usize,
    k: usize,
    m: usize,                     // the member whose event this is
    stale: Option<&'a mut [u64]>, // the LBP curves' invalidation bits (point 0 only)
    freed: &'a mut Vec<u32>,      // pages whose last directory entry went: maybe free now
    gbpoolt: f64,
    classt: Option<f64>,
}

impl Ctx<'_> {
    #[inline]
    fn slot(&self, g: u32) -> u32 {
        self.slots[g as usize * self.np + self.k]
    }

    #[inline]
    fn set_slot(&mut self, g: u32, s: u32) {
        self.slots[g as usize * self.np + self.k] = s;
    }

    #[inline]
    fn class(&self, g: u32) -> u32 {
        if self.classt.is_some() {
            self.keys[g as usize].0
        } else {
            0
        }
    }
}

#[inline]
fn bit(m: usize) -> u64 {
    1u64 << m
}

impl Point {
    pub fn new(data_cap: u64, dir_cap: u64, members: usize) -> Self {
        Point {
            data_cap,
            dir_cap,
            entries: Vec::new(),
            free: Vec::new(),
            dir_used: 0,
            data_used: 0,
            lists: [[EMPTY; 2]; 2],
            changed: FxHashMap::default(),
            changed_total: 0,
            counters: vec![[0; COUNTERS]; members],
        }
    }

    #[inline]
    fn count(&mut self, m: usize, c: usize, n: u64) {
        self.counters[m][c] += n;
    }

    #[inline]
    fn has(&self, s: u32, f: u8) -> bool {
        self.entries[s as usize].flags & f != 0
    }

    /// Entry `s` to the MRU end of the directory (w = DIR) or data (w = DATA) LRU.
    #[inline]
    fn touch(&mut self, s: u32, w: usize) {
        let from = if self.has(s, F_PARKED[w]) { PARKED } else { MAIN };
        self.entries[s as usize].flags &= !F_PARKED[w];
        let mut l = EntryLinks(&mut self.entries, w);
        self.lists[w][from].unlink(&mut l, s);
        self.lists[w][MAIN].push_front(&mut l, s);
    }

    /// The LRU entry of list w that holds no changed data, parking changed ones met on the way.
    #[inline]
    fn victim(&mut self, w: usize) -> Option<u32> {
        loop {
            let t = self.lists[w][MAIN].tail;
            if t == NIL {
                return None;
            }
            if !self.has(t, F_CHANGED) {
                return Some(t);
            }
            self.entries[t as usize].flags |= F_PARKED[w];
            let mut l = EntryLinks(&mut self.entries, w);
            let (main, parked) = self.lists[w].split_at_mut(1);
            main[0].unlink(&mut l, t);
            parked[0].push_front(&mut l, t);
        }
    }

    fn drop_data(&mut self, s: u32) {
        let w = if self.has(s, F_PARKED[DATA]) { PARKED } else { MAIN };
        self.lists[DATA][w].unlink(&mut EntryLinks(&mut self.entries, DATA), s);
        self.entries[s as usize].flags &= !(F_DATA | F_PARKED[DATA]);
        self.data_used -= 1;
    }

    /// Free entry `s` (and its data entry): the page has no directory entry at this point any more.
    fn free_entry(&mut self, s: u32, ctx: &mut Ctx) {
        if self.has(s, F_DATA) {
            self.drop_data(s);
        }
        let w = if self.has(s, F_PARKED[DIR]) { PARKED } else { MAIN };
        self.lists[DIR][w].unlink(&mut EntryLinks(&mut self.entries, DIR), s);
        let g = self.entries[s as usize].gid;
        self.entries[s as usize].flags = 0;
        self.entries[s as usize].reg = 0;
        ctx.set_slot(g, NIL);
        self.free.push(s);
        self.dir_used -= 1;
        ctx.freed.push(g);
    }

    /// Rule 5: a directory entry for page g (which has none), reclaiming the LRU one whose data
    /// is not changed when all are in use. Without one (RATIO < 2, beyond the reference) every
    /// changed page is cast out first; when a write needed it, that write failed.
    fn new_dir(&mut self, g: u32, ctx: &mut Ctx, write: bool) -> u32 {
        while self.dir_used >= self.dir_cap {
            let Some(v) = self.victim(DIR) else {
                if write {
                    self.count(ctx.m, WRITES_FAILED_NO_STORAGE, 1);
                }
                self.castout_all(ctx.m);
                continue;
            };
            self.count(ctx.m, DIRECTORY_RECLAIMS, 1);
            let reg = self.entries[v as usize].reg;
            let mut r = reg;
            while r != 0 {
                let member = r.trailing_zeros() as usize;
                self.count(member, XI_DUE_TO_RECLAIMS, 1);
                r &= r - 1;
            }
            if let Some(stale) = ctx.stale.as_deref_mut() {
                stale[self.entries[v as usize].gid as usize] |= reg;
            }
            self.free_entry(v, ctx);
        }
        let entry = Entry {
            reg: 0,
            gid: g,
            links: [UNLINKED; 2],
            flags: 0,
        };
        let s = match self.free.pop() {
            Some(s) => {
                self.entries[s as usize] = entry;
                s
            }
            None => {
                self.entries.push(entry);
                (self.entries.len() - 1) as u32
            }
        };
        self.lists[DIR][MAIN].push_front(&mut EntryLinks(&mut self.entries, DIR), s);
        self.dir_used += 1;
        ctx.set_slot(g, s);
        s
    }

    /// Rule 6: a data entry for entry `s` (which has none), at the MRU end. When every data
    /// entry holds changed data, a write fails (then all is cast out and the write retried);
    /// a clean page (GBPCACHE ALL) is then not written: returns false.
    fn new_data(&mut self, s: u32, m: usize, write: bool) -> bool {
        while self.data_used >= self.data_cap {
            match self.victim(DATA) {
                Some(v) => {
                    self.count(m, DATA_ENTRY_RECLAIMS, 1);
                    self.drop_data(v);
                }
                None if write => {
                    self.count(m, WRITES_FAILED_NO_STORAGE, 1);
                    self.castout_all(m);
                }
                None => return false,
            }
        }
        self.entries[s as usize].flags |= F_DATA;
        self.lists[DATA][MAIN].push_front(&mut EntryLinks(&mut self.entries, DATA), s);
        self.data_used += 1;
        true
    }

    /// Every changed page cast out (it stays, clean); parked entries rejoin their LRU's old end.
    fn castout_all(&mut self, m: usize) {
        for v in self.changed.values_mut() {
            for &s in v.iter() {
                self.entries[s as usize].flags &= !(F_CHANGED | F_PARKED[DIR] | F_PARKED[DATA]);
            }
            v.clear();
        }
        self.counters[m][CASTOUT_PAGES] += self.changed_total;
        self.changed_total = 0;
        for w in [DIR, DATA] {
            let (main, parked) = self.lists[w].split_at_mut(1);
            main[0].append(&mut EntryLinks(&mut self.entries, w), &mut parked[0]);
        }
    }

    /// The changed pages of one castout class cast out (CLASST).
    fn castout_class(&mut self, class: u32, m: usize) {
        let Some(v) = self.changed.get_mut(&class) else { return };
        let list = std::mem::take(v);
        for &s in &list {
            self.entries[s as usize].flags &= !F_CHANGED;
        }
        self.counters[m][CASTOUT_PAGES] += list.len() as u64;
        self.changed_total -= list.len() as u64;
        for w in [DIR, DATA] {
            let mut i = self.lists[w][PARKED].head;
            while i != NIL {
                let next = self.entries[i as usize].links[w].next;
                if !self.has(i, F_CHANGED) {
                    self.entries[i as usize].flags &= !F_PARKED[w];
                    let mut l = EntryLinks(&mut self.entries, w);
                    let (main, parked) = self.lists[w].split_at_mut(1);
                    parked[0].unlink(&mut l, i);
                    main[0].push_back(&mut l, i);
                }
                i = next;
            }
        }
    }

    /// Rules 1-3 (and GBPCACHE ALL): a getpage by ctx.m of page g, in its LBP (`in_lbp`, the
    /// buffer possibly invalid) or just read into it (the steal already done).
    fn getpage(&mut self, g: u32, in_lbp: bool, cache: u8, ctx: &mut Ctx) {
        let m = ctx.m;
        let mut s = ctx.slot(g);
        self.count(m, GETPAGES, 1);
        if in_lbp && s != NIL && self.entries[s as usize].reg & bit(m) != 0 {
            self.count(m, LBP_HITS, 1);
            return;
        }
        let data = s != NIL && self.has(s, F_DATA);
        let (read, returned, no_data) = if in_lbp {
            (SYNC_READS_XI, XI_DATA_RETURNED, XI_NO_DATA)
        } else {
            (SYNC_READS_NF, NF_DATA_RETURNED, NF_NO_DATA)
        };
        self.count(m, read, 1);
        if data {
            self.count(m, returned, 1);
            self.touch(s, DATA);
        } else {
            self.count(m, no_data, 1);
            self.count(m, DISK_SYNC_READS, 1);
        }
        if s == NIL {
            s = self.new_dir(g, ctx, false);
        }
        self.entries[s as usize].reg |= bit(m);
        self.touch(s, DIR);
        if !data && cache == CACHE_ALL {
            self.new_data(s, m, false);
        }
    }

    /// Rules 4, 6, 7: member ctx.m writes page g (GBPCACHE NONE: directory only, the page goes
    /// to disk; the others are invalidated all the same).
    fn write(&mut self, g: u32, cache: u8, ctx: &mut Ctx) {
        let m = ctx.m;
        let mut s = ctx.slot(g);
        if s == NIL {
            s = self.new_dir(g, ctx, true);
        }
        if cache != CACHE_NONE {
            self.count(m, CHANGED_PAGES_WRITTEN, 1);
            if self.has(s, F_DATA) {
                self.touch(s, DATA);
            } else {
                self.new_data(s, m, true);
            }
            if !self.has(s, F_CHANGED) {
                self.entries[s as usize].flags |= F_CHANGED;
                self.changed_total += 1;
                self.changed.entry(ctx.class(g)).or_default().push(s);
            }
        }
        let mut others = self.entries[s as usize].reg & !bit(m);
        while others != 0 {
            let member = others.trailing_zeros() as usize;
            self.count(member, XI_DUE_TO_WRITES, 1);
            others &= others - 1;
        }
        self.entries[s as usize].reg = bit(m);
        self.touch(s, DIR);
        if cache == CACHE_NONE {
            return;
        }
        let data = self.data_cap as f64;
        if self.changed_total as f64 * 100.0 > ctx.gbpoolt * data {
            self.castout_all(m);
        } else if let Some(classt) = ctx.classt {
            let class = ctx.class(g);
            let n = self.changed.get(&class).map_or(0, |v| v.len());
            if n as f64 * 100.0 > classt * data {
                self.castout_class(class, m);
            }
        }
    }

    /// Rule 3's steal: member m no longer holds page g; its directory entry goes when no member
    /// is registered and it holds no data.
    fn unregister(&mut self, g: u32, ctx: &mut Ctx) {
        let s = ctx.slot(g);
        if s == NIL {
            return;
        }
        let e = &mut self.entries[s as usize];
        e.reg &= !bit(ctx.m);
        if e.reg == 0 && e.flags & F_DATA == 0 {
            self.free_entry(s, ctx);
        }
    }

    /// Every castout (all changed pages) now, attributed to member m (GBP checkpoint).
    fn checkpoint(&mut self, m: usize) {
        self.castout_all(m);
    }

    #[cfg(test)]
    fn check(&self, k: usize, np: usize, slots: &[u32]) {
        let live = self.entries.len() - self.free.len();
        assert_eq!(live as u64, self.dir_used);
        assert!(self.dir_used <= self.dir_cap && self.data_used <= self.data_cap);
        assert_eq!(self.lists[DIR][MAIN].len + self.lists[DIR][PARKED].len, self.dir_used);
        assert_eq!(
            self.lists[DATA][MAIN].len + self.lists[DATA][PARKED].len,
            self.data_used
        );
        let changed: usize = self.changed.values().map(|v| v.len()).sum();
        assert_eq!(changed as u64, self.changed_total);
        for (g, _) in slots.chunks(np).enumerate() {
            let s = slots[g * np + k];
            if s != NIL {
                assert_eq!(self.entries[s as usize].gid as usize, g);
            }
        }
    }
}

/// An object's GBP options and, when inferred, its GBP-dependence.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
struct Object {
    cache: u8,
    never: bool, // not GBP-dependent, ever
    dependent: bool,
    touched: u64, // members that referenced it (inferred dependence)
    updated: bool,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
struct Member {
    lbp_size: u64,     // scaled by the sampling rate
    lbp: List,         // over page-table links gid * members + m
    pending: Vec<u32>, // pages set-write-intent and not yet written (commit delay)
    swis: u64,
    next_commit: f64,
    curve_sizes: Vec<u64>, // scaled, ascending; empty: no curve
    olken: Olken,
    curve: Vec<[u64; 4]>, // per size bucket: valid/data, valid/no data, stale/data, stale/no data
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Config {
    pub members: usize,
    pub lbp_sizes: Vec<u64>,       // unscaled
    pub settings: Vec<(u64, f64)>, // (data entries, ratio), unscaled
    pub gbpoolt: f64,              // % of data entries
    pub sample: f64,
    pub seed: u64,
    pub curve_sizes: Vec<Vec<u64>>,  // per member, unscaled; empty: no curves
    pub commit_every: u64,           // SWIs per commit per member, 0: none
    pub commit_seconds: Option<f64>, // or a commit every so many seconds per member
    pub checkpoint_seconds: Option<f64>,
    pub classt: Option<f64>,
    pub infer_dependence: bool,
}

/// Scaled count for a sampling rate: at least 1.
pub fn scaled(n: u64, rate: f64) -> u64 {
    if rate >= 1.0 {
        n
    } else {
        ((n as f64 * rate).round() as u64).max(1)
    }
}

/// floor(ratio x data entries), robust to binary rounding (2.3 x 10 is 23, not 22).
pub fn directory_entries(data: u64, ratio: f64) -> u64 {
    (ratio * data as f64 + 1e-9).floor() as u64
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Group {
    pub config: Config,
    threshold: u64,
    pages: FxHashMap<(u32, u64), u32>,
    keys: Vec<(u32, u64)>,
    held: Vec<u64>,    // members holding the page in their LBP
    links: Vec<Link>,  // LBP links, gid * members + m
    slots: Vec<u32>,   // gid * points + k -> entry at point k
    stale: Vec<u64>,   // LBP curves: another member wrote (or point 0 reclaimed) since m's last reference
    pending: Vec<u64>, // members with a write of the page pending
    pos: Vec<u32>,     // LBP curves: Olken position, gid * members + m
    free_gids: Vec<u32>,
    members: Vec<Member>,
    pub points: Vec<Point>,
    objects: Vec<Object>,
    next_checkpoint: f64,
    curves: bool,
    freed: Vec<u32>,
}

impl Group {
    pub fn new(config: Config) -> Result<Self, String> {
        let nm = config.members;
        if nm == 0 || nm > MAX_MEMBERS {
            return Err(format!("{nm} members: a group has 1 to {MAX_MEMBERS}"));
        }
        if config.lbp_sizes.len() != nm || config.lbp_sizes.contains(&0) {
            return Err("one LBP size > 0 per member".into());
        }
        if config.settings.is_empty() {
            return Err("no GBP setting".into());
        }
        if !(config.sample > 0.0 && config.sample <= 1.0) {
            return Err(format!("sample {}: must be in (0, 1]", config.sample));
        }
        for &(d, r) in &config.settings {
            if d == 0 {
                return Err("data entries must be > 0".into());
            }
            if r.is_nan() || r < 1.0 {
                return Err(format!("ratio {r}: must be >= 1"));
            }
        }
        if !config.curve_sizes.is_empty() && config.curve_sizes.len() != nm {
            return Err("LBP curve sizes: one list per member".into());
        }
        let rate = config.sample;
        let threshold = if rate >= 1.0 {
            u64::MAX
        } else {
            (rate * 18_446_744_073_709_551_616.0) as u64
        };
        let points = config
            .settings
            .iter()
            .map(|&(d, r)| {
                let d = scaled(d, rate);
                Point::new(d, directory_entries(d, r), nm)
            })
            .collect();
        let curves = config.curve_sizes.iter().any(|v| !v.is_empty());
        let members = (0..nm)
            .map(|m| {
                let mut sizes: Vec<u64> = config
                    .curve_sizes
                    .get(m)
                    .map(|v| v.iter().map(|&s| scaled(s, rate)).collect())
                    .unwrap_or_default();
                sizes.sort_unstable();
                sizes.dedup();
                let k = sizes.len();
                Member {
                    lbp_size: scaled(config.lbp_sizes[m], rate),
                    lbp: EMPTY,
                    pending: Vec::new(),
                    swis: 0,
                    next_commit: f64::NAN,
                    curve_sizes: sizes,
                    olken: Olken::default(),
                    curve: if k > 0 { vec![[0; 4]; k + 1] } else { Vec::new() },
                }
            })
            .collect();
        Ok(Group {
            config,
            threshold,
            pages: FxHashMap::default(),
            keys: Vec::new(),
            held: Vec::new(),
            links: Vec::new(),
            slots: Vec::new(),
            stale: Vec::new(),
            pending: Vec::new(),
            pos: Vec::new(),
            free_gids: Vec::new(),
            members,
            points,
            objects: Vec::new(),
            next_checkpoint: f64::NAN,
            curves,
            freed: Vec::new(),
        })
    }

    /// The sampling rate: a page is simulated when its hash falls under it.
    pub fn rate(&self) -> f64 {
        self.config.sample
    }

    pub fn lbp_sizes(&self) -> Vec<u64> {
        self.members.iter().map(|m| m.lbp_size).collect()
    }

    /// Scaled curve sizes and, per size bucket, (valid/data, valid/no data, stale/data, stale/no data).
    pub fn curve(&self, m: usize) -> (&[u64], &[[u64; 4]]) {
        (&self.members[m].curve_sizes, &self.members[m].curve)
    }

    /// Pages in the page table now.
    pub fn tracked_pages(&self) -> usize {
        self.pages.len()
    }

    fn object(&mut self, obj: u32) -> &mut Object {
        let i = obj as usize;
        if i >= self.objects.len() {
            let dependent = !self.config.infer_dependence;
            self.objects.resize(
                i + 1,
                Object {
                    cache: CACHE_CHANGED,
                    never: false,
                    dependent,
                    touched: 0,
                    updated: false,
                },
            );
        }
        &mut self.objects[i]
    }

    /// GBPCACHE of an object and whether it is never GBP-dependent (before its first event).
    pub fn set_object(&mut self, obj: u32, cache: u8, never_dependent: bool) {
        let o = self.object(obj);
        o.cache = cache;
        o.never = never_dependent;
        if never_dependent {
            o.dependent = false;
        }
    }

    fn gid(&mut self, obj: u32, page: u64) -> u32 {
        if let Some(&g) = self.pages.get(&(obj, page)) {
            return g;
        }
        let (nm, np) = (self.config.members, self.points.len());
        let g = match self.free_gids.pop() {
            Some(g) => {
                self.keys[g as usize] = (obj, page);
                g
            }
            None => {
                let g = self.keys.len() as u32;
                self.keys.push((obj, page));
                self.held.push(0);
                self.links.extend(std::iter::repeat_n(UNLINKED, nm));
                self.slots.extend(std::iter::repeat_n(NIL, np));
                self.pending.push(0);
                if self.curves {
                    self.stale.push(0);
                    self.pos.extend(std::iter::repeat_n(NIL, nm));
                }
                g
            }
        };
        self.pages.insert((obj, page), g);
        g
    }

    /// Without LBP curves, a page nobody holds and no point has a directory entry for is forgotten.
    fn release_freed(&mut self) {
        if self.curves {
            self.freed.clear();
            return;
        }
        let np = self.points.len();
        while let Some(g) = self.freed.pop() {
            let gi = g as usize;
            if self.held[gi] == 0
                && self.pending[gi] == 0
                && self.slots[gi * np..(gi + 1) * np].iter().all(|&s| s == NIL)
                && self.pages.remove(&self.keys[gi]).is_some()
            {
                self.free_gids.push(g);
            }
        }
    }

    /// Per point, with the group's shared parts borrowed: f(point, ctx).
    fn each_point(&mut self, m: usize, mut f: impl FnMut(&mut Point, &mut Ctx)) {
        let np = self.points.len();
        let (gbpoolt, classt) = (self.config.gbpoolt, self.config.classt);
        let curves = self.curves;
        for (k, p) in self.points.iter_mut().enumerate() {
            let mut ctx = Ctx {
                slots: &mut self.slots,
                keys: &self.keys,
                np,
                k,
                m,
                stale: if k == 0 && curves { Some(&mut self.stale) } else { None },
                freed: &mut self.freed,
                gbpoolt,
                classt,
            };
            f(p, &mut ctx);
        }
    }

    /// Member m writes page g to the GBP at every point.
    fn write_all(&mut self, m: usize, g: u32) {
        let cache = self.objects[self.keys[g as usize].0 as usize].cache;
        self.each_point(m, |p, ctx| p.write(g, cache, ctx));
        if self.curves {
            let all = if self.config.members == 64 {
                u64::MAX
            } else {
                bit(self.config.members) - 1
            };
            self.stale[g as usize] = all & !bit(m);
        }
    }

    /// Member m's pending writes, in the order of their set-write-intents.
    fn commit(&mut self, m: usize) {
        let pending = std::mem::take(&mut self.members[m].pending);
        for &g in &pending {
            if self.pending[g as usize] & bit(m) != 0 {
                self.pending[g as usize] &= !bit(m);
                self.write_all(m, g);
            }
        }
        let mut pending = pending;
        pending.clear();
        self.members[m].pending = pending;
    }

    /// Page g referenced in member m's LBP: to MRU, or in at MRU after stealing the LRU buffer.
    /// Returns whether it was there.
    fn lbp_reference(&mut self, m: usize, g: u32) -> bool {
        let nm = self.config.members;
        let idx = g * nm as u32 + m as u32;
        if self.held[g as usize] & bit(m) != 0 {
            let lbp = &mut self.members[m].lbp;
            lbp.unlink(&mut self.links[..], idx);
            lbp.push_front(&mut self.links[..], idx);
            return true;
        }
        if self.members[m].lbp.len >= self.members[m].lbp_size {
            let vi = self.members[m].lbp.tail;
            let v = vi / nm as u32;
            if self.pending[v as usize] & bit(m) != 0 {
                // A changed page is written to the GBP before its buffer is stolen.
                self.pending[v as usize] &= !bit(m);
                self.write_all(m, v);
            }
            self.members[m].lbp.unlink(&mut self.links[..], vi);
            self.held[v as usize] &= !bit(m);
            self.each_point(m, |p, ctx| p.unregister(v, ctx));
            self.freed.push(v);
        }
        self.members[m].lbp.push_front(&mut self.links[..], idx);
        self.held[g as usize] |= bit(m);
        false
    }

    /// The member's LRU stack distance of g (its references only), for its LBP curve.
    fn curve_reference(&mut self, m: usize, g: u32, dependent: bool) {
        let nm = self.config.members;
        if self.members[m].curve_sizes.is_empty() {
            return;
        }
        if self.members[m].olken.is_full() {
            // Renumber the member's live pages in stack order: each one's rank among the marks.
            {
                let rank = self.members[m].olken.ranks();
                for h in 0..self.keys.len() {
                    let p = &mut self.pos[h * nm + m];
                    if *p != NIL {
                        *p = rank(*p);
                    }
                }
            }
            self.members[m].olken.compacted();
        }
        let mem = &mut self.members[m];
        let at = g as usize * nm + m;
        let p = self.pos[at];
        let d = if p != NIL {
            let d = mem.olken.distance(p);
            mem.olken.unmark(p);
            Some(d)
        } else {
            None
        };
        self.pos[at] = mem.olken.mark_next();
        let b = match d {
            Some(d) => mem.curve_sizes.partition_point(|&s| s <= d),
            None => mem.curve_sizes.len(),
        };
        // A page of an object that is not GBP-dependent is the member's own: a hit within the
        // size, else a disk read (never invalid, never in the GBP). The curve is the whole LBP's.
        let s0 = self.slots[g as usize * self.points.len()];
        let data = dependent && s0 != NIL && self.points[0].has(s0, F_DATA);
        let stale = dependent && self.stale[g as usize] & bit(m) != 0;
        mem.curve[b][usize::from(stale) * 2 + usize::from(!data)] += 1;
    }

    fn clock(&mut self, m: usize, t: f64) {
        if let Some(every) = self.config.checkpoint_seconds {
            if self.next_checkpoint.is_nan() {
                self.next_checkpoint = ((t / every).floor() + 1.0) * every;
            } else if t >= self.next_checkpoint {
                self.each_point(m, |p, _| p.checkpoint(m));
                self.next_checkpoint = ((t / every).floor() + 1.0) * every;
            }
        }
        if let Some(every) = self.config.commit_seconds {
            let next = self.members[m].next_commit;
            if next.is_nan() {
                self.members[m].next_commit = ((t / every).floor() + 1.0) * every;
            } else if t >= next {
                self.commit(m);
                self.members[m].next_commit = ((t / every).floor() + 1.0) * every;
            }
        }
    }

    /// One event of member m, in global order: function 0 getpage, 1 set write intent,
    /// 2 release (ignored). `t`: event time in seconds (used by the timed options only).
    pub fn event(&mut self, m: usize, obj: u32, page: u64, function: u8, t: f64) {
        if function == RELEASE {
            return;
        }
        self.clock(m, t);
        if self.threshold != u64::MAX && page_hash((obj, page), self.config.seed) >= self.threshold {
            return;
        }
        let o = self.object(obj);
        if !o.dependent && !o.never {
            o.touched |= bit(m);
            o.updated |= function == SET_WRITE_INTENT;
            o.dependent = o.touched.count_ones() >= 2 && o.updated;
        }
        let (dependent, cache) = (o.dependent, o.cache);
        let g = self.gid(obj, page);
        let in_lbp = self.held[g as usize] & bit(m) != 0;
        if function == GETPAGE || !in_lbp {
            self.lbp_reference(m, g);
            if self.curves {
                self.curve_reference(m, g, dependent);
            }
            if dependent {
                self.each_point(m, |p, ctx| p.getpage(g, in_lbp, cache, ctx));
            }
            if self.curves {
                self.stale[g as usize] &= !bit(m);
            }
        }
        if function == SET_WRITE_INTENT && dependent {
            if self.config.commit_every > 0 || self.config.commit_seconds.is_some() {
                if self.pending[g as usize] & bit(m) == 0 {
                    self.pending[g as usize] |= bit(m);
                    self.members[m].pending.push(g);
                }
                self.members[m].swis += 1;
                let every = self.config.commit_every;
                if every > 0 && self.members[m].swis.is_multiple_of(every) {
                    self.commit(m);
                }
            } else {
                self.write_all(m, g);
            }
        }
        self.release_freed();
    }

    /// Warm the cache for a coming event (the feed loop calls this a few events ahead): stage 0
    /// loads the page's row of entry slots, stage 1 (nearer) the entries it points to (their LRU
    /// neighbours, tried too, did not pay). Only a hint: the page table may change before the
    /// event comes.
    #[inline]
    pub fn prefetch(&self, obj: u32, page: u64, stage: u8) {
        let Some(&g) = self.pages.get(&(obj, page)) else { return };
        let np = self.points.len();
        let row = &self.slots[g as usize * np..(g as usize + 1) * np];
        if stage == 0 {
            if let Some(first) = row.first() {
                crate::prefetch::line(first);
            }
            return;
        }
        for (p, &s) in self.points.iter().zip(row) {
            if let Some(e) = p.entries.get(s as usize).filter(|_| s != NIL) {
                crate::prefetch::line(e);
            }
        }
    }

    #[cfg(test)]
    fn check(&self) {
        let np = self.points.len();
        for (k, p) in self.points.iter().enumerate() {
            p.check(k, np, &self.slots);
        }
        for (m, mem) in self.members.iter().enumerate() {
            assert!(mem.lbp.len <= mem.lbp_size);
            let held = self.held.iter().filter(|h| **h & bit(m) != 0).count() as u64;
            assert_eq!(held, mem.lbp.len);
        }
        // Valid buffers are registered ones: a registered member holds the page.
        for (k, p) in self.points.iter().enumerate() {
            for (g, _) in self.keys.iter().enumerate() {
                let s = self.slots[g * np + k];
                if s != NIL {
                    let reg = p.entries[s as usize].reg;
                    assert_eq!(reg & !self.held[g], 0, "point {k} page {g}: registered but not held");
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{naive_distances, naive_lru_hits, Rng};

    fn config(members: usize, lbp: u64, settings: &[(u64, f64)]) -> Config {
        Config {
            members,
            lbp_sizes: vec![lbp; members],
            settings: settings.to_vec(),
            gbpoolt: 30.0,
            sample: 1.0,
            seed: 0,
            curve_sizes: Vec::new(),
            commit_every: 0,
            commit_seconds: None,
            checkpoint_seconds: None,
            classt: None,
            infer_dependence: false,
        }
    }

    fn run(c: Config, events: &[(usize, u64, u8)]) -> Group {
        let mut g = Group::new(c).unwrap();
        for (i, &(m, p, f)) in events.iter().enumerate() {
            g.event(m, 0, p, f, i as f64);
            g.check();
        }
        g
    }

    fn ctr(g: &Group, k: usize, m: usize) -> [u64; COUNTERS] {
        g.points[k].counters[m]
    }

    fn total(g: &Group, k: usize) -> [u64; COUNTERS] {
        let mut t = [0; COUNTERS];
        for c in &g.points[k].counters {
            for i in 0..COUNTERS {
                t[i] += c[i];
            }
        }
        t
    }

    /// [lbp_hits, xi, xi_data, xi_no_data, nf, nf_data, nf_no_data, disk, dir reclaims,
    /// xi reclaims, xi writes, written, data reclaims, failed, castout, getpages]
    fn expect(g: &Group, k: usize, want: [u64; COUNTERS]) {
        assert_eq!(total(g, k), want, "point {k}");
    }

    const GP: u8 = 0;
    const SWI: u8 = 1;

    #[test]
    fn one_member_is_plain_lru() {
        let mut rng = Rng(3);
        let refs: Vec<u64> = (0..5000).map(|_| rng.skewed(400)).collect();
        let d = naive_distances(&refs);
        for size in [1u64, 7, 50, 200] {
            let mut c = config(1, size, &[(4, 2.0), (1000, 5.0)]);
            c.curve_sizes = vec![vec![1, 7, 50, 200]];
            // Every 5th getpage is followed by an update of its page (as in a trace).
            let events: Vec<(usize, u64, u8)> = refs
                .iter()
                .enumerate()
                .flat_map(|(i, &p)| std::iter::once((0, p, GP)).chain((i % 5 == 0).then_some((0, p, SWI))))
                .collect();
            let g = run(c, &events);
            let hits = naive_lru_hits(&d, size);
            // A directory bigger than the footprint: no reclaim, so no XI at all.
            let c = ctr(&g, 1, 0);
            assert_eq!(c[LBP_HITS], hits, "size {size}");
            assert_eq!(c[SYNC_READS_XI] + c[DIRECTORY_RECLAIMS], 0);
            assert_eq!((c[GETPAGES], c[LBP_HITS] + c[SYNC_READS_NF]), (5000, 5000));
            // 8 directory entries: reclaims invalidate the member's own buffers, the LBP is the same.
            let c = ctr(&g, 0, 0);
            assert_eq!(c[LBP_HITS] + c[SYNC_READS_XI], hits, "size {size}");
            if size == 200 {
                assert!(c[XI_DUE_TO_RECLAIMS] > 0);
            }
        }
    }

    #[test]
    fn a_write_invalidates_the_other_member_and_it_refreshes_from_the_gbp() {
        // m0 reads 1, m1 reads 1, m0 writes 1 (XI m1), m1 reads 1 (XI, data returned).
        let g = run(
            config(2, 4, &[(4, 5.0)]),
            &[(0, 1, GP), (1, 1, GP), (0, 1, SWI), (1, 1, GP)],
        );
        // One changed page of 4 data entries: 25 % is not above GBPOOLT 30 %, no castout.
        assert_eq!(ctr(&g, 0, 0), [0, 0, 0, 0, 1, 0, 1, 1, 0, 0, 0, 1, 0, 0, 0, 1]);
        assert_eq!(ctr(&g, 0, 1), [0, 1, 1, 0, 1, 0, 1, 1, 0, 0, 1, 0, 0, 0, 0, 2]);
    }

    #[test]
    fn castout_by_gbpoolt() {
        // 10 data entries, GBPOOLT 30 %: the 4th changed page (40 % > 30 %) casts out all 4.
        let mut ev = Vec::new();
        for p in 0..4 {
            ev.push((0, p, SWI));
        }
        let g = run(config(1, 10, &[(10, 5.0)]), &ev);
        // 4 implied getpages (NF, disk), 4 writes, castout 4.
        expect(&g, 0, [0, 0, 0, 0, 4, 0, 4, 4, 0, 0, 0, 4, 0, 0, 4, 4]);
        assert_eq!(g.points[0].changed_total, 0);
        assert_eq!(g.points[0].data_used, 4);
    }

    #[test]
    fn a_directory_reclaim_invalidates_the_registered_members() {
        // 1 data entry, RATIO 2: 2 directory entries. m0 and m1 read 1; m0 reads 2; m1 reads 3:
        // the directory is full (1, 2) -> reclaim LRU 1 (no data), XI m0 and m1.
        // Then m0 reads 1: XI read (buffer invalid), no data: disk.
        let g = run(
            config(2, 8, &[(1, 2.0)]),
            &[(0, 1, GP), (1, 1, GP), (0, 2, GP), (1, 3, GP), (0, 1, GP)],
        );
        // m0's read of 1 needs an entry again: the LRU is now 2 (m0's): a second reclaim and
        // a second XI of m0.
        assert_eq!(ctr(&g, 0, 0), [0, 1, 0, 1, 2, 0, 2, 3, 1, 2, 0, 0, 0, 0, 0, 3]);
        assert_eq!(ctr(&g, 0, 1), [0, 0, 0, 0, 2, 0, 2, 2, 1, 1, 0, 0, 0, 0, 0, 2]);
    }

    #[test]
    fn a_data_entry_reclaim_keeps_the_directory_entry() {
        // 1 data entry, RATIO 5, GBPOOLT 0 %: every write is cast out at once (its data clean).
        let mut c = config(2, 8, &[(1, 5.0)]);
        c.gbpoolt = 0.0;
        let g = run(c, &[(0, 1, SWI), (0, 2, SWI), (1, 1, GP), (1, 2, GP)]);
        // m0: 2 implied NF getpages (disk), 2 writes, each cast out at once; the second write
        // reclaims 1's clean data entry (its directory entry stays).
        assert_eq!(ctr(&g, 0, 0), [0, 0, 0, 0, 2, 0, 2, 2, 0, 0, 0, 2, 1, 0, 2, 2]);
        // m1: 1 has no data any more (disk), 2 has (GBP).
        assert_eq!(ctr(&g, 0, 1), [0, 0, 0, 0, 2, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 2]);
    }

    #[test]
    fn a_write_fails_when_every_data_entry_is_changed() {
        // 2 data entries, GBPOOLT 100 %: the third changed page finds both changed: a failed
        // write, castout of 2, the retried write reclaims the LRU (now clean) data entry.
        let mut c = config(1, 8, &[(2, 5.0)]);
        c.gbpoolt = 100.0;
        let g = run(c, &[(0, 1, SWI), (0, 2, SWI), (0, 3, SWI)]);
        expect(&g, 0, [0, 0, 0, 0, 3, 0, 3, 3, 0, 0, 0, 3, 1, 1, 2, 3]);
        assert_eq!(g.points[0].changed_total, 1);
    }

    #[test]
    fn a_steal_frees_a_directory_entry_without_data() {
        // LBP of 1: reading 2 steals 1, whose entry (no data, nobody registered) goes.
        let g = run(config(1, 1, &[(1, 2.0)]), &[(0, 1, GP), (0, 2, GP), (0, 3, GP)]);
        expect(&g, 0, [0, 0, 0, 0, 3, 0, 3, 3, 0, 0, 0, 0, 0, 0, 0, 3]);
        assert_eq!(g.points[0].dir_used, 1);
        assert_eq!(g.tracked_pages(), 1);
    }

    #[test]
    fn invariants_hold_and_a_bigger_gbp_reclaims_and_fails_less() {
        let mut rng = Rng(11);
        let events: Vec<(usize, u64, u8)> = (0..20_000)
            .map(|_| {
                let m = rng.below(3) as usize;
                let p = rng.skewed(3000);
                (m, p, if rng.below(4) == 0 { SWI } else { GP })
            })
            .collect();
        let settings: Vec<(u64, f64)> = [20u64, 50, 100, 200, 400, 800, 4000]
            .iter()
            .flat_map(|&d| [(d, 2.0), (d, 5.0)])
            .collect();
        let mut c = config(3, 150, &settings);
        c.gbpoolt = 100.0;
        let g = run(c, &events);
        let mut last: Option<[u64; COUNTERS]> = None;
        for k in (0..settings.len()).step_by(2) {
            for m in 0..3 {
                let c = ctr(&g, k, m);
                assert_eq!(c[GETPAGES], c[LBP_HITS] + c[SYNC_READS_XI] + c[SYNC_READS_NF]);
                assert_eq!(c[DISK_SYNC_READS], c[XI_NO_DATA] + c[NF_NO_DATA]);
                assert_eq!(c[SYNC_READS_XI], c[XI_DATA_RETURNED] + c[XI_NO_DATA]);
                assert_eq!(c[SYNC_READS_NF], c[NF_DATA_RETURNED] + c[NF_NO_DATA]);
            }
            let t = total(&g, k);
            if let Some(l) = last {
                assert!(t[DIRECTORY_RECLAIMS] <= l[DIRECTORY_RECLAIMS], "point {k}");
                assert!(t[WRITES_FAILED_NO_STORAGE] <= l[WRITES_FAILED_NO_STORAGE], "point {k}");
            }
            last = Some(t);
        }
        let first = total(&g, 0);
        assert!(first[DIRECTORY_RECLAIMS] > 0 && first[WRITES_FAILED_NO_STORAGE] > 0);
        // A GBP bigger than the footprint: no reclaim, no failure.
        let big = total(&g, settings.len() - 1);
        assert_eq!(
            big[DIRECTORY_RECLAIMS] + big[WRITES_FAILED_NO_STORAGE] + big[DATA_ENTRY_RECLAIMS],
            0
        );
        // The LBPs are the same at every point: hits + XI reads equal.
        let a = total(&g, 0);
        assert_eq!(a[LBP_HITS] + a[SYNC_READS_XI], big[LBP_HITS] + big[SYNC_READS_XI]);
    }

    #[test]
    fn the_lbp_curve_is_exact_at_the_current_size_for_point_0() {
        let mut rng = Rng(5);
        let events: Vec<(usize, u64, u8)> = (0..30_000)
            .map(|_| {
                let m = rng.below(2) as usize;
                (m, rng.skewed(2500), if rng.below(5) == 0 { SWI } else { GP })
            })
            .collect();
        let mut c = config(2, 120, &[(60, 2.0), (600, 5.0)]);
        c.lbp_sizes = vec![120, 300];
        c.curve_sizes = vec![vec![30, 120, 500], vec![300, 40]];
        let mut g = Group::new(c).unwrap();
        for (i, &(m, p, f)) in events.iter().enumerate() {
            g.event(m, (p % 3) as u32, p, f, i as f64);
        }
        for (m, size) in [(0usize, 120u64), (1, 300)] {
            let (sizes, curve) = g.curve(m);
            let i = sizes.iter().position(|&s| s == size).unwrap();
            let below = |cat: usize| curve[..=i].iter().map(|r| r[cat]).sum::<u64>();
            let above = |cat: usize| curve[i + 1..].iter().map(|r| r[cat]).sum::<u64>();
            let c = ctr(&g, 0, m);
            assert_eq!(below(0) + below(1), c[LBP_HITS]);
            assert_eq!(below(2), c[XI_DATA_RETURNED]);
            assert_eq!(below(3), c[XI_NO_DATA]);
            assert_eq!(above(0) + above(2), c[NF_DATA_RETURNED]);
            assert_eq!(above(1) + above(3), c[NF_NO_DATA]);
            assert!(c[SYNC_READS_XI] > 0 && c[DIRECTORY_RECLAIMS] + ctr(&g, 0, 1 - m)[DIRECTORY_RECLAIMS] > 0);
        }
    }

    #[test]
    fn a_snapshot_continues_bit_identically() {
        let mut rng = Rng(9);
        let events: Vec<(usize, u64, u8)> = (0..8000)
            .map(|_| (rng.below(2) as usize, rng.skewed(900), (rng.below(3) == 0) as u8))
            .collect();
        let mut c = config(2, 60, &[(20, 2.0), (100, 3.5)]);
        c.curve_sizes = vec![vec![10, 60], vec![60]];
        let mut a = Group::new(c.clone()).unwrap();
        let mut b = Group::new(c).unwrap();
        for (i, &(m, p, f)) in events.iter().enumerate() {
            a.event(m, 0, p, f, i as f64);
            if i < 4000 {
                b.event(m, 0, p, f, i as f64);
            }
        }
        let mut b: Group = bincode::deserialize(&bincode::serialize(&b).unwrap()).unwrap();
        for (i, &(m, p, f)) in events.iter().enumerate().skip(4000) {
            b.event(m, 0, p, f, i as f64);
        }
        for k in 0..2 {
            assert_eq!(a.points[k].counters, b.points[k].counters);
        }
        assert_eq!(a.curve(0).1, b.curve(0).1);
    }

    #[test]
    fn options_commit_delay_gbpcache_none_and_all_inferred_dependence() {
        // Commit every 2nd SWI: m0's first SWI on 1 is pending (m1 keeps a valid buffer).
        let mut c = config(2, 8, &[(10, 5.0)]);
        c.commit_every = 2;
        let g = run(c, &[(1, 1, GP), (0, 1, SWI), (1, 1, GP), (0, 2, SWI), (1, 1, GP)]);
        // m1: NF, hit, then after the commit (2 writes) an XI read from the GBP.
        assert_eq!(ctr(&g, 0, 1)[LBP_HITS], 1);
        assert_eq!(ctr(&g, 0, 1)[XI_DATA_RETURNED], 1);
        assert_eq!(ctr(&g, 0, 0)[CHANGED_PAGES_WRITTEN], 2);

        // GBPCACHE NONE: the write invalidates m1, no data is written; m1 reads from disk.
        let mut g = Group::new(config(2, 8, &[(10, 5.0)])).unwrap();
        g.set_object(0, CACHE_NONE, false);
        for (i, &(m, p, f)) in [(1, 1, GP), (0, 1, SWI), (1, 1, GP)].iter().enumerate() {
            g.event(m, 0, p, f, i as f64);
        }
        assert_eq!(ctr(&g, 0, 1)[XI_NO_DATA], 1);
        assert_eq!(ctr(&g, 0, 0)[CHANGED_PAGES_WRITTEN], 0);
        assert_eq!(ctr(&g, 0, 1)[XI_DUE_TO_WRITES], 1);

        // GBPCACHE ALL: m0's disk read is written clean; m1 then finds it in the GBP.
        let mut g = Group::new(config(2, 8, &[(10, 5.0)])).unwrap();
        g.set_object(0, CACHE_ALL, false);
        g.event(0, 0, 1, GP, 0.0);
        g.event(1, 0, 1, GP, 1.0);
        assert_eq!(ctr(&g, 0, 1)[NF_DATA_RETURNED], 1);

        // Inferred dependence: only m0 reads and writes 1 (not dependent: nothing counted);
        // m1 reads it: now dependent, its read counts; m0's buffer (cached before) is refreshed.
        let mut c = config(2, 8, &[(10, 5.0)]);
        c.infer_dependence = true;
        let g = run(c, &[(0, 1, GP), (0, 1, SWI), (1, 1, GP), (0, 1, GP)]);
        assert_eq!(ctr(&g, 0, 0)[GETPAGES], 1);
        assert_eq!(ctr(&g, 0, 0)[SYNC_READS_XI], 1);
        assert_eq!(ctr(&g, 0, 1)[SYNC_READS_NF], 1);
    }

    #[test]
    fn checkpoint_and_class_castout() {
        // Checkpoint every 10 s: the changed page written at t=1 is cast out at t=12.
        let mut c = config(1, 8, &[(10, 5.0)]);
        c.checkpoint_seconds = Some(10.0);
        let mut g = Group::new(c).unwrap();
        g.event(0, 0, 1, SWI, 1.0);
        assert_eq!(g.points[0].changed_total, 1);
        g.event(0, 0, 2, GP, 12.0);
        assert_eq!(ctr(&g, 0, 0)[CASTOUT_PAGES], 1);
        // CLASST 10 % of 20 entries: the third changed page of one object casts out its class only.
        let mut c = config(1, 20, &[(20, 5.0)]);
        c.classt = Some(10.0);
        c.gbpoolt = 100.0;
        let mut g = Group::new(c).unwrap();
        g.event(0, 7, 1, SWI, 0.0);
        g.event(0, 7, 2, SWI, 0.0);
        g.event(0, 8, 1, SWI, 0.0);
        g.event(0, 7, 3, SWI, 0.0);
        g.check();
        assert_eq!(ctr(&g, 0, 0)[CASTOUT_PAGES], 3);
        assert_eq!(g.points[0].changed_total, 1);
    }

    #[test]
    fn sampling_keeps_the_pages_under_the_rate() {
        let mut c = config(2, 100, &[(100, 5.0)]);
        c.sample = 0.25;
        let mut g = Group::new(c).unwrap();
        let mut rng = Rng(2);
        for i in 0..20_000 {
            g.event(rng.below(2) as usize, 0, rng.below(5000), 0, i as f64);
        }
        let n = total(&g, 0)[GETPAGES];
        assert!((4000..6000).contains(&n), "{n} sampled getpages of 20000 at rate 0.25");
        assert_eq!(g.points[0].data_cap, 25);
        assert_eq!(g.lbp_sizes(), vec![25, 25]);
    }
}
