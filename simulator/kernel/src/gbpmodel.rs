//! A data-sharing group's pool, buffer by buffer: the members' local pools (`PoolModel`) and
//! the group buffer pool (GBP) they share, fed all members' events in one global time order.
//! The workload generator runs it as the ground truth the product's group simulation is
//! checked against, so it is written from the reference model of DATA-SHARING.md (and IBM's
//! Db2 for z/OS data-sharing documentation), not from that simulation.
//!
//! The GBP holds directory entries (per page: the members registered for it, whether it holds
//! data and whether that data is changed) and data entries. One recency order runs over the
//! entries; whenever a page's data entry moves, its directory entry moves too, so the order of
//! the data entries is that order restricted to the entries holding data. Three intrusive lists
//! keep it: entries without changed data (a directory reclaim takes the least recently used),
//! entries with clean data (a data entry reclaim takes the least recently used) and entries with
//! changed data; a castout merges cast-out entries back by their last reference.
//!
//! Options beyond the reference (all off by default): a commit delay (changed pages written to
//! the GBP every N updates of the member or T seconds after its first uncommitted one; a page
//! another member updates meanwhile is written first, as P-lock negotiation forces), the class
//! castout threshold (CLASST, one castout class per object), GBP checkpoints every T seconds
//! (every changed page cast out), and page-list prefetch for sequential and RID-list getpages.

use crate::bpmodel::{Key, PoolModel};
use rustc_hash::{FxHashMap, FxHashSet};
use std::collections::VecDeque;

const NIL: u32 = u32::MAX;

/// Outcome of each event (`GroupModel::access`).
pub const LBP_HIT: u8 = 0;
/// Cross-invalidated buffer refreshed from the GBP (sync read XI, data returned).
pub const XI_FROM_GBP: u8 = 1;
/// Cross-invalidated buffer read from disk (sync read XI, no data).
pub const XI_FROM_DISK: u8 = 2;
/// Page not in the local pool, returned by the GBP (sync read NF, data returned).
pub const NF_FROM_GBP: u8 = 3;
/// Page not in the local pool, read from disk (sync read NF, no data; or a sync read of an
/// object that is not GBP-dependent).
pub const NF_FROM_DISK: u8 = 4;
/// A sequential or RID-list getpage whose page a prefetch brought in (no sync read).
pub const PREFETCH: u8 = 5;
/// Not a getpage (set write intent, release).
pub const NOT_A_GETPAGE: u8 = 6;

/// GBP counters of one member or of the whole group, named as in the gbp_stats schema.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub struct GbpCounters {
    pub gbp_dependent_getpages: u64,
    pub xi_reads_data_returned: u64,
    pub xi_reads_no_data: u64,
    pub nf_reads_data_returned: u64,
    pub nf_reads_no_data: u64,
    pub reads_data_returned: u64,
    pub reads_no_data_dir_existed: u64,
    pub reads_no_data_dir_created: u64,
    pub reads_no_data_dir_not_created: u64,
    pub changed_pages_written: u64,
    pub clean_pages_written: u64,
    pub write_failed_no_storage: u64,
    pub directory_reclaims: u64,
    pub data_entry_reclaims: u64,
    pub castouts: u64,
    pub castout_pages: u64,
    pub castout_class_threshold: u64,
    pub castout_gbp_threshold: u64,
    pub gbp_checkpoints: u64,
    pub xi_due_to_reclaims: u64,
    pub xi_due_to_writes: u64,
    pub xi_explicit: u64,
    pub prefetch_pages_from_gbp: u64,
    pub prefetch_pages_from_disk: u64,
    pub commits: u64,
}

impl GbpCounters {
    pub fn pairs(&self) -> [(&'static str, u64); 25] {
        [
            ("gbp_dependent_getpages", self.gbp_dependent_getpages),
            ("xi_reads_data_returned", self.xi_reads_data_returned),
            ("xi_reads_no_data", self.xi_reads_no_data),
            ("nf_reads_data_returned", self.nf_reads_data_returned),
            ("nf_reads_no_data", self.nf_reads_no_data),
            ("reads_data_returned", self.reads_data_returned),
            ("reads_no_data_dir_existed", self.reads_no_data_dir_existed),
            ("reads_no_data_dir_created", self.reads_no_data_dir_created),
            ("reads_no_data_dir_not_created", self.reads_no_data_dir_not_created),
            ("changed_pages_written", self.changed_pages_written),
            ("clean_pages_written", self.clean_pages_written),
            ("write_failed_no_storage", self.write_failed_no_storage),
            ("directory_reclaims", self.directory_reclaims),
            ("data_entry_reclaims", self.data_entry_reclaims),
            ("castouts", self.castouts),
            ("castout_pages", self.castout_pages),
            ("castout_class_threshold", self.castout_class_threshold),
            ("castout_gbp_threshold", self.castout_gbp_threshold),
            ("gbp_checkpoints", self.gbp_checkpoints),
            ("xi_due_to_reclaims", self.xi_due_to_reclaims),
            ("xi_due_to_writes", self.xi_due_to_writes),
            ("xi_explicit", self.xi_explicit),
            ("prefetch_pages_from_gbp", self.prefetch_pages_from_gbp),
            ("prefetch_pages_from_disk", self.prefetch_pages_from_disk),
            ("commits", self.commits),
        ]
    }
}

/// The GBP's settings.
#[derive(Clone, Copy, Debug)]
pub struct GbpConfig {
    pub data_entries: usize,
    /// RATIO: directory entries per data entry.
    pub ratio: f64,
    /// GBPOOLT: castout when changed pages exceed this % of the data entries.
    pub gbpoolt: f64,
    /// CLASST: castout of an object's changed pages when they exceed this % of the data entries.
    pub classt: Option<f64>,
    /// GBP checkpoint interval in seconds of event time (0: none).
    pub checkpoint_seconds: f64,
    /// Changed pages written at the member's commit, every N updates of the member (0: at once).
    pub commit_every: u64,
    /// ... or T seconds after its first uncommitted update (0: not by time).
    pub commit_seconds: f64,
    /// Sequential and RID-list getpages of GBP-dependent objects read by prefetch registering the
    /// page list (else each is a getpage of the reference model, read synchronously).
    pub page_list_prefetch: bool,
}

impl GbpConfig {
    pub fn reference(data_entries: usize, ratio: f64) -> Self {
        GbpConfig {
            data_entries,
            ratio,
            gbpoolt: 30.0,
            classt: None,
            checkpoint_seconds: 0.0,
            commit_every: 0,
            commit_seconds: 0.0,
            page_list_prefetch: false,
        }
    }
}

/// Directory entries for `data_entries` at `ratio` (at least one).
pub fn directory_entries(data_entries: usize, ratio: f64) -> usize {
    ((data_entries as f64 * ratio).floor() as usize).max(1)
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum State {
    NoData,
    Clean,
    Changed,
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    key: Key,
    regs: u64,
    state: State,
    tick: u64,
}

/// A doubly linked list over entry slots; most recently used at the head.
#[derive(Default)]
struct List {
    head: u32,
    tail: u32,
    links: Vec<[u32; 2]>, // [towards the head, towards the tail]
}

impl List {
    fn new() -> Self {
        List {
            head: NIL,
            tail: NIL,
            links: Vec::new(),
        }
    }

    fn grow(&mut self, n: usize) {
        if self.links.len() < n {
            self.links.resize(n, [NIL, NIL]);
        }
    }

    fn push_head(&mut self, i: u32) {
        let old = self.head;
        self.links[i as usize] = [NIL, old];
        if old != NIL {
            self.links[old as usize][0] = i;
        } else {
            self.tail = i;
        }
        self.head = i;
    }

    /// Put `i` just headward of `at` (at NIL: at the tail).
    fn insert_before(&mut self, at: u32, i: u32) {
        let prev = if at == NIL {
            self.tail
        } else {
            self.links[at as usize][0]
        };
        self.links[i as usize] = [prev, at];
        if prev != NIL {
            self.links[prev as usize][1] = i;
        } else {
            self.head = i;
        }
        if at != NIL {
            self.links[at as usize][0] = i;
        } else {
            self.tail = i;
        }
    }

    fn unlink(&mut self, i: u32) {
        let [prev, next] = self.links[i as usize];
        if prev != NIL {
            self.links[prev as usize][1] = next;
        } else {
            self.head = next;
        }
        if next != NIL {
            self.links[next as usize][0] = prev;
        } else {
            self.tail = prev;
        }
    }

    fn prev(&self, i: u32) -> u32 {
        self.links[i as usize][0]
    }

    fn next(&self, i: u32) -> u32 {
        self.links[i as usize][1]
    }
}

struct Gbp {
    entries: Vec<Entry>,
    free: Vec<u32>,
    map: FxHashMap<Key, u32>,
    unchanged: List,
    clean: List,
    changed: List,
    dir_cap: usize,
    data_cap: usize,
    data_used: usize,
    n_changed: usize,
    tick: u64,
}

impl Gbp {
    fn new(data_cap: usize, dir_cap: usize) -> Self {
        Gbp {
            entries: Vec::new(),
            free: Vec::new(),
            map: FxHashMap::default(),
            unchanged: List::new(),
            clean: List::new(),
            changed: List::new(),
            dir_cap,
            data_cap,
            data_used: 0,
            n_changed: 0,
            tick: 0,
        }
    }

    fn create(&mut self, key: Key) -> u32 {
        self.tick += 1;
        let e = Entry {
            key,
            regs: 0,
            state: State::NoData,
            tick: self.tick,
        };
        let i = match self.free.pop() {
            Some(i) => {
                self.entries[i as usize] = e;
                i
            }
            None => {
                self.entries.push(e);
                let n = self.entries.len();
                self.unchanged.grow(n);
                self.clean.grow(n);
                self.changed.grow(n);
                (n - 1) as u32
            }
        };
        self.unchanged.push_head(i);
        self.map.insert(key, i);
        i
    }

    /// The entry (and its data entry, if any) most recently used.
    fn touch(&mut self, i: u32) {
        self.tick += 1;
        let e = &mut self.entries[i as usize];
        e.tick = self.tick;
        match e.state {
            State::Changed => {
                self.changed.unlink(i);
                self.changed.push_head(i);
            }
            State::Clean => {
                self.unchanged.unlink(i);
                self.unchanged.push_head(i);
                self.clean.unlink(i);
                self.clean.push_head(i);
            }
            State::NoData => {
                self.unchanged.unlink(i);
                self.unchanged.push_head(i);
            }
        }
    }

    /// Free a directory entry (and its data entry); never one holding changed data.
    fn free_entry(&mut self, i: u32) {
        let e = self.entries[i as usize];
        debug_assert!(e.state != State::Changed);
        self.unchanged.unlink(i);
        if e.state == State::Clean {
            self.clean.unlink(i);
            self.data_used -= 1;
        }
        self.map.remove(&e.key);
        self.free.push(i);
    }

    /// Free the clean data entry of `i`; its directory entry stays where it is.
    fn drop_data(&mut self, i: u32) {
        debug_assert!(self.entries[i as usize].state == State::Clean);
        self.clean.unlink(i);
        self.entries[i as usize].state = State::NoData;
        self.data_used -= 1;
    }

    /// The entry's data becomes changed (a data entry is free when it had none).
    fn set_changed(&mut self, i: u32) {
        match self.entries[i as usize].state {
            State::Changed => return,
            State::Clean => self.clean.unlink(i),
            State::NoData => self.data_used += 1,
        }
        self.unchanged.unlink(i);
        self.entries[i as usize].state = State::Changed;
        self.changed.push_head(i);
        self.n_changed += 1;
    }

    /// Changed entries (of `obj` only, when given) become clean, keeping their place in the
    /// recency order; returns them, least recently used first.
    fn clean_changed(&mut self, obj: Option<u32>) -> Vec<u32> {
        let mut out = Vec::new();
        let mut i = self.changed.tail;
        while i != NIL {
            let prev = self.changed.prev(i);
            if obj.is_none_or(|o| self.entries[i as usize].key.0 == o) {
                out.push(i);
            }
            i = prev;
        }
        for &i in &out {
            self.changed.unlink(i);
            self.entries[i as usize].state = State::Clean;
        }
        self.n_changed -= out.len();
        Self::merge(&mut self.unchanged, &self.entries, &out);
        Self::merge(&mut self.clean, &self.entries, &out);
        out
    }

    /// Insert `items` (ascending by tick) into `list` (descending by tick from its head). From the
    /// head: changed pages are recent, so the walk passes only what was used since the oldest.
    fn merge(list: &mut List, entries: &[Entry], items: &[u32]) {
        let mut at = list.head;
        for &x in items.iter().rev() {
            let t = entries[x as usize].tick;
            while at != NIL && entries[at as usize].tick > t {
                at = list.next(at);
            }
            list.insert_before(at, x);
        }
    }
}

/// A member's updates not yet written to the GBP (commit delay).
#[derive(Default)]
struct Pending {
    order: VecDeque<Key>,
    set: FxHashSet<Key>,
    updates: u64,
    since: f64,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Cause {
    Reclaim,
    Write,
}

macro_rules! count {
    ($s:expr, $m:expr, $f:ident) => {
        count!($s, $m, $f, 1)
    };
    ($s:expr, $m:expr, $f:ident, $n:expr) => {{
        let n = $n;
        $s.members[$m].$f += n;
        $s.group.$f += n;
    }};
}

/// The members' local pools of one pool name and their group buffer pool.
pub struct GroupModel {
    pub lbps: Vec<PoolModel>,
    gbp: Gbp,
    cfg: GbpConfig,
    dependent: Vec<bool>,
    pending: Vec<Pending>,
    next_checkpoint: Option<f64>,
    changed_by_obj: FxHashMap<u32, usize>,
    /// The castout owner of each object: the first member that wrote one of its changed pages.
    owner: FxHashMap<u32, usize>,
    pub members: Vec<GbpCounters>,
    pub group: GbpCounters,
}

/// The member credited with what no member's request caused (an alter, a checkpoint): the
/// structure owner.
const STRUCTURE_OWNER: usize = 0;

impl GroupModel {
    /// One local pool per member (VPSIZE each, the same thresholds) and the GBP of `cfg`.
    /// At most 64 members.
    pub fn new(vpsizes: &[usize], vpseqt: f64, prefetch: u32, dwqt: f64, vdwqt: f64, cfg: GbpConfig) -> Self {
        assert!(!vpsizes.is_empty() && vpsizes.len() <= 64, "1 to 64 members");
        let lbps = vpsizes
            .iter()
            .map(|&v| {
                let mut p = PoolModel::new(v, vpseqt, prefetch, dwqt, vdwqt);
                p.track_steals = true;
                p
            })
            .collect();
        let data = cfg.data_entries.max(1);
        GroupModel {
            lbps,
            gbp: Gbp::new(data, directory_entries(data, cfg.ratio)),
            cfg,
            dependent: Vec::new(),
            pending: vpsizes.iter().map(|_| Pending::default()).collect(),
            next_checkpoint: None,
            changed_by_obj: FxHashMap::default(),
            owner: FxHashMap::default(),
            members: vec![GbpCounters::default(); vpsizes.len()],
            group: GbpCounters::default(),
        }
    }

    pub fn set_dependent(&mut self, obj: u32, dependent: bool) {
        let i = obj as usize;
        if self.dependent.len() <= i {
            self.dependent.resize(i + 1, false);
        }
        self.dependent[i] = dependent;
    }

    fn is_dependent(&self, obj: u32) -> bool {
        self.dependent.get(obj as usize).copied().unwrap_or(false)
    }

    /// (directory entries, data entries, RATIO, changed pages now).
    pub fn structure(&self) -> (usize, usize, f64, usize) {
        (self.gbp.dir_cap, self.gbp.data_cap, self.cfg.ratio, self.gbp.n_changed)
    }

    /// (directory entries in use, data entries in use).
    pub fn used(&self) -> (usize, usize) {
        (self.gbp.map.len(), self.gbp.data_used)
    }

    /// One event of member m, the next in the global time order (`feed` orders a batch).
    pub fn access(&mut self, t: f64, m: usize, obj: u32, page: u64, access: u8, function: u8) -> u8 {
        self.clock(t);
        if !self.is_dependent(obj) {
            let hit = self.lbps[m].access(t, obj, page, access, function);
            self.drain(m);
            return if function != 0 {
                NOT_A_GETPAGE
            } else if hit {
                LBP_HIT
            } else if access == 0 {
                NF_FROM_DISK
            } else {
                PREFETCH
            };
        }
        let key = (obj, page);
        match function {
            0 => self.getpage(t, m, key, access, false),
            1 => {
                self.update(t, m, key);
                NOT_A_GETPAGE
            }
            _ => NOT_A_GETPAGE,
        }
    }

    /// Events in the order of (time, member), ties in the given order; outcomes in the given order.
    pub fn feed(&mut self, ev: &[(f64, usize, u32, u64, u8, u8)]) -> Vec<u8> {
        let mut out = vec![0u8; ev.len()];
        let sorted = ev.windows(2).all(|w| (w[0].0, w[0].1) <= (w[1].0, w[1].1));
        if sorted {
            for (o, &(t, m, ob, pg, ac, fu)) in out.iter_mut().zip(ev) {
                *o = self.access(t, m, ob, pg, ac, fu);
            }
        } else {
            let mut idx: Vec<usize> = (0..ev.len()).collect();
            idx.sort_by(|&a, &b| ev[a].0.total_cmp(&ev[b].0).then(ev[a].1.cmp(&ev[b].1)));
            for i in idx {
                let (t, m, ob, pg, ac, fu) = ev[i];
                out[i] = self.access(t, m, ob, pg, ac, fu);
            }
        }
        out
    }

    /// Timed work due by `t`: GBP checkpoints, commits by time.
    fn clock(&mut self, t: f64) {
        let every = self.cfg.checkpoint_seconds;
        if every > 0.0 {
            let mut next = *self.next_checkpoint.get_or_insert(t + every);
            while t >= next {
                count!(self, STRUCTURE_OWNER, gbp_checkpoints);
                self.castout(None);
                next += every;
            }
            self.next_checkpoint = Some(next);
        }
        if self.cfg.commit_seconds > 0.0 {
            for r in 0..self.lbps.len() {
                if !self.pending[r].set.is_empty() && t >= self.pending[r].since + self.cfg.commit_seconds {
                    self.commit(r);
                }
            }
        }
    }

    /// A getpage of a GBP-dependent page (rules 1-3). `implied`: the page an update needs, not
    /// a getpage of the trace (counted in the GBP's getpages, not the local pool's).
    fn getpage(&mut self, t: f64, m: usize, key: Key, access: u8, implied: bool) -> u8 {
        let chain = u8::from(access == 1);
        if !implied {
            self.lbps[m].count_getpage(access);
        }
        count!(self, m, gbp_dependent_getpages);
        let found = self.lbps[m].find(key);
        if let Some((slot, true)) = found {
            self.lbps[m].touch_slot(slot, chain);
            return LBP_HIT;
        }
        if self.cfg.page_list_prefetch && access != 0 && !implied {
            return self.prefetch(t, m, key, access);
        }
        match found {
            Some((slot, _)) => {
                let (from_gbp, entry) = self.read(t, m, key, access, true);
                self.lbps[m].revalidate(slot);
                self.lbps[m].touch_slot(slot, chain);
                self.register_at(m, key, entry);
                if from_gbp {
                    XI_FROM_GBP
                } else {
                    XI_FROM_DISK
                }
            }
            None => {
                self.lbps[m].make_room(t);
                self.drain(m);
                let (from_gbp, entry) = self.read(t, m, key, access, false);
                self.lbps[m].insert_new(key, chain);
                self.register_at(m, key, entry);
                if from_gbp {
                    NF_FROM_GBP
                } else {
                    NF_FROM_DISK
                }
            }
        }
    }

    /// A sync read of `key` for member m: from the GBP when it holds the page's data (true),
    /// else from disk; and the page's directory entry. (The data entry a read returns moves to
    /// the most recently used place with the registration that follows.)
    fn read(&mut self, t: f64, m: usize, key: Key, access: u8, xi: bool) -> (bool, Option<u32>) {
        let entry = self.gbp.map.get(&key).copied();
        if entry.is_some_and(|i| self.gbp.entries[i as usize].state != State::NoData) {
            if xi {
                count!(self, m, xi_reads_data_returned);
            } else {
                count!(self, m, nf_reads_data_returned);
            }
            count!(self, m, reads_data_returned);
            return (true, entry);
        }
        if xi {
            count!(self, m, xi_reads_no_data);
        } else {
            count!(self, m, nf_reads_no_data);
        }
        if entry.is_some() {
            count!(self, m, reads_no_data_dir_existed);
        } else {
            count!(self, m, reads_no_data_dir_created);
        }
        self.lbps[m].sync_read(t, key, access);
        (false, entry)
    }

    /// Sequential or RID-list getpage of a page not valid in the pool, with page-list prefetch:
    /// the pages not valid in the pool are registered; those the GBP holds come from it, the
    /// rest in one prefetch read from disk.
    fn prefetch(&mut self, t: f64, m: usize, key: Key, access: u8) -> u8 {
        let chain = u8::from(access == 1);
        let quantity = if access == 1 {
            self.lbps[m].prefetch_quantity()
        } else {
            1
        };
        let mut disk = 0u32;
        for page in key.1..key.1 + quantity as u64 {
            let k = (key.0, page);
            let found = self.lbps[m].find(k);
            if let Some((_, true)) = found {
                continue;
            }
            if found.is_none() {
                self.lbps[m].make_room(t);
                self.drain(m);
            }
            match self.gbp.map.get(&k).copied() {
                Some(i) if self.gbp.entries[i as usize].state != State::NoData => {
                    count!(self, m, prefetch_pages_from_gbp);
                    self.gbp.touch(i);
                }
                _ => {
                    count!(self, m, prefetch_pages_from_disk);
                    disk += 1;
                }
            }
            match found {
                Some((slot, _)) => {
                    self.lbps[m].revalidate(slot);
                    self.lbps[m].touch_slot(slot, chain);
                }
                None => self.lbps[m].insert_new(k, chain),
            }
            self.register(m, k);
        }
        self.lbps[m].prefetch_read(t, key, access, disk);
        PREFETCH
    }

    /// Set write intent by m on a GBP-dependent page (rule 4, or its commit delay).
    fn update(&mut self, t: f64, m: usize, key: Key) {
        self.lbps[m].count_update();
        let delayed = self.cfg.commit_every > 0 || self.cfg.commit_seconds > 0.0;
        if delayed {
            // P-lock negotiation: another member's uncommitted change of the page goes first.
            for r in 0..self.lbps.len() {
                if r != m && self.pending[r].set.remove(&key) {
                    self.write_changed(r, key);
                }
            }
        }
        if !matches!(self.lbps[m].find(key), Some((_, true))) {
            self.getpage(t, m, key, 0, true);
        }
        if !delayed {
            self.write_changed(m, key);
            return;
        }
        let p = &mut self.pending[m];
        if p.set.is_empty() {
            p.since = t;
        }
        if p.set.insert(key) {
            p.order.push_back(key);
        }
        p.updates += 1;
        if self.cfg.commit_every > 0 && p.updates >= self.cfg.commit_every {
            self.commit(m);
        }
    }

    fn commit(&mut self, m: usize) {
        let order = std::mem::take(&mut self.pending[m].order);
        for key in order {
            if self.pending[m].set.remove(&key) {
                self.write_changed(m, key);
            }
        }
        self.pending[m].updates = 0;
        count!(self, m, commits);
    }

    /// Rule 4: m writes the changed page to the GBP; the other registered members are
    /// cross-invalidated; then the castout thresholds (rule 7).
    fn write_changed(&mut self, m: usize, key: Key) {
        count!(self, m, changed_pages_written);
        let i = self.entry(key, m);
        let state = self.gbp.entries[i as usize].state;
        if state == State::NoData && self.gbp.data_used >= self.gbp.data_cap {
            self.reclaim_data(m);
        }
        if state != State::Changed {
            self.gbp.set_changed(i);
            *self.changed_by_obj.entry(key.0).or_insert(0) += 1;
            self.owner.entry(key.0).or_insert(m);
        }
        let others = self.gbp.entries[i as usize].regs & !(1u64 << m);
        for r in bits(others) {
            self.invalidate(r, key, Cause::Write);
        }
        self.gbp.entries[i as usize].regs = 1u64 << m;
        self.gbp.touch(i);
        let data = self.gbp.data_cap as f64;
        if let Some(classt) = self.cfg.classt {
            let n = self.changed_by_obj.get(&key.0).copied().unwrap_or(0);
            if n as f64 > classt / 100.0 * data {
                count!(self, m, castout_class_threshold);
                self.castout(Some(key.0));
            }
        }
        if self.gbp.n_changed as f64 > self.cfg.gbpoolt / 100.0 * data {
            count!(self, m, castout_gbp_threshold);
            self.castout(None);
        }
    }

    /// The page's directory entry, created (rule 5: reclaiming one if none is free) when it has none.
    fn entry(&mut self, key: Key, requester: usize) -> u32 {
        if let Some(&i) = self.gbp.map.get(&key) {
            return i;
        }
        while self.gbp.map.len() >= self.gbp.dir_cap {
            self.reclaim_directory(requester);
        }
        self.gbp.create(key)
    }

    /// m registered for the page, its directory entry most recently used.
    fn register(&mut self, m: usize, key: Key) {
        let entry = self.gbp.map.get(&key).copied();
        self.register_at(m, key, entry);
    }

    /// `register` for a page whose directory entry (if any) is known.
    fn register_at(&mut self, m: usize, key: Key, entry: Option<u32>) {
        let i = match entry {
            Some(i) => i,
            None => self.entry(key, m),
        };
        self.gbp.entries[i as usize].regs |= 1u64 << m;
        self.gbp.touch(i);
    }

    /// m no longer holds the page; an entry with no member and no data is freed.
    fn unregister(&mut self, m: usize, key: Key) {
        if let Some(&i) = self.gbp.map.get(&key) {
            let e = &mut self.gbp.entries[i as usize];
            e.regs &= !(1u64 << m);
            if e.regs == 0 && e.state == State::NoData {
                self.gbp.free_entry(i);
            }
        }
    }

    /// Rule 5: the least recently used entry without changed data is reclaimed, its members
    /// cross-invalidated.
    fn reclaim_directory(&mut self, requester: usize) {
        if self.gbp.unchanged.tail == NIL {
            // Every entry holds changed data (RATIO <= 1): cast out to make one reclaimable.
            self.castout(None);
        }
        let i = self.gbp.unchanged.tail;
        count!(self, requester, directory_reclaims);
        let e = self.gbp.entries[i as usize];
        for r in bits(e.regs) {
            self.invalidate(r, e.key, Cause::Reclaim);
        }
        self.gbp.free_entry(i);
    }

    /// Rule 6: the least recently used clean data entry is freed; with none (all changed) the
    /// write fails for lack of storage, every changed page is cast out, and it is retried.
    fn reclaim_data(&mut self, requester: usize) {
        if self.gbp.clean.tail == NIL {
            count!(self, requester, write_failed_no_storage);
            self.castout(None);
        }
        count!(self, requester, data_entry_reclaims);
        let i = self.gbp.clean.tail;
        self.gbp.drop_data(i);
    }

    /// Member r's copy of the page is invalid (its buffer stays in place) and r is no longer
    /// registered. A page r changed and has not yet written (commit delay) keeps its buffer
    /// valid: it holds the newest version, which r writes at commit.
    fn invalidate(&mut self, r: usize, key: Key, cause: Cause) {
        match cause {
            Cause::Reclaim => count!(self, r, xi_due_to_reclaims),
            Cause::Write => count!(self, r, xi_due_to_writes),
        }
        if self.pending[r].set.is_empty() || !self.pending[r].set.contains(&key) {
            self.lbps[r].cross_invalidate(key);
        }
    }

    /// Cast out the changed pages (of `obj` only, when given): written to disk by their
    /// object's castout owner, they stay in the GBP, clean.
    fn castout(&mut self, obj: Option<u32>) {
        let pages = self.gbp.clean_changed(obj);
        if pages.is_empty() {
            return;
        }
        self.group.castouts += 1;
        self.group.castout_pages += pages.len() as u64;
        let mut by_owner = vec![0u64; self.members.len()];
        for &i in &pages {
            let o = self.gbp.entries[i as usize].key.0;
            if let Some(n) = self.changed_by_obj.get_mut(&o) {
                *n -= 1;
            }
            by_owner[self.owner.get(&o).copied().unwrap_or(STRUCTURE_OWNER)] += 1;
        }
        for (m, n) in by_owner.into_iter().enumerate() {
            if n > 0 {
                self.members[m].castouts += 1;
                self.members[m].castout_pages += n;
            }
        }
    }

    /// Pages member m's pool stole since the last call: unregistered (a stolen page with an
    /// uncommitted change is written to the GBP first).
    fn drain(&mut self, m: usize) {
        if self.lbps[m].stolen.is_empty() {
            return;
        }
        let stolen = std::mem::take(&mut self.lbps[m].stolen);
        for &key in &stolen {
            if !self.is_dependent(key.0) {
                continue;
            }
            if !self.pending[m].set.is_empty() && self.pending[m].set.remove(&key) {
                self.write_changed(m, key);
            }
            self.unregister(m, key);
        }
        let mut back = stolen;
        back.clear();
        self.lbps[m].stolen = back;
    }

    /// A new structure (the CF structure resized or rebuilt with another RATIO): what no longer
    /// fits is reclaimed, directory entries first (changed pages are cast out when they must go).
    pub fn alter(&mut self, data_entries: usize, ratio: f64) {
        let data = data_entries.max(1);
        self.cfg.data_entries = data;
        self.cfg.ratio = ratio;
        self.gbp.data_cap = data;
        self.gbp.dir_cap = directory_entries(data, ratio);
        while self.gbp.map.len() > self.gbp.dir_cap {
            self.reclaim_directory(STRUCTURE_OWNER);
        }
        while self.gbp.data_used > self.gbp.data_cap {
            if self.gbp.clean.tail == NIL {
                self.castout(None);
            }
            count!(self, STRUCTURE_OWNER, data_entry_reclaims);
            let i = self.gbp.clean.tail;
            self.gbp.drop_data(i);
        }
    }

    /// -ALTER BUFFERPOOL on member m: its pool resized (stolen pages unregistered).
    pub fn alter_member(&mut self, m: usize, t: f64, vpsize: usize, vpseqt: f64) {
        self.lbps[m].alter(t, vpsize, vpseqt);
        self.drain(m);
    }
}

fn bits(mut x: u64) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        if x == 0 {
            return None;
        }
        let b = x.trailing_zeros() as usize;
        x &= x - 1;
        Some(b)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::Rng;

    const A: usize = 0;
    const B: usize = 1;
    const C: usize = 2;

    fn group(members: usize, vpsize: usize, cfg: GbpConfig) -> GroupModel {
        let mut g = GroupModel::new(&vec![vpsize; members], 100.0, 4, 90.0, 90.0, cfg);
        for o in 0..4 {
            g.set_dependent(o, true);
        }
        g
    }

    fn gp(g: &mut GroupModel, m: usize, page: u64) -> u8 {
        g.access(0.0, m, 1, page, 0, 0)
    }

    fn swi(g: &mut GroupModel, m: usize, page: u64) {
        assert_eq!(g.access(0.0, m, 1, page, 0, 1), NOT_A_GETPAGE);
    }

    #[test]
    fn a_page_another_member_changed_is_refreshed_from_the_gbp() {
        let mut g = group(2, 10, GbpConfig::reference(10, 5.0));
        assert_eq!(gp(&mut g, A, 7), NF_FROM_DISK); // directory entry created
        assert_eq!(gp(&mut g, B, 7), NF_FROM_DISK); // entry existed (A), no data
        swi(&mut g, B, 7); // written to the GBP: A's copy cross-invalidated
        assert_eq!(gp(&mut g, A, 7), XI_FROM_GBP);
        assert_eq!(gp(&mut g, B, 7), LBP_HIT); // the writer's buffer stays valid
        assert_eq!(gp(&mut g, A, 7), LBP_HIT);
        let (a, b, grp) = (g.members[A], g.members[B], g.group);
        assert_eq!(
            (
                a.gbp_dependent_getpages,
                a.nf_reads_no_data,
                a.xi_reads_data_returned,
                a.xi_due_to_writes
            ),
            (3, 1, 1, 1)
        );
        assert_eq!(
            (b.gbp_dependent_getpages, b.nf_reads_no_data, b.changed_pages_written),
            (2, 1, 1)
        );
        assert_eq!(
            (
                grp.reads_no_data_dir_created,
                grp.reads_no_data_dir_existed,
                grp.reads_data_returned
            ),
            (1, 1, 1)
        );
        assert_eq!(g.lbps[A].counters.sync_reads_random, 1); // the refresh read no disk
        assert_eq!(g.lbps[A].reads.len(), 1);
        assert_eq!(g.lbps[B].counters.buffer_updates, 1);
        assert_eq!(g.lbps[B].counters.pages_written, 0); // the GBP took the change, not the disk
        assert_eq!(g.structure(), (50, 10, 5.0, 1));
    }

    #[test]
    fn events_are_processed_in_time_order_across_members() {
        // Given member by member (as the old generator fed them), processed by time:
        // A reads p at 1, B updates p at 2, A reads p at 3 -> an XI refresh from the GBP.
        let ev = vec![
            (1.0, A, 1u32, 5u64, 0u8, 0u8),
            (3.0, A, 1, 5, 0, 0),
            (1.5, B, 1, 5, 0, 0),
            (2.0, B, 1, 5, 0, 1),
        ];
        let mut g = group(2, 10, GbpConfig::reference(10, 5.0));
        assert_eq!(
            g.feed(&ev),
            vec![NF_FROM_DISK, XI_FROM_GBP, NF_FROM_DISK, NOT_A_GETPAGE]
        );
        // Ties: by member, then in the given order.
        let ev = vec![
            (1.0, B, 1u32, 5u64, 0u8, 1u8),
            (1.0, A, 1, 5, 0, 0),
            (0.5, B, 1, 5, 0, 0),
        ];
        let mut g = group(2, 10, GbpConfig::reference(10, 5.0));
        assert_eq!(g.feed(&ev), vec![NOT_A_GETPAGE, NF_FROM_DISK, NF_FROM_DISK]);
        // At 1.0 A (member 0) reads before B updates: B's write invalidates A's copy.
        assert_eq!(g.members[A].xi_due_to_writes, 1);
        assert_eq!(g.members[B].changed_pages_written, 1);
        assert_eq!(g.lbps[A].find((1, 5)).map(|x| x.1), Some(false));
    }

    #[test]
    fn directory_reclaims_invalidate_the_registered_members_by_hand() {
        // 1 data entry, RATIO 2: 2 directory entries. LBPs hold 10 pages.
        let mut g = group(2, 10, GbpConfig::reference(1, 2.0));
        assert_eq!(gp(&mut g, A, 1), NF_FROM_DISK); // dir {1:A}
        assert_eq!(gp(&mut g, B, 1), NF_FROM_DISK); // dir {1:AB}
        assert_eq!(gp(&mut g, A, 2), NF_FROM_DISK); // dir {2:A, 1:AB}
        assert_eq!(gp(&mut g, A, 3), NF_FROM_DISK); // reclaims 1 (LRU): A and B invalidated
        assert_eq!(g.group.directory_reclaims, 1);
        assert_eq!(
            (g.members[A].xi_due_to_reclaims, g.members[B].xi_due_to_reclaims),
            (1, 1)
        );
        assert_eq!(g.members[A].directory_reclaims, 1); // the requester's
        assert_eq!(gp(&mut g, B, 1), XI_FROM_DISK); // no entry: read from disk, reclaims 2 (A)
        assert_eq!(g.group.directory_reclaims, 2);
        assert_eq!(g.group.reads_no_data_dir_created, 4); // A 1, A 2, A 3, B 1
        assert_eq!(g.group.reads_no_data_dir_existed, 1); // B 1 at first
        assert_eq!(gp(&mut g, A, 2), XI_FROM_DISK); // reclaims 3 (A): dir {2:A, 1:B}
        assert_eq!(gp(&mut g, A, 3), XI_FROM_DISK); // reclaims 1 (B): dir {3:A, 2:A}
        assert_eq!(gp(&mut g, B, 1), XI_FROM_DISK); // reclaims 2 (A): dir {1:B, 3:A}
        let (a, b) = (g.members[A], g.members[B]);
        assert_eq!((a.xi_due_to_reclaims, b.xi_due_to_reclaims), (4, 2));
        assert_eq!(g.group.xi_due_to_reclaims, 6);
        assert_eq!(g.group.directory_reclaims, 5);
        assert_eq!((a.xi_reads_no_data, b.xi_reads_no_data), (2, 2));
        assert_eq!(g.used(), (2, 0));
    }

    #[test]
    fn full_of_changed_data_a_write_fails_everything_is_cast_out_and_a_clean_entry_reclaimed() {
        // 2 data entries, RATIO 4 (8 directory entries), GBPOOLT 100: no threshold castout.
        let mut cfg = GbpConfig::reference(2, 4.0);
        cfg.gbpoolt = 100.0;
        let mut g = group(2, 10, cfg);
        for p in 1..=3 {
            gp(&mut g, A, p);
            swi(&mut g, A, p);
        }
        // Third write: data full of changed pages -> failed, castout of 1 and 2, retried by
        // reclaiming the LRU clean data entry (page 1).
        let grp = g.group;
        assert_eq!((grp.changed_pages_written, grp.write_failed_no_storage), (3, 1));
        assert_eq!((grp.castouts, grp.castout_pages, grp.data_entry_reclaims), (1, 2, 1));
        assert_eq!((g.members[A].castouts, g.members[A].castout_pages), (1, 2)); // A owns object 1
        assert_eq!(g.structure().3, 1);
        assert_eq!(gp(&mut g, B, 1), NF_FROM_DISK); // 1 lost its data entry
        assert_eq!(gp(&mut g, B, 2), NF_FROM_GBP); // 2 is there, clean
        assert_eq!(gp(&mut g, B, 3), NF_FROM_GBP); // 3 is there, changed
        assert_eq!(g.used(), (3, 2));
        // A writes 1 again: needs a data entry, the LRU clean one is 2 (3 is changed).
        swi(&mut g, A, 1);
        assert_eq!(g.group.data_entry_reclaims, 2);
        assert_eq!(g.group.write_failed_no_storage, 1);
        assert_eq!(g.members[B].xi_due_to_writes, 1); // B held 1
        assert_eq!(gp(&mut g, B, 2), LBP_HIT); // B's copy of 2 is valid: a data reclaim is no XI
        assert_eq!(g.structure().3, 2);
    }

    #[test]
    fn changed_pages_past_gbpoolt_are_all_cast_out() {
        // 10 data entries, GBPOOLT 30 %: the 4th changed page passes 3.
        let mut g = group(2, 20, GbpConfig::reference(10, 5.0));
        for p in 1..=4 {
            gp(&mut g, B, p);
            swi(&mut g, B, p);
            let want = if p < 4 { p as usize } else { 0 };
            assert_eq!(g.structure().3, want, "after page {p}");
        }
        let grp = g.group;
        assert_eq!((grp.castout_gbp_threshold, grp.castouts, grp.castout_pages), (1, 1, 4));
        assert_eq!(g.members[B].castout_gbp_threshold, 1);
        for p in 1..=4 {
            assert_eq!(gp(&mut g, A, p), NF_FROM_GBP); // cast out pages stay, clean
        }
    }

    #[test]
    fn class_threshold_casts_out_one_object_and_checkpoints_everything() {
        let mut cfg = GbpConfig::reference(20, 5.0);
        cfg.classt = Some(10.0); // an object's changed pages past 2
        cfg.checkpoint_seconds = 60.0;
        let mut g = group(2, 20, cfg);
        let at = |g: &mut GroupModel, t: f64, obj: u32, page: u64| {
            g.access(t, A, obj, page, 0, 0);
            g.access(t, A, obj, page, 0, 1);
        };
        at(&mut g, 1.0, 1, 1);
        at(&mut g, 2.0, 1, 2);
        at(&mut g, 3.0, 2, 1);
        at(&mut g, 4.0, 2, 2);
        assert_eq!(g.structure().3, 4);
        at(&mut g, 5.0, 1, 3); // object 1: 3 changed > 2 -> its class cast out
        assert_eq!((g.group.castout_class_threshold, g.group.castout_pages), (1, 3));
        assert_eq!(g.structure().3, 2);
        g.access(61.0, B, 3, 9, 0, 0); // the first checkpoint is due at 1 + 60
        assert_eq!(
            (g.group.gbp_checkpoints, g.group.castouts, g.group.castout_pages),
            (1, 2, 5)
        );
        assert_eq!(g.members[A].gbp_checkpoints, 1); // the structure owner's
        assert_eq!(g.structure().3, 0);
    }

    #[test]
    fn a_stolen_page_unregisters_and_frees_an_entry_without_data() {
        let mut g = group(2, 1, GbpConfig::reference(10, 5.0));
        gp(&mut g, A, 1);
        gp(&mut g, B, 1);
        gp(&mut g, A, 2); // A's only buffer: 1 stolen, A unregistered (B still is)
        assert_eq!(g.used(), (2, 0));
        gp(&mut g, B, 3); // B's 1 stolen: no member, no data -> freed
        assert_eq!(g.used(), (2, 0));
        swi(&mut g, B, 3); // changed data: stays when B's copy goes
        gp(&mut g, B, 4);
        assert_eq!(g.used(), (3, 1));
        assert_eq!(gp(&mut g, A, 3), NF_FROM_GBP);
        // A stolen page is not cross-invalidated later: B's write of 2 reaches nobody.
        gp(&mut g, B, 2);
        swi(&mut g, B, 2);
        assert_eq!(g.group.xi_due_to_writes, 0);
    }

    #[test]
    fn a_commit_delay_writes_at_commit_and_p_lock_negotiation_writes_first() {
        let mut cfg = GbpConfig::reference(10, 5.0);
        cfg.commit_every = 2;
        let mut g = group(3, 10, cfg);
        for m in [A, B, C] {
            gp(&mut g, m, 1);
            gp(&mut g, m, 2);
        }
        swi(&mut g, A, 1); // pending
        assert_eq!(g.group.changed_pages_written, 0);
        assert_eq!(gp(&mut g, B, 1), LBP_HIT); // B still sees its copy
        swi(&mut g, C, 1); // A's change of 1 is written first: B and C invalidated, C refreshes
        assert_eq!(g.members[A].changed_pages_written, 1);
        assert_eq!((g.members[B].xi_due_to_writes, g.members[C].xi_due_to_writes), (1, 1));
        assert_eq!(g.members[C].xi_reads_data_returned, 1);
        assert_eq!(g.lbps[C].counters.getpages_random, 2); // the refresh is no getpage of the trace
        assert_eq!(g.members[C].gbp_dependent_getpages, 3);
        swi(&mut g, A, 2); // A's second update: commit (1 no longer pending, 2 written)
        assert_eq!(g.members[A].changed_pages_written, 2);
        assert_eq!(g.members[A].commits, 1);
        assert_eq!(gp(&mut g, B, 2), XI_FROM_GBP);
        swi(&mut g, C, 2); // C's first... second update: commit writes 1 and 2
        assert_eq!(g.members[C].changed_pages_written, 2);
        assert_eq!(gp(&mut g, A, 1), XI_FROM_GBP);
    }

    #[test]
    fn commit_by_time() {
        let mut cfg = GbpConfig::reference(10, 5.0);
        cfg.commit_seconds = 1.0;
        let mut g = group(2, 10, cfg);
        g.access(0.0, B, 1, 1, 0, 0);
        g.access(0.1, A, 1, 1, 0, 0);
        g.access(0.2, A, 1, 1, 0, 1);
        g.access(1.1, B, 1, 1, 0, 0); // not yet: A's first update + 1 s = 1.2
        assert_eq!(g.group.changed_pages_written, 0);
        assert_eq!(g.access(1.2, B, 1, 1, 0, 0), XI_FROM_GBP);
        assert_eq!(g.members[A].commits, 1);
    }

    #[test]
    fn a_steal_of_an_uncommitted_page_writes_it_to_the_gbp_first() {
        let mut cfg = GbpConfig::reference(10, 5.0);
        cfg.commit_every = 100;
        let mut g = group(2, 1, cfg);
        gp(&mut g, B, 1);
        gp(&mut g, A, 1);
        swi(&mut g, A, 1);
        gp(&mut g, A, 2); // steals 1: written, B invalidated
        assert_eq!((g.group.changed_pages_written, g.members[B].xi_due_to_writes), (1, 1));
        assert_eq!(gp(&mut g, B, 1), XI_FROM_GBP);
    }

    #[test]
    fn a_smaller_structure_reclaims_what_no_longer_fits() {
        let mut g = group(2, 20, GbpConfig::reference(4, 5.0)); // 20 directory entries
        for p in 1..=10 {
            gp(&mut g, A, p);
        }
        for p in 1..=3 {
            swi(&mut g, A, p);
        }
        // GBPOOLT 30 % of 4 = 1.2: the 2nd write casts out 2 pages; after the 3rd, 1 changed.
        assert_eq!((g.group.castouts, g.group.castout_pages), (1, 2));
        assert_eq!(g.used(), (10, 3));
        g.alter(2, 2.0); // 4 directory entries, 2 data entries
        assert_eq!(g.structure(), (4, 2, 2.0, 1));
        // Directory order, LRU first: 4..10 (no data) then 1, 2 (clean), 3 (changed): the 6
        // oldest unchanged go: 4..9.
        assert_eq!(g.group.directory_reclaims, 6);
        assert_eq!(g.members[A].xi_due_to_reclaims, 6);
        assert_eq!(g.used(), (4, 3 - 1));
        assert_eq!(g.group.data_entry_reclaims, 1); // 1's data (the LRU clean) freed
        assert_eq!(gp(&mut g, B, 1), NF_FROM_DISK);
        assert_eq!(gp(&mut g, A, 9), XI_FROM_DISK);
        g.alter(100, 5.0);
        assert_eq!(g.structure(), (500, 100, 5.0, 1));
    }

    #[test]
    fn page_list_prefetch_takes_what_the_gbp_holds_and_reads_the_rest_in_one_io() {
        let mut cfg = GbpConfig::reference(20, 5.0);
        cfg.page_list_prefetch = true;
        let mut g = group(2, 20, cfg);
        for p in [11, 13] {
            gp(&mut g, B, p);
            swi(&mut g, B, p);
        }
        assert_eq!(g.access(0.0, A, 1, 10, 1, 0), PREFETCH); // 10..13 (quantity 4)
        assert_eq!(g.members[A].prefetch_pages_from_gbp, 2);
        assert_eq!(g.members[A].prefetch_pages_from_disk, 2);
        let c = g.lbps[A].counters;
        assert_eq!(
            (c.dyn_prefetch_requests, c.dyn_prefetch_reads, c.dyn_prefetch_pages),
            (1, 1, 2)
        );
        assert_eq!(c.sync_reads_sequential + c.sync_reads_random, 0);
        for p in 11..=13 {
            assert_eq!(g.access(0.0, A, 1, p, 1, 0), LBP_HIT);
        }
        swi(&mut g, B, 12); // A registered for the prefetched pages: invalidated
        assert_eq!(g.members[A].xi_due_to_writes, 1);
        // 12..15: 12 refreshed from the GBP, 13 valid (not in the list), 14 and 15 from disk.
        assert_eq!(g.access(0.0, A, 1, 12, 1, 0), PREFETCH);
        assert_eq!(g.members[A].prefetch_pages_from_gbp, 3);
        let c = g.lbps[A].counters;
        assert_eq!(
            (c.dyn_prefetch_requests, c.dyn_prefetch_reads, c.dyn_prefetch_pages),
            (2, 2, 4)
        );
        // Without page-list prefetch (the reference), a sequential getpage is a getpage.
        let mut g = group(2, 20, GbpConfig::reference(20, 5.0));
        assert_eq!(g.access(0.0, A, 1, 10, 1, 0), NF_FROM_DISK);
        assert_eq!(g.access(0.0, A, 1, 11, 1, 0), NF_FROM_DISK);
        assert_eq!(g.lbps[A].counters.sync_reads_sequential, 2);
    }

    #[test]
    fn objects_that_are_not_gbp_dependent_never_touch_the_gbp() {
        let mut g = group(2, 10, GbpConfig::reference(10, 5.0));
        g.set_dependent(1, false);
        gp(&mut g, A, 1);
        gp(&mut g, B, 1);
        swi(&mut g, B, 1);
        assert_eq!(gp(&mut g, A, 1), LBP_HIT);
        assert_eq!(g.group, GbpCounters::default());
        assert_eq!(g.used(), (0, 0));
        assert_eq!(g.access(0.0, A, 1, 50, 1, 0), PREFETCH); // dynamic prefetch as in one system
        assert_eq!(g.lbps[B].counters.buffer_updates, 1);
    }

    #[test]
    fn one_member_hits_as_its_pool_alone_does() {
        let mut rng = Rng(5);
        // Directory entries for every page (no reclaim): then nothing invalidates a buffer.
        let mut g = group(1, 300, GbpConfig::reference(1000, 5.0));
        let mut p = PoolModel::new(300, 100.0, 4, 90.0, 90.0);
        for _ in 0..20_000 {
            let page = rng.skewed(2000);
            let f = u8::from(rng.below(4) == 0);
            let want = p.access(0.0, 1, page, 0, 0);
            let got = g.access(0.0, A, 1, page, 0, 0);
            assert_eq!(got == LBP_HIT, want);
            if f == 1 {
                p.access(0.0, 1, page, 0, 1);
                g.access(0.0, A, 1, page, 0, 1);
            }
        }
        let c = g.members[A];
        assert_eq!(
            (c.xi_due_to_writes, c.xi_due_to_reclaims, c.directory_reclaims),
            (0, 0, 0)
        );
        assert_eq!(p.counters.getpages_random, g.lbps[A].counters.getpages_random);
        assert_eq!(
            c.gbp_dependent_getpages - c.nf_reads_data_returned - c.nf_reads_no_data,
            p.counters.getpages_random - p.counters.sync_reads_random
        );
    }

    /// The reference model as written in DATA-SHARING.md, with lists and linear scans.
    struct Brute {
        lbp: Vec<Vec<(Key, bool)>>, // per member, MRU first: (page, valid)
        cap: usize,
        dir: Vec<BEntry>,
        dir_cap: usize,
        data_cap: usize,
        gbpoolt: f64,
        tick: u64,
        c: [u64; 9],
    }

    #[derive(Clone, Copy)]
    struct BEntry {
        key: Key,
        regs: u64,
        data: u8, // 0 none, 1 clean, 2 changed
        tick: u64,
    }

    impl Brute {
        fn touch(&mut self, key: Key) {
            self.tick += 1;
            let t = self.tick;
            self.dir.iter_mut().find(|e| e.key == key).unwrap().tick = t;
        }
        fn pos(&self, key: Key) -> Option<usize> {
            self.dir.iter().position(|e| e.key == key)
        }
        fn entry(&mut self, key: Key) {
            if self.pos(key).is_some() {
                return;
            }
            if self.dir.len() >= self.dir_cap {
                let v = (0..self.dir.len())
                    .filter(|&i| self.dir[i].data != 2)
                    .min_by_key(|&i| self.dir[i].tick)
                    .unwrap();
                self.c[0] += 1; // directory reclaims
                let e = self.dir.remove(v);
                for r in 0..self.lbp.len() {
                    if e.regs & (1 << r) != 0 {
                        self.c[1] += 1; // XI due to reclaims
                        if let Some(b) = self.lbp[r].iter_mut().find(|b| b.0 == e.key) {
                            b.1 = false;
                        }
                    }
                }
            }
            self.tick += 1;
            self.dir.push(BEntry {
                key,
                regs: 0,
                data: 0,
                tick: self.tick,
            });
        }
        fn castout(&mut self) {
            for e in self.dir.iter_mut().filter(|e| e.data == 2) {
                e.data = 1;
                self.c[2] += 1; // castout pages
            }
        }
        fn getpage(&mut self, m: usize, key: Key) -> u8 {
            let found = self.lbp[m].iter().position(|b| b.0 == key);
            if let Some(i) = found {
                let b = self.lbp[m].remove(i);
                self.lbp[m].insert(0, (key, true));
                if b.1 {
                    return LBP_HIT;
                }
            } else {
                if self.lbp[m].len() >= self.cap {
                    let (v, _) = self.lbp[m].pop().unwrap();
                    if let Some(i) = self.pos(v) {
                        self.dir[i].regs &= !(1 << m);
                        if self.dir[i].regs == 0 && self.dir[i].data == 0 {
                            self.dir.remove(i);
                        }
                    }
                }
                self.lbp[m].insert(0, (key, true));
            }
            let data = self.pos(key).is_some_and(|i| self.dir[i].data != 0);
            if data {
                self.touch(key);
            }
            self.entry(key);
            let i = self.pos(key).unwrap();
            self.dir[i].regs |= 1 << m;
            self.touch(key);
            match (found.is_some(), data) {
                (true, true) => XI_FROM_GBP,
                (true, false) => XI_FROM_DISK,
                (false, true) => NF_FROM_GBP,
                (false, false) => NF_FROM_DISK,
            }
        }
        fn update(&mut self, m: usize, key: Key) {
            self.c[3] += 1; // changed pages written
            self.entry(key);
            let i = self.pos(key).unwrap();
            if self.dir[i].data == 0 {
                let used = self.dir.iter().filter(|e| e.data != 0).count();
                if used >= self.data_cap {
                    if self.dir.iter().all(|e| e.data != 1) {
                        self.c[4] += 1; // write failed
                        self.castout();
                    }
                    let v = (0..self.dir.len())
                        .filter(|&i| self.dir[i].data == 1)
                        .min_by_key(|&i| self.dir[i].tick)
                        .unwrap();
                    self.dir[v].data = 0;
                    self.c[5] += 1; // data entry reclaims
                }
            }
            let i = self.pos(key).unwrap();
            self.dir[i].data = 2;
            for r in 0..self.lbp.len() {
                if r != m && self.dir[i].regs & (1 << r) != 0 {
                    self.c[6] += 1; // XI due to writes
                    if let Some(b) = self.lbp[r].iter_mut().find(|b| b.0 == key) {
                        b.1 = false;
                    }
                }
            }
            self.dir[i].regs = 1 << m;
            self.touch(key);
            let changed = self.dir.iter().filter(|e| e.data == 2).count();
            if changed as f64 > self.gbpoolt / 100.0 * self.data_cap as f64 {
                self.castout();
            }
        }
    }

    #[test]
    fn the_group_model_equals_a_brute_force_reference_model() {
        for (seed, data, ratio, gbpoolt) in [
            (1, 20, 2.0, 30.0),
            (2, 40, 3.0, 60.0),
            (3, 8, 5.0, 100.0),
            (4, 30, 3.0, 10.0),
        ] {
            let mut rng = Rng(seed);
            let mut cfg = GbpConfig::reference(data, ratio);
            cfg.gbpoolt = gbpoolt;
            let members = 3;
            let mut g = group(members, 40, cfg);
            let mut b = Brute {
                lbp: vec![Vec::new(); members],
                cap: 40,
                dir: Vec::new(),
                dir_cap: directory_entries(data, ratio),
                data_cap: data,
                gbpoolt,
                tick: 0,
                c: [0; 9],
            };
            let mut outcomes = [0u64; 5];
            for _ in 0..6000 {
                let m = rng.below(members as u64) as usize;
                let page = rng.skewed(300);
                let got = g.access(0.0, m, 1, page, 0, 0);
                assert_eq!(got, b.getpage(m, (1, page)), "seed {seed}");
                outcomes[got as usize] += 1;
                if rng.below(3) == 0 {
                    g.access(0.0, m, 1, page, 0, 1);
                    b.update(m, (1, page));
                }
            }
            let grp = g.group;
            assert_eq!(
                [
                    grp.directory_reclaims,
                    grp.xi_due_to_reclaims,
                    grp.castout_pages,
                    grp.changed_pages_written,
                    grp.write_failed_no_storage,
                    grp.data_entry_reclaims,
                    grp.xi_due_to_writes,
                ],
                [b.c[0], b.c[1], b.c[2], b.c[3], b.c[4], b.c[5], b.c[6]],
                "seed {seed}"
            );
            assert!(outcomes.iter().all(|&n| n > 0), "seed {seed}: {outcomes:?}");
            assert!(grp.directory_reclaims > 0 && grp.castout_pages > 0, "seed {seed}");
            if gbpoolt >= 100.0 {
                assert!(grp.write_failed_no_storage > 0, "seed {seed}");
            }
            let sum: GbpCounters = g.members.iter().fold(GbpCounters::default(), |mut a, c| {
                a.xi_reads_data_returned += c.xi_reads_data_returned;
                a.nf_reads_no_data += c.nf_reads_no_data;
                a.gbp_dependent_getpages += c.gbp_dependent_getpages;
                a.castout_pages += c.castout_pages;
                a
            });
            assert_eq!(sum.xi_reads_data_returned, grp.xi_reads_data_returned);
            assert_eq!(sum.nf_reads_no_data, grp.nf_reads_no_data);
            assert_eq!(sum.castout_pages, grp.castout_pages);
            assert_eq!(
                grp.gbp_dependent_getpages,
                outcomes.iter().sum::<u64>(),
                "getpages = LBP hits + XI reads + NF reads"
            );
            assert_eq!(grp.xi_reads_data_returned, outcomes[1]);
            assert_eq!(grp.xi_reads_no_data, outcomes[2]);
            assert_eq!(grp.nf_reads_data_returned, outcomes[3]);
            assert_eq!(grp.nf_reads_no_data, outcomes[4]);
            let disk: u64 = g.lbps.iter().map(|l| l.counters.sync_reads_random).sum();
            assert_eq!(disk, outcomes[2] + outcomes[4]);
        }
    }

    #[test]
    fn reclaims_fall_to_zero_as_the_gbp_grows() {
        let mut last = u64::MAX;
        for data in [10usize, 40, 160, 2000] {
            let mut rng = Rng(9);
            let mut g = group(3, 50, GbpConfig::reference(data, 5.0));
            for _ in 0..20_000 {
                let m = rng.below(3) as usize;
                let page = rng.skewed(2000);
                g.access(0.0, m, 1, page, 0, 0);
                if rng.below(4) == 0 {
                    g.access(0.0, m, 1, page, 0, 1);
                }
            }
            let r = g.group.directory_reclaims + g.group.write_failed_no_storage;
            assert!(r <= last, "{data}: {r} > {last}");
            last = r;
        }
        assert_eq!(last, 0);
    }
}
