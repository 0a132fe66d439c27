//! Test helpers: a small deterministic random source and the naive LRU stack
//! that the kernel's structures are checked against.

/// SplitMix64: deterministic, no dependency.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// A skewed page number in [0, n): small pages far more often (hot and cold data).
    pub fn skewed(&mut self, n: u64) -> u64 {
        let u = (self.next() >> 11) as f64 / (1u64 << 53) as f64;
        ((u * u * u) * n as f64) as u64
    }
}

/// LRU stack distances by brute force: distinct keys referenced since the key's
/// previous reference, or None on its first reference.
pub fn naive_distances<K: PartialEq + Copy>(refs: &[K]) -> Vec<Option<u64>> {
    let mut stack: Vec<K> = Vec::new(); // most recent last
    refs.iter()
        .map(|&k| {
            let d = stack
                .iter()
                .rposition(|&x| x == k)
                .map(|i| (stack.len() - 1 - i) as u64);
            if let Some(i) = stack.iter().position(|&x| x == k) {
                stack.remove(i);
            }
            stack.push(k);
            d
        })
        .collect()
}

/// Hits of an LRU cache of `size` buffers: references whose distance is below the size.
pub fn naive_lru_hits(distances: &[Option<u64>], size: u64) -> u64 {
    distances.iter().filter(|d| matches!(d, Some(d) if *d < size)).count() as u64
}
