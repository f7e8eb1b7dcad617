//! Bounds-checked reading and big-endian writing helpers for the codec.

use super::WireError;

/// Rounds `len` up to a multiple of 4 (RFC 9260 3.2: chunks and parameters are
/// padded to 4 bytes).
pub const fn padded(len: usize) -> usize {
    (len + 3) & !3
}

/// A cursor over bytes that never reads past the end: every read returns
/// [`WireError::Truncated`] instead of panicking.
#[derive(Debug, Clone)]
pub(crate) struct Reader<'a> {
    buf: &'a [u8],
    what: &'static str,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(buf: &'a [u8], what: &'static str) -> Self {
        Self { buf, what }
    }

    pub(crate) fn remaining(&self) -> usize {
        self.buf.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    pub(crate) fn bytes(&mut self, n: usize) -> Result<&'a [u8], WireError> {
        if n > self.buf.len() {
            return Err(WireError::Truncated {
                what: self.what,
                needed: n,
                available: self.buf.len(),
            });
        }
        let (head, tail) = self.buf.split_at(n);
        self.buf = tail;
        Ok(head)
    }

    pub(crate) fn array<const N: usize>(&mut self) -> Result<[u8; N], WireError> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.bytes(N)?);
        Ok(out)
    }

    pub(crate) fn u16(&mut self) -> Result<u16, WireError> {
        Ok(u16::from_be_bytes(self.array()?))
    }

    pub(crate) fn u32(&mut self) -> Result<u32, WireError> {
        Ok(u32::from_be_bytes(self.array()?))
    }

    /// Everything not yet read.
    pub(crate) fn rest(&mut self) -> &'a [u8] {
        std::mem::take(&mut self.buf)
    }

    /// Fails unless every byte was consumed; `expected` says what the layout is.
    pub(crate) fn finish(&self, total: usize, expected: &'static str) -> Result<(), WireError> {
        if self.buf.is_empty() {
            Ok(())
        } else {
            Err(WireError::InvalidLength {
                what: self.what,
                len: total,
                expected,
            })
        }
    }
}

pub(crate) fn put_u16(out: &mut Vec<u8>, v: u16) {
    out.extend_from_slice(&v.to_be_bytes());
}

pub(crate) fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_be_bytes());
}

/// Appends zero bytes until `out.len()` is a multiple of 4 counted from `start`.
pub(crate) fn pad_from(out: &mut Vec<u8>, start: usize) {
    let len = out.len() - start;
    out.resize(start + padded(len), 0);
}

/// Checks that a length fits the 16-bit length field of a chunk, parameter or cause.
pub(crate) fn len16(what: &'static str, len: usize) -> Result<u16, WireError> {
    u16::try_from(len).map_err(|_| WireError::TooLong { what, len })
}
