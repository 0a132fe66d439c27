//! DB2's two LRU chains over one set of buffers: chain 0 random/RID, chain 1
//! sequential, each a doubly linked list in one node table (O(1) per reference).
//! The generator's pool (bpmodel.rs) runs on it, and so does the reference the
//! miniature caches (mini.rs, queues of uses) are tested against: the same steal rule.

use serde::{Deserialize, Serialize};

const NIL: u32 = u32::MAX;

#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
struct Node<T> {
    data: T,
    prev: u32, // towards the most recently used
    next: u32, // towards the least recently used
    tick: u64,
    chain: u8,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Chains<T> {
    nodes: Vec<Node<T>>,
    free: Vec<u32>,
    head: [u32; 2], // most recently used
    tail: [u32; 2], // least recently used
    len: [usize; 2],
    tick: u64,
}

impl<T: Copy> Chains<T> {
    pub fn with_capacity(n: usize) -> Self {
        Chains {
            nodes: Vec::with_capacity(n),
            free: Vec::new(),
            head: [NIL; 2],
            tail: [NIL; 2],
            len: [0; 2],
            tick: 0,
        }
    }

    /// Buffers on `chain`.
    pub fn len(&self, chain: usize) -> usize {
        self.len[chain]
    }

    pub fn get(&self, i: u32) -> &T {
        &self.nodes[i as usize].data
    }

    pub fn get_mut(&mut self, i: u32) -> &mut T {
        &mut self.nodes[i as usize].data
    }

    /// A new buffer, most recently used on `chain`; returns its index.
    pub fn insert(&mut self, data: T, chain: u8) -> u32 {
        let node = Node {
            data,
            prev: NIL,
            next: NIL,
            tick: 0,
            chain,
        };
        let i = match self.free.pop() {
            Some(i) => {
                self.nodes[i as usize] = node;
                i
            }
            None => {
                self.nodes.push(node);
                (self.nodes.len() - 1) as u32
            }
        };
        self.push_front(i, chain);
        i
    }

    /// Buffer `i` used again, by a getpage of `chain`'s kind: most recently used there.
    pub fn touch(&mut self, i: u32, chain: u8) {
        self.unlink(i);
        self.push_front(i, chain);
    }

    /// Take buffer `i` off its chain and free it; returns what it held.
    pub fn remove(&mut self, i: u32) -> T {
        self.unlink(i);
        self.free.push(i);
        self.nodes[i as usize].data
    }

    /// The buffer a steal takes: the sequential chain's least recently used while that chain
    /// holds more than `seq_limit` buffers, else the least recently used of either chain.
    pub fn victim(&self, seq_limit: usize) -> Option<u32> {
        let c = if self.len[1] > seq_limit || self.tail[0] == NIL {
            1
        } else if self.tail[1] == NIL {
            0
        } else {
            let (a, b) = (
                self.nodes[self.tail[0] as usize].tick,
                self.nodes[self.tail[1] as usize].tick,
            );
            usize::from(b < a)
        };
        Some(self.tail[c]).filter(|&v| v != NIL)
    }

    /// What `chain` holds, most recently used first.
    #[cfg(test)]
    pub fn chain(&self, chain: usize) -> Vec<T> {
        let mut out = Vec::new();
        let mut i = self.head[chain];
        while i != NIL {
            out.push(self.nodes[i as usize].data);
            i = self.nodes[i as usize].next;
        }
        out
    }

    fn unlink(&mut self, i: u32) {
        let n = self.nodes[i as usize];
        let c = n.chain as usize;
        if n.prev != NIL {
            self.nodes[n.prev as usize].next = n.next;
        } else {
            self.head[c] = n.next;
        }
        if n.next != NIL {
            self.nodes[n.next as usize].prev = n.prev;
        } else {
            self.tail[c] = n.prev;
        }
        self.len[c] -= 1;
    }

    fn push_front(&mut self, i: u32, chain: u8) {
        self.tick += 1;
        let c = chain as usize;
        let old = self.head[c];
        {
            let n = &mut self.nodes[i as usize];
            n.prev = NIL;
            n.next = old;
            n.chain = chain;
            n.tick = self.tick;
        }
        if old != NIL {
            self.nodes[old as usize].prev = i;
        } else {
            self.tail[c] = i;
        }
        self.head[c] = i;
        self.len[c] += 1;
    }
}
