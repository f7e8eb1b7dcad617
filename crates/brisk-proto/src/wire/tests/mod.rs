//! Tests of the packet codec.
//!
//! - `round_trip`: property tests that every valid value encodes, decodes back to
//!   itself and re-encodes to the same bytes, with the lengths and padding of
//!   RFC 9260 3.2;
//! - `robustness`: random and mutated input never panics the decoder, and what
//!   it accepts re-encodes consistently;
//! - `regressions`: hand-made malformed input, each case with its exact error;
//! - `known_answers`: CRC32c vectors and packets written byte by byte from the
//!   RFC layouts.
//!
//! Property tests run 256 cases each; `BRISK_DEEP=1` raises that to 20 000.

mod known_answers;
mod regressions;
mod robustness;
mod round_trip;

use proptest::test_runner::Config as ProptestConfig;

use super::chunk::{Chunk, ReconfigParam};
use super::{ErrorCause, Param, padded};

/// Cases per property test: 256, or 20 000 when `BRISK_DEEP=1`.
fn cases() -> u32 {
    if std::env::var("BRISK_DEEP").is_ok_and(|v| v == "1") {
        20_000
    } else {
        256
    }
}

/// The proptest configuration every property test here uses.
fn config() -> ProptestConfig {
    ProptestConfig::with_cases(cases())
}

// The expected lengths below are written from the RFC layouts, independently of
// the codec's own `value_len`, so that they can catch a miscount there.

/// The Parameter Length of `p`: header and value, no padding (RFC 9260 3.2.1).
fn param_len(p: &Param<'_>) -> usize {
    match p {
        Param::HeartbeatInfo(v)
        | Param::StateCookie(v)
        | Param::UnrecognizedParameter(v)
        | Param::HostNameAddress(v)
        | Param::Unknown { value: v, .. } => 4 + v.len(),
        Param::Ipv4Address(_) => 8,
        Param::Ipv6Address(_) => 20,
        Param::CookiePreservative { .. } => 8,
        Param::SupportedAddressTypes(t) => 4 + 2 * t.len(),
        Param::ZeroChecksumAcceptable { .. } => 8,
        Param::SupportedExtensions(t) => 4 + t.len(),
        Param::ForwardTsnSupported => 4,
    }
}

/// The Cause Length of `c` (RFC 9260 3.3.10).
fn cause_len(c: &ErrorCause<'_>) -> usize {
    match c {
        ErrorCause::InvalidStreamIdentifier { .. } => 8,
        ErrorCause::MissingMandatoryParameter { types } => 8 + 2 * types.len(),
        ErrorCause::StaleCookie { .. } => 8,
        ErrorCause::OutOfResource => 4,
        ErrorCause::InvalidMandatoryParameter => 4,
        ErrorCause::NoUserData { .. } => 8,
        ErrorCause::CookieReceivedWhileShuttingDown => 4,
        ErrorCause::UnsupportedHmacIdentifier { .. } => 6,
        ErrorCause::UnresolvableAddress(v)
        | ErrorCause::UnrecognizedChunkType(v)
        | ErrorCause::UnrecognizedParameters(v)
        | ErrorCause::RestartWithNewAddresses(v)
        | ErrorCause::UserInitiatedAbort(v)
        | ErrorCause::ProtocolViolation(v)
        | ErrorCause::Unknown { value: v, .. } => 4 + v.len(),
    }
}

/// The Parameter Length of a RE-CONFIG parameter (RFC 6525 4).
fn reconfig_param_len(p: &ReconfigParam<'_>) -> usize {
    match p {
        ReconfigParam::OutgoingSsnReset { streams, .. } => 16 + 2 * streams.len(),
        ReconfigParam::IncomingSsnReset { streams, .. } => 8 + 2 * streams.len(),
        ReconfigParam::SsnTsnReset { .. } => 8,
        ReconfigParam::Response { next_tsns, .. } => {
            if next_tsns.is_some() {
                20
            } else {
                12
            }
        }
        ReconfigParam::AddOutgoingStreams { .. } | ReconfigParam::AddIncomingStreams { .. } => 12,
        ReconfigParam::Unknown { value, .. } => 4 + value.len(),
    }
}

/// Bytes a list of TLVs of these lengths takes inside a chunk: each padded to 4
/// except the last, whose padding is the chunk's (RFC 9260 3.2).
fn tlv_list_len(lens: impl IntoIterator<Item = usize>) -> usize {
    let mut total = 0;
    let mut last = 0;
    for len in lens {
        total += padded(last);
        last = len;
    }
    total + last
}

/// The Chunk Length field `chunk` must encode with: header and value, not the
/// final padding (RFC 9260 3.2).
fn chunk_len(chunk: &Chunk<'_>) -> usize {
    let params = |ps: &[Param<'_>]| tlv_list_len(ps.iter().map(param_len));
    let causes = |cs: &[ErrorCause<'_>]| tlv_list_len(cs.iter().map(cause_len));
    match chunk {
        Chunk::Data(d) => 16 + d.payload.len(),
        Chunk::Init(i) => 20 + params(&i.params),
        Chunk::InitAck(i) => 20 + params(&i.params),
        Chunk::Sack(s) => 16 + 4 * s.gap_blocks.len() + 4 * s.dup_tsns.len(),
        Chunk::Heartbeat(h) => 4 + params(&h.params),
        Chunk::HeartbeatAck(h) => 4 + params(&h.params),
        Chunk::Abort(a) => 4 + causes(&a.causes),
        Chunk::Shutdown(_) => 8,
        Chunk::ShutdownAck(_) | Chunk::CookieAck(_) | Chunk::ShutdownComplete(_) => 4,
        Chunk::Error(e) => 4 + causes(&e.causes),
        Chunk::CookieEcho(c) => 4 + c.cookie.len(),
        Chunk::IData(d) => 20 + d.payload.len(),
        Chunk::ForwardTsn(f) => 8 + 4 * f.streams.len(),
        Chunk::IForwardTsn(f) => 8 + 8 * f.streams.len(),
        Chunk::ReConfig(r) => 4 + tlv_list_len(r.params.iter().map(reconfig_param_len)),
        Chunk::PktDrop(p) => 16 + p.dropped.len(),
        Chunk::Unknown(u) => 4 + u.value.len(),
    }
}

/// A chunk's header and value, padded: `typ`, `flags`, a Chunk Length of
/// 4 + `value.len()`, then `value` and zero padding.
fn chunk_bytes(typ: u8, flags: u8, value: &[u8]) -> Vec<u8> {
    let len = u16::try_from(4 + value.len()).expect("test chunk fits a length field");
    let mut out = vec![typ, flags];
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(value);
    out.resize(padded(out.len()), 0);
    out
}

/// A TLV (parameter, cause, RE-CONFIG parameter) with its true length, padded.
fn tlv_bytes(typ: u16, value: &[u8]) -> Vec<u8> {
    let len = u16::try_from(4 + value.len()).expect("test TLV fits a length field");
    let mut out = typ.to_be_bytes().to_vec();
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(value);
    out.resize(padded(out.len()), 0);
    out
}

/// The common header used by hand-made packets: ports 5000 → 5001, tag 1.
const TEST_HEADER: [u8; 12] = [0x13, 0x88, 0x13, 0x89, 0, 0, 0, 1, 0, 0, 0, 0];

/// [`TEST_HEADER`] followed by `chunks`, with its CRC32c sealed in.
fn sealed_packet(chunks: &[u8]) -> Vec<u8> {
    let mut out = TEST_HEADER.to_vec();
    out.extend_from_slice(chunks);
    super::seal(&mut out).expect("a packet with a header can be sealed");
    out
}
