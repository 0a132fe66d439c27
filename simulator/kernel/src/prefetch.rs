//! The prefetch hint, in one place: start loading the cache line that holds a value a loop will
//! read soon. It takes a reference, so callers need no unsafe code and no bounds of their own.

/// Start loading `value`'s cache line into every level of cache (a hint: nothing is read).
#[inline(always)]
pub fn line<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch reads and writes nothing; the address is a live reference's.
    unsafe {
        use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch(value as *const T as *const i8, _MM_HINT_T0);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}
