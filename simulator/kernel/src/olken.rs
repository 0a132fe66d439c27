//! Olken's exact LRU stack distance: a Fenwick tree over access positions
//! with a mark at each page's latest access. The distance of a re-reference is
//! the number of marks after the page's previous position (distinct pages
//! referenced since). Positions only grow; when the tree is full it is
//! compacted to the live marks, renumbered in order.

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Olken {
    tree: Vec<u32>, // 1-based Fenwick tree; tree.len() == cap + 1
    next: u32,      // next free position (1-based)
    live: u32,      // number of marks
}

impl Olken {
    pub fn new() -> Self {
        Olken { tree: vec![0; 1025], next: 1, live: 0 }
    }

    #[inline]
    fn cap(&self) -> u32 {
        (self.tree.len() - 1) as u32
    }

    #[inline]
    fn add(&mut self, mut i: u32, delta: i32) {
        let n = self.tree.len() as u32;
        while i < n {
            let slot = &mut self.tree[i as usize];
            *slot = slot.wrapping_add(delta as u32);
            i += i & i.wrapping_neg();
        }
    }

    #[inline]
    fn prefix(&self, mut i: u32) -> u32 {
        let mut s = 0u32;
        while i > 0 {
            s = s.wrapping_add(self.tree[i as usize]);
            i &= i - 1;
        }
        s
    }

    pub fn live(&self) -> u32 {
        self.live
    }

    pub fn is_full(&self) -> bool {
        self.next > self.cap()
    }

    /// Distinct pages referenced after position `pos` (the page at pos excluded).
    #[inline]
    pub fn distance(&self, pos: u32) -> u64 {
        (self.live - self.prefix(pos)) as u64
    }

    #[inline]
    pub fn unmark(&mut self, pos: u32) {
        self.add(pos, -1);
        self.live -= 1;
    }

    /// Mark the next position; the caller must compact first when full.
    #[inline]
    pub fn mark_next(&mut self) -> u32 {
        let pos = self.next;
        self.next += 1;
        self.add(pos, 1);
        self.live += 1;
        pos
    }

    /// After the caller renumbered its `live` pages to positions 1..=live
    /// (keeping their order), rebuild the tree with room to grow.
    pub fn compacted(&mut self) {
        let n = self.live as usize;
        let cap = (2 * n).max(1024);
        self.tree = vec![0; cap + 1];
        // O(cap) Fenwick construction over n ones followed by zeros.
        for i in 1..=cap {
            if i <= n {
                self.tree[i] += 1;
            }
            let j = i + (i & i.wrapping_neg());
            if j <= cap {
                let v = self.tree[i];
                self.tree[j] += v;
            }
        }
        self.next = n as u32 + 1;
    }

    pub fn bytes(&self) -> usize {
        self.tree.len() * 4
    }
}
