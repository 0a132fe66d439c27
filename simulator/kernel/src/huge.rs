//! Transparent huge pages for the big, randomly probed arrays (the page table): where the
//! system leaves them to madvise (the common default), ask for them.

/// Ask for 2 MiB pages under `v`'s allocation (call before writing it, so the first touch
/// faults them in). Only a hint: it does nothing below 4 MiB, off Linux, or when refused.
pub fn advise<T>(v: &Vec<T>) {
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        const MADV_HUGEPAGE: i32 = 14;
        extern "C" {
            fn madvise(addr: *mut core::ffi::c_void, len: usize, advice: i32) -> i32;
        }
        let bytes = v.capacity() * std::mem::size_of::<T>();
        if bytes < 2 * HUGE {
            return;
        }
        let start = (v.as_ptr() as usize).next_multiple_of(HUGE);
        let end = (v.as_ptr() as usize + bytes) & !(HUGE - 1);
        if end > start {
            // SAFETY: the range lies inside the live allocation; MADV_HUGEPAGE changes no contents.
            unsafe {
                madvise(start as *mut core::ffi::c_void, end - start, MADV_HUGEPAGE);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn advised_memory_reads_back_what_was_written() {
        for n in [0usize, 100, 3 << 20, (9 << 20) + 17] {
            let mut v: Vec<u64> = Vec::with_capacity(n);
            super::advise(&v);
            v.extend((0..n as u64).map(|i| i ^ 0x5555));
            assert!(v.iter().enumerate().all(|(i, &x)| x == i as u64 ^ 0x5555), "{n} words");
        }
    }
}
