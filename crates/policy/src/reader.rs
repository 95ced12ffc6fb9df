//! A bounded little-endian reader: every read is checked against the bytes left, and every count
//! read from the file is checked against the bytes left before anything is allocated for it
//! (both by [`Cursor`], every binary reader's), each failure named by section and offset.

use seaccess_types::bytes::Cursor;

use crate::error::{PolicyError, Result, Section};

pub(crate) struct Reader<'a> {
    cur: Cursor<'a>,
    section: Section,
    /// Where each section began, in file order.
    starts: Vec<(Section, usize)>,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(buf: &'a [u8]) -> Self {
        Reader {
            cur: Cursor::new(buf),
            section: Section::Header,
            starts: vec![(Section::Header, 0)],
        }
    }

    /// A second reader over the same bytes, at `pos`, in the same section (to find a record
    /// again once a later check has found it at fault).
    pub(crate) fn at(&self, pos: usize) -> Reader<'a> {
        Reader {
            cur: self.cur.at(pos),
            section: self.section,
            starts: Vec::new(),
        }
    }

    /// Starts reading `section` at the current offset.
    pub(crate) fn enter(&mut self, section: Section) {
        self.section = section;
        self.starts.push((section, self.cur.offset()));
    }

    /// Where each section began, in file order.
    pub(crate) fn section_starts(self) -> Vec<(Section, usize)> {
        self.starts
    }

    pub(crate) fn offset(&self) -> usize {
        self.cur.offset()
    }

    pub(crate) fn remaining(&self) -> usize {
        self.cur.remaining()
    }

    pub(crate) fn invalid(&self, what: impl Into<String>) -> PolicyError {
        PolicyError::Invalid {
            section: self.section,
            offset: self.offset(),
            what: what.into(),
        }
    }

    /// The same error, reported at an earlier offset (where the offending field started).
    pub(crate) fn invalid_at(&self, offset: usize, what: impl Into<String>) -> PolicyError {
        PolicyError::Invalid {
            section: self.section,
            offset,
            what: what.into(),
        }
    }

    /// The error for a read of `need` bytes the file does not have.
    fn truncated(&self, need: usize) -> PolicyError {
        PolicyError::Truncated {
            section: self.section,
            offset: self.offset(),
            need,
            left: self.remaining(),
        }
    }

    pub(crate) fn bytes(&mut self, n: usize) -> Result<&'a [u8]> {
        match self.cur.take(n) {
            Some(s) => Ok(s),
            None => Err(self.truncated(n)),
        }
    }

    pub(crate) fn u8(&mut self) -> Result<u8> {
        self.cur.u8().ok_or_else(|| self.truncated(1))
    }
    pub(crate) fn u32(&mut self) -> Result<u32> {
        self.cur.u32_le().ok_or_else(|| self.truncated(4))
    }
    pub(crate) fn u64(&mut self) -> Result<u64> {
        self.cur.u64_le().ok_or_else(|| self.truncated(8))
    }

    /// A count of records each at least `min_size` bytes long: rejected before any allocation if
    /// the bytes left cannot hold that many.
    pub(crate) fn count(&mut self, what: &str, min_size: usize) -> Result<usize> {
        let at = self.offset();
        let n = self.u32()? as usize;
        if !self.cur.holds(n, min_size) {
            return Err(self.invalid_at(
                at,
                format!(
                    "{what} count {n} exceeds the {} bytes left",
                    self.remaining()
                ),
            ));
        }
        Ok(n)
    }

    /// A name of `len` bytes (the length having been read already): non-empty UTF-8 without NUL.
    pub(crate) fn name(&mut self, len: u32, what: &str) -> Result<Box<str>> {
        let at = self.offset();
        if len == 0 {
            return Err(self.invalid_at(at, format!("empty {what} name")));
        }
        let b = self.bytes(len as usize)?;
        match std::str::from_utf8(b) {
            Ok(s) if !s.contains('\0') => Ok(s.into()),
            _ => Err(self.invalid_at(at, format!("{what} name is not printable text"))),
        }
    }

    /// Reads `len` then the name.
    pub(crate) fn len_name(&mut self, what: &str) -> Result<Box<str>> {
        let len = self.u32()?;
        self.name(len, what)
    }
}
