//! Log-linear distance buckets: exact (width 1) below 2^bits, then each power
//! of two split into 2^(bits-1) buckets, so a bucket is at most 2^-(bits-1) of
//! its distance wide. Curve points at bucket boundaries are exact; between
//! boundaries the bucket's weight is spread linearly.

#[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize)]
pub struct Buckets {
    pub bits: u32,
}

impl Buckets {
    pub fn new(bits: u32) -> Self {
        Buckets { bits: bits.clamp(4, 24) }
    }

    #[inline]
    pub fn index(&self, d: u64) -> usize {
        let lim = 1u64 << self.bits;
        if d < lim {
            return d as usize;
        }
        let b = 63 - d.leading_zeros(); // highest set bit, >= bits
        let shift = b - (self.bits - 1);
        let m = d >> shift; // in [lim/2, lim)
        (lim + (shift as u64 - 1) * (lim / 2) + (m - lim / 2)) as usize
    }

    /// Smallest distance in bucket i, and the bucket's width.
    #[inline]
    pub fn range(&self, i: usize) -> (u64, u64) {
        let lim = 1u64 << self.bits;
        let half = lim / 2;
        let i = i as u64;
        if i < lim {
            return (i, 1);
        }
        let k = i - lim;
        let shift = k / half + 1;
        let m = k % half + half;
        (m << shift, 1u64 << shift)
    }

    /// Weight of bucket i's references that hit in a pool of `size` buffers
    /// (distance < size), spreading the bucket uniformly over its distances.
    #[inline]
    pub fn hit_fraction(&self, i: usize, size: u64) -> f64 {
        let (lo, width) = self.range(i);
        if lo + width <= size {
            1.0
        } else if lo >= size {
            0.0
        } else {
            (size - lo) as f64 / width as f64
        }
    }
}
