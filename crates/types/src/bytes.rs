//! The one bounded byte cursor under every reader of an untrusted binary file (the policy
//! reader, file_contexts.bin, seaccess's compiled file_contexts): each read is checked against
//! the bytes left and answers None, the position unchanged, when they are too few, so that no
//! read goes past the end and no count read from a file makes an allocation the file cannot
//! back. Each reader wraps it with its own error, which names where in its file it was.

/// A read position in a byte slice.
#[derive(Debug, Clone)]
pub struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    /// A cursor at the start of `buf`.
    pub fn new(buf: &'a [u8]) -> Cursor<'a> {
        Cursor { buf, pos: 0 }
    }

    /// Another cursor over the same bytes, at `pos` (the end if `pos` is past it).
    pub fn at(&self, pos: usize) -> Cursor<'a> {
        Cursor {
            buf: self.buf,
            pos: pos.min(self.buf.len()),
        }
    }

    /// How many bytes have been read.
    #[inline]
    pub fn offset(&self) -> usize {
        self.pos
    }

    /// How many bytes are left.
    #[inline]
    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    /// The next `n` bytes, or None (nothing read) if fewer are left.
    #[inline]
    pub fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let s = self.buf.get(self.pos..self.pos.checked_add(n)?)?;
        self.pos += n;
        Some(s)
    }

    /// The next `N` bytes as an array, or None if fewer are left.
    #[inline]
    pub fn array<const N: usize>(&mut self) -> Option<[u8; N]> {
        let s = self.buf.get(self.pos..self.pos.checked_add(N)?)?;
        let mut a = [0u8; N];
        a.copy_from_slice(s);
        self.pos += N;
        Some(a)
    }

    /// A byte.
    #[inline]
    pub fn u8(&mut self) -> Option<u8> {
        self.array::<1>().map(|[b]| b)
    }

    /// A little-endian u32.
    #[inline]
    pub fn u32_le(&mut self) -> Option<u32> {
        self.array().map(u32::from_le_bytes)
    }

    /// A u32 in this machine's byte order (formats written for one machine, as
    /// file_contexts.bin).
    #[inline]
    pub fn u32_ne(&mut self) -> Option<u32> {
        self.array().map(u32::from_ne_bytes)
    }

    /// A little-endian u64.
    #[inline]
    pub fn u64_le(&mut self) -> Option<u64> {
        self.array().map(u64::from_le_bytes)
    }

    /// Whether what is left can hold `n` records of at least `min_size` bytes each (a record
    /// size of 0 counts as 1): a count read from a file is checked with this before anything
    /// is allocated for it.
    #[inline]
    pub fn holds(&self, n: usize, min_size: usize) -> bool {
        n.saturating_mul(min_size.max(1)) <= self.remaining()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::*;

    /// A short read answers None and reads nothing; counts are bounded by what is left.
    #[test]
    fn reads_stop_at_the_end() {
        let mut c = Cursor::new(&[1, 0, 0, 0, 2, 3]);
        assert_eq!(c.u32_le(), Some(1));
        assert_eq!(c.u32_le(), None);
        assert_eq!(c.offset(), 4);
        assert_eq!(c.take(usize::MAX), None);
        assert!(c.holds(2, 1) && !c.holds(3, 1) && !c.holds(usize::MAX, 2) && c.holds(2, 0));
        assert_eq!(c.take(2), Some(&[2u8, 3][..]));
        assert_eq!((c.remaining(), c.u8()), (0, None));
        assert_eq!(c.at(100).offset(), 6);
        assert_eq!(c.at(4).u8(), Some(2));
    }
}
