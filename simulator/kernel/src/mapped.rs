//! A flat array in a memory mapping of its own that grows where it lies: for the big, randomly
//! probed page table. On Linux a mapping of 4 MiB or more is whole 2 MiB pages, 2 MiB aligned and
//! asked for 2 MiB pages (with 4 KiB pages nearly each probe, and each prefetch, also misses the
//! TLB; smaller ones are whole 4 KiB pages), and growing it moves
//! the mapping's page tables to a larger aligned range (mremap): nothing is copied, the huge
//! pages stay whole, and only the new part is touched for the first time. A growth that built a
//! new table instead touched twice the memory, and the system's zeroing of fresh memory was
//! most of what a growth cost (bench/README.md).

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::ops::{Deref, DerefMut};

const HUGE: usize = 2 << 20;

/// `len` values of T (plain data: no drop, any bit pattern written by the owner).
pub struct Mapped<T: Copy> {
    ptr: *mut T,
    len: usize,
    bytes: usize, // of the mapping
}

// SAFETY: a Mapped owns its mapping alone, as a Vec owns its buffer.
unsafe impl<T: Copy + Send> Send for Mapped<T> {}
// SAFETY: shared access only reads.
unsafe impl<T: Copy + Sync> Sync for Mapped<T> {}

impl<T: Copy> Mapped<T> {
    /// `len` copies of `fill`.
    pub fn new(len: usize, fill: T) -> Self {
        let bytes = sys::size(bytes_of::<T>(len));
        let ptr = sys::map(bytes) as *mut T;
        let mut m = Mapped { ptr, len: 0, bytes };
        m.extend(len, fill);
        m
    }

    /// Grow to `len` values, the new ones copies of `fill`; the old ones keep their indices
    /// (their addresses may change).
    pub fn grow(&mut self, len: usize, fill: T) {
        assert!(len >= self.len, "a Mapped only grows");
        let bytes = sys::size(bytes_of::<T>(len));
        if bytes > self.bytes {
            self.ptr = sys::remap(self.ptr as *mut u8, self.bytes, bytes) as *mut T;
            self.bytes = bytes;
        }
        self.extend(len, fill);
    }

    fn extend(&mut self, len: usize, fill: T) {
        assert!(bytes_of::<T>(len) <= self.bytes, "{len} values past the mapping");
        for i in self.len..len {
            // SAFETY: i is inside the mapping (checked above); T is Copy, nothing to drop.
            unsafe { self.ptr.add(i).write(fill) };
        }
        self.len = len;
    }
}

/// The bytes of `len` values of T; past what an address space holds, a panic (as a Vec's
/// capacity overflow), never a wrapped size. Mappings start at least 64 bytes aligned.
fn bytes_of<T>(len: usize) -> usize {
    assert!(align_of::<T>() <= 64, "values aligned to {} bytes", align_of::<T>());
    len.checked_mul(size_of::<T>())
        .filter(|&b| b <= isize::MAX as usize / 2)
        .unwrap_or_else(|| panic!("{len} values of {} bytes: too many", size_of::<T>()))
}

impl<T: Copy> Drop for Mapped<T> {
    fn drop(&mut self) {
        sys::unmap(self.ptr as *mut u8, self.bytes);
    }
}

impl<T: Copy> Deref for Mapped<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        // SAFETY: the first len values are initialised and the mapping lives as long as self.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

impl<T: Copy> DerefMut for Mapped<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as in deref, and &mut self is the only access.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

impl<T: Copy> Clone for Mapped<T> {
    fn clone(&self) -> Self {
        Mapped::from_slice(self)
    }
}

impl<T: Copy> Mapped<T> {
    fn from_slice(values: &[T]) -> Self {
        let bytes = sys::size(bytes_of::<T>(values.len()));
        let ptr = sys::map(bytes) as *mut T;
        // SAFETY: the new mapping holds values.len() values and does not overlap them.
        unsafe { std::ptr::copy_nonoverlapping(values.as_ptr(), ptr, values.len()) };
        Mapped {
            ptr,
            len: values.len(),
            bytes,
        }
    }
}

impl<T: Copy + std::fmt::Debug> std::fmt::Debug for Mapped<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mapped").field("len", &self.len).finish()
    }
}

/// Written as a Vec<T> is, so snapshots from before read the same.
impl<T: Copy + Serialize> Serialize for Mapped<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        (**self).serialize(s)
    }
}

impl<'de, T: Copy + Deserialize<'de>> Deserialize<'de> for Mapped<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Mapped::from_slice(&Vec::<T>::deserialize(d)?))
    }
}

#[cfg(target_os = "linux")]
mod sys {
    use super::HUGE;

    /// Whole 4 KiB pages, and whole 2 MiB pages from 4 MiB.
    pub fn size(bytes: usize) -> usize {
        let b = bytes.max(1);
        b.next_multiple_of(if b >= 2 * HUGE { HUGE } else { 4096 })
    }

    /// A fresh zeroed mapping of `bytes` (from size()), 2 MiB aligned and advised to 2 MiB
    /// pages when whole 2 MiB pages.
    pub fn map(bytes: usize) -> *mut u8 {
        if !bytes.is_multiple_of(HUGE) {
            return check(unsafe_map(bytes), "mmap", bytes);
        }
        let over = check(unsafe_map(bytes + HUGE), "mmap", bytes + HUGE);
        let at = trim(over, bytes);
        advise(at, bytes);
        at
    }

    /// The mapping at `ptr` of `old` bytes moved to a new one of `bytes`, its contents kept.
    pub fn remap(ptr: *mut u8, old: usize, bytes: usize) -> *mut u8 {
        if !bytes.is_multiple_of(HUGE) {
            // SAFETY: ptr and old are a live mapping of ours; the kernel may move it.
            let p = unsafe { libc::mremap(ptr as *mut libc::c_void, old, bytes, libc::MREMAP_MAYMOVE) };
            return check(p as *mut u8, "mremap", bytes);
        }
        // A range of the new size at a 2 MiB boundary (reserved, then taken over by the move),
        // so the huge pages move whole instead of being split into 4 KiB ones.
        let over = check(unsafe_map(bytes + HUGE), "mmap", bytes + HUGE);
        let at = trim(over, bytes);
        // SAFETY: moves our mapping onto our own reservation at `at` (MREMAP_FIXED replaces it).
        let p = unsafe {
            libc::mremap(
                ptr as *mut libc::c_void,
                old,
                bytes,
                libc::MREMAP_MAYMOVE | libc::MREMAP_FIXED,
                at as *mut libc::c_void,
            )
        };
        let p = check(p as *mut u8, "mremap", bytes);
        advise(p, bytes);
        p
    }

    pub fn unmap(ptr: *mut u8, bytes: usize) {
        // SAFETY: ptr and bytes are a live mapping of ours, not used after this.
        unsafe { libc::munmap(ptr as *mut libc::c_void, bytes) };
    }

    fn unsafe_map(bytes: usize) -> *mut u8 {
        // SAFETY: a new private anonymous mapping; no existing memory is touched.
        unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                bytes,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            ) as *mut u8
        }
    }

    /// Of a mapping of bytes + HUGE at `over`, keep `bytes` from its first 2 MiB boundary.
    fn trim(over: *mut u8, bytes: usize) -> *mut u8 {
        let head = (over as usize).next_multiple_of(HUGE) - over as usize;
        // SAFETY: both cuts lie inside the mapping just made and outside what is kept.
        unsafe {
            if head > 0 {
                libc::munmap(over as *mut libc::c_void, head);
            }
            if HUGE - head > 0 {
                libc::munmap(over.add(head + bytes) as *mut libc::c_void, HUGE - head);
            }
            over.add(head)
        }
    }

    fn advise(ptr: *mut u8, bytes: usize) {
        // SAFETY: MADV_HUGEPAGE on our own mapping changes no contents; a refusal is harmless.
        unsafe { libc::madvise(ptr as *mut libc::c_void, bytes, libc::MADV_HUGEPAGE) };
    }

    fn check(p: *mut u8, call: &str, bytes: usize) -> *mut u8 {
        if p as *mut libc::c_void == libc::MAP_FAILED {
            // As a Vec does when the allocator fails: the process cannot go on.
            panic!("{call} of {bytes} bytes failed: {}", std::io::Error::last_os_error());
        }
        p
    }
}

#[cfg(not(target_os = "linux"))]
mod sys {
    //! Elsewhere: the global allocator (realloc copies when it must).
    use std::alloc::{alloc_zeroed, dealloc, realloc, Layout};

    const ALIGN: usize = 64;

    pub fn size(bytes: usize) -> usize {
        bytes.max(1).next_multiple_of(ALIGN)
    }

    fn layout(bytes: usize) -> Layout {
        Layout::from_size_align(bytes, ALIGN).expect("a table's size fits a layout")
    }

    pub fn map(bytes: usize) -> *mut u8 {
        // SAFETY: a non-zero size.
        let p = unsafe { alloc_zeroed(layout(bytes)) };
        if p.is_null() {
            std::alloc::handle_alloc_error(layout(bytes));
        }
        p
    }

    pub fn remap(ptr: *mut u8, old: usize, bytes: usize) -> *mut u8 {
        // SAFETY: ptr was allocated with layout(old).
        let p = unsafe { realloc(ptr, layout(old), bytes) };
        if p.is_null() {
            std::alloc::handle_alloc_error(layout(bytes));
        }
        p
    }

    pub fn unmap(ptr: *mut u8, bytes: usize) {
        // SAFETY: ptr was allocated with layout(bytes).
        unsafe { dealloc(ptr, layout(bytes)) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_survive_growth_clone_and_a_round_trip() {
        // Sizes under a 2 MiB page, across the 4 MiB step to whole huge pages, and past it.
        let mut m: Mapped<u64> = Mapped::new(3, 7);
        let mut want: Vec<u64> = vec![7; 3];
        for len in [100usize, 4096, 300_000, 600_000, 1_500_000] {
            for (i, v) in m.iter_mut().enumerate() {
                *v ^= i as u64 * 0x9E37;
            }
            for (i, v) in want.iter_mut().enumerate() {
                *v ^= i as u64 * 0x9E37;
            }
            m.grow(len, len as u64);
            want.resize(len, len as u64);
            assert_eq!(&*m, &want[..], "after growing to {len}");
        }
        let c = m.clone();
        drop(m);
        assert_eq!(&*c, &want[..]);
        let back: Mapped<u64> = bincode::deserialize(&bincode::serialize(&c).unwrap()).unwrap();
        assert_eq!(&*back, &want[..]);
        assert_eq!(
            bincode::serialize(&c).unwrap(),
            bincode::serialize(&want).unwrap(),
            "as a Vec"
        );
    }

    #[test]
    #[should_panic(expected = "too many")]
    fn a_size_past_the_address_space_panics_instead_of_wrapping() {
        // usize::MAX / 8 values of 16 bytes wrap to a tiny size if multiplied unchecked.
        let _ = Mapped::<u128>::new(usize::MAX / 8, 0);
    }

    #[test]
    #[should_panic(expected = "too many")]
    fn growth_past_the_address_space_panics() {
        let mut m: Mapped<u64> = Mapped::new(10, 0);
        m.grow(usize::MAX / 4 + 1, 0);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn big_mappings_lie_on_2_mib_boundaries_before_and_after_growth() {
        let mut m: Mapped<u128> = Mapped::new(1 << 18, 0); // 4 MiB
        assert!((m.as_ptr() as usize).is_multiple_of(HUGE));
        m[5] = 9;
        m.grow(1 << 20, 1);
        assert!((m.as_ptr() as usize).is_multiple_of(HUGE));
        assert_eq!((m[5], m[(1 << 18) - 1], m[1 << 18], m.len()), (9, 0, 1, 1 << 20));
    }
}
