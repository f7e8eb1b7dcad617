//! Type-length-value framing shared by parameters (RFC 9260 3.2.1), error causes
//! (RFC 9260 3.3.10) and RE-CONFIG parameters (RFC 6525 4): a 16-bit type, a
//! 16-bit length that counts the 4-byte header and the value but not the padding,
//! then zero padding to 4 bytes.

use super::buf::{len16, padded, put_u16};
use super::{MAX_TLVS_PER_CHUNK, WireError};

/// A value carried as one TLV.
pub trait Tlv<'a>: Sized {
    /// Names the kind of TLV in errors, e.g. `"parameter"`.
    const WHAT: &'static str;
    /// The 16-bit type (or cause code).
    fn tlv_type(&self) -> u16;
    /// The length of the value, without the 4-byte header and without padding.
    fn value_len(&self) -> usize;
    /// Appends the value, without padding.
    fn encode_value(&self, out: &mut Vec<u8>) -> Result<(), WireError>;
    /// Decodes a value of type `typ`. Unknown types must be kept, not rejected.
    fn decode(typ: u16, value: &'a [u8]) -> Result<Self, WireError>;

    /// Appends the whole TLV (header and value) without trailing padding.
    fn encode(&self, out: &mut Vec<u8>) -> Result<(), WireError> {
        let start = out.len();
        put_u16(out, self.tlv_type());
        put_u16(out, 0);
        self.encode_value(out)?;
        let len = len16(Self::WHAT, out.len() - start)?;
        out[start + 2..start + 4].copy_from_slice(&len.to_be_bytes());
        Ok(())
    }
}

/// One raw TLV: its type and value, padding stripped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RawTlv<'a> {
    pub(crate) typ: u16,
    pub(crate) value: &'a [u8],
}

/// Iterates over the TLVs in `buf`, stopping at the first error.
///
/// The final TLV's padding may be absent: RFC 9260 3.2 asks receivers to accept
/// a chunk whether or not the last padding is counted in the chunk length.
pub(crate) struct TlvIter<'a> {
    buf: &'a [u8],
    what: &'static str,
    count: usize,
    failed: bool,
}

impl<'a> TlvIter<'a> {
    pub(crate) fn new(buf: &'a [u8], what: &'static str) -> Self {
        Self {
            buf,
            what,
            count: 0,
            failed: false,
        }
    }

    fn fail(&mut self, e: WireError) -> Option<Result<RawTlv<'a>, WireError>> {
        self.failed = true;
        Some(Err(e))
    }
}

impl<'a> Iterator for TlvIter<'a> {
    type Item = Result<RawTlv<'a>, WireError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.buf.is_empty() {
            return None;
        }
        if self.count == MAX_TLVS_PER_CHUNK {
            return self.fail(WireError::TooManyTlvs {
                what: self.what,
                limit: MAX_TLVS_PER_CHUNK,
            });
        }
        let [t0, t1, l0, l1, ..] = *self.buf else {
            let available = self.buf.len();
            return self.fail(WireError::Truncated {
                what: self.what,
                needed: 4,
                available,
            });
        };
        let typ = u16::from_be_bytes([t0, t1]);
        let len = usize::from(u16::from_be_bytes([l0, l1]));
        if len < 4 {
            return self.fail(WireError::InvalidLength {
                what: self.what,
                len,
                expected: "at least 4, the TLV header",
            });
        }
        let Some(value) = self.buf.get(4..len) else {
            let available = self.buf.len();
            return self.fail(WireError::Truncated {
                what: self.what,
                needed: len,
                available,
            });
        };
        let next = padded(len).min(self.buf.len());
        self.buf = &self.buf[next..];
        self.count += 1;
        Some(Ok(RawTlv { typ, value }))
    }
}

/// Decodes every TLV in `buf` as a `T`.
pub(crate) fn decode_list<'a, T: Tlv<'a>>(
    buf: &'a [u8],
    what: &'static str,
) -> Result<Vec<T>, WireError> {
    TlvIter::new(buf, what)
        .map(|raw| raw.and_then(|raw| T::decode(raw.typ, raw.value)))
        .collect()
}

/// The bytes `items` take when encoded back to back: every TLV padded except the
/// last (RFC 9260 3.2: the chunk length counts inner padding but not the final one).
pub(crate) fn list_len<'a, T: Tlv<'a>>(items: &[T]) -> usize {
    let padded_sum: usize = items.iter().map(|t| padded(4 + t.value_len())).sum();
    match items.last() {
        Some(last) => padded_sum - (padded(4 + last.value_len()) - (4 + last.value_len())),
        None => 0,
    }
}

/// Appends `items` back to back, padding between them but not after the last.
pub(crate) fn encode_list<'a, T: Tlv<'a>>(items: &[T], out: &mut Vec<u8>) -> Result<(), WireError> {
    let mut pending_pad = 0;
    for item in items {
        out.resize(out.len() + pending_pad, 0);
        let start = out.len();
        item.encode(out)?;
        let len = out.len() - start;
        pending_pad = padded(len) - len;
    }
    Ok(())
}
