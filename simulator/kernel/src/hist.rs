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
        Buckets {
            bits: bits.clamp(4, 24),
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::Rng;

    #[test]
    fn every_distance_falls_in_its_buckets_range() {
        for bits in [4u32, 8, 12] {
            let b = Buckets::new(bits);
            let mut rng = Rng(bits as u64);
            let mut ds: Vec<u64> = (0..5000).map(|i| i as u64).collect();
            ds.extend((0..5000).map(|_| rng.next() >> (2 + rng.below(60))));
            for d in ds {
                let (lo, width) = b.range(b.index(d));
                assert!(
                    lo <= d && d < lo + width,
                    "bits {bits}: {d} not in [{lo}, {})",
                    lo + width
                );
                assert!(d < 1 << bits || width as f64 <= (lo as f64) / (1u64 << (bits - 1)) as f64);
            }
        }
    }

    #[test]
    fn buckets_are_contiguous_and_exact_below_the_limit() {
        let b = Buckets::new(6);
        let mut next = 0u64;
        for i in 0..400 {
            let (lo, width) = b.range(i);
            assert_eq!(lo, next, "bucket {i} starts where {} ended", i.saturating_sub(1));
            assert_eq!(b.index(lo), i);
            if i < 64 {
                assert_eq!(width, 1);
            }
            next = lo + width;
        }
    }

    #[test]
    fn hit_fraction_spreads_a_bucket_linearly() {
        let b = Buckets::new(4);
        let i = b.index(100); // a bucket of width 8: [96, 104)
        assert_eq!(b.range(i), (96, 8));
        assert_eq!(b.hit_fraction(i, 96), 0.0);
        assert_eq!(b.hit_fraction(i, 98), 0.25);
        assert_eq!(b.hit_fraction(i, 104), 1.0);
        assert_eq!(b.hit_fraction(b.index(5), 6), 1.0);
        assert_eq!(b.hit_fraction(b.index(5), 5), 0.0);
    }
}
