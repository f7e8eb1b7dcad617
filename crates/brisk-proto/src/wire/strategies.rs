//! Proptest strategies that generate valid, owned wire values: parameters,
//! error causes, RE-CONFIG parameters, every chunk type, and whole packets.
//!
//! "Valid" means that the value survives the codec unchanged: encoding it and
//! decoding the bytes gives the same value back. In particular:
//!
//! - `Unknown` parameters, causes, RE-CONFIG parameters and chunks only use
//!   types the codec does not decode into a typed variant (an `Unknown` with a
//!   known type would decode as that type);
//! - HEARTBEAT and HEARTBEAT ACK carry a Heartbeat Info parameter, RE-CONFIG
//!   carries one or two parameters, ERROR at least one cause, and INIT ACK a
//!   State Cookie;
//! - I-DATA carries a PPID exactly when its B flag is set, an FSN otherwise;
//! - a Re-configuration Response's result is in its canonical form
//!   ([`ReconfigResult::from_code`]);
//! - a [`packet()`] bundles 1 to 8 chunks, and INIT, INIT ACK and SHUTDOWN
//!   COMPLETE travel alone (RFC 9260 6.10). Its header's `checksum` holds the
//!   packet's CRC32c, so `Packet::decode(&p.to_bytes()?)? == p`.
//!
//! Sizes stay modest so that tests run fast: byte fields up to 300 bytes, lists
//! up to 8 items, packets of a few kilobytes at most.
//!
//! Compiled for this crate's tests, and for other crates with the `strategies`
//! feature.

use std::borrow::Cow;
use std::net::{Ipv4Addr, Ipv6Addr};

use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::Index;

use super::chunk::idata::PpidOrFsn;
use super::chunk::{
    Abort, CookieAck, CookieEcho, Data, DataFlags, ForwardTsn, ForwardTsnStream, GapBlock,
    Heartbeat, HeartbeatAck, HeartbeatChunk, IData, IForwardTsn, IForwardTsnStream, Init, InitAck,
    InitChunk, OperationError, PktDrop, PktDropFlags, ReConfig, ReconfigParam, ReconfigResult,
    Sack, Shutdown, ShutdownAck, ShutdownComplete, UnknownChunk, types,
};
use super::{Chunk, CommonHeader, ErrorCause, Packet, Param};

/// The most items in a generated list (parameters, causes, gap blocks...).
const MAX_ITEMS: usize = 8;
/// The most chunks in a generated packet.
const MAX_CHUNKS: usize = 8;

/// Owned bytes, 0 to `max` of them.
fn bytes(max: usize) -> impl Strategy<Value = Cow<'static, [u8]>> {
    vec(any::<u8>(), 0..=max).prop_map(Cow::Owned)
}

/// A small opaque field: cookies, heartbeat info, reasons.
fn small_bytes() -> impl Strategy<Value = Cow<'static, [u8]>> {
    bytes(64)
}

/// A user message or a dropped packet.
fn payload() -> impl Strategy<Value = Cow<'static, [u8]>> {
    bytes(300)
}

/// A parameter type the codec keeps as [`Param::Unknown`].
fn unknown_param_type() -> impl Strategy<Value = u16> {
    any::<u16>().prop_filter("a parameter type the codec does not know", |t| {
        !Param::is_known_type(*t)
    })
}

/// Any parameter of an INIT-family or HEARTBEAT-family chunk.
pub fn param() -> impl Strategy<Value = Param<'static>> {
    prop_oneof![
        small_bytes().prop_map(Param::HeartbeatInfo),
        any::<[u8; 4]>().prop_map(|a| Param::Ipv4Address(Ipv4Addr::from(a))),
        any::<[u8; 16]>().prop_map(|a| Param::Ipv6Address(Ipv6Addr::from(a))),
        small_bytes().prop_map(Param::StateCookie),
        small_bytes().prop_map(Param::UnrecognizedParameter),
        any::<u32>().prop_map(|increment_ms| Param::CookiePreservative { increment_ms }),
        small_bytes().prop_map(Param::HostNameAddress),
        vec(any::<u16>(), 0..=MAX_ITEMS).prop_map(Param::SupportedAddressTypes),
        any::<u32>().prop_map(|edmid| Param::ZeroChecksumAcceptable { edmid }),
        vec(any::<u8>(), 0..=MAX_ITEMS).prop_map(Param::SupportedExtensions),
        Just(Param::ForwardTsnSupported),
        (unknown_param_type(), small_bytes())
            .prop_map(|(typ, value)| Param::Unknown { typ, value }),
    ]
}

/// Any error cause of an ABORT or ERROR chunk.
pub fn error_cause() -> impl Strategy<Value = ErrorCause<'static>> {
    let unknown_code = any::<u16>().prop_filter("a cause code the codec does not know", |c| {
        !ErrorCause::is_known_code(*c)
    });
    prop_oneof![
        any::<u16>().prop_map(|stream_id| ErrorCause::InvalidStreamIdentifier { stream_id }),
        vec(any::<u16>(), 0..=MAX_ITEMS)
            .prop_map(|types| ErrorCause::MissingMandatoryParameter { types }),
        any::<u32>().prop_map(|staleness_us| ErrorCause::StaleCookie { staleness_us }),
        Just(ErrorCause::OutOfResource),
        small_bytes().prop_map(ErrorCause::UnresolvableAddress),
        small_bytes().prop_map(ErrorCause::UnrecognizedChunkType),
        Just(ErrorCause::InvalidMandatoryParameter),
        small_bytes().prop_map(ErrorCause::UnrecognizedParameters),
        any::<u32>().prop_map(|tsn| ErrorCause::NoUserData { tsn }),
        Just(ErrorCause::CookieReceivedWhileShuttingDown),
        small_bytes().prop_map(ErrorCause::RestartWithNewAddresses),
        small_bytes().prop_map(ErrorCause::UserInitiatedAbort),
        small_bytes().prop_map(ErrorCause::ProtocolViolation),
        any::<u16>().prop_map(|hmac_id| ErrorCause::UnsupportedHmacIdentifier { hmac_id }),
        (unknown_code, small_bytes()).prop_map(|(code, value)| ErrorCause::Unknown { code, value }),
    ]
}

/// A Re-configuration Response result, defined codes more often than others.
fn reconfig_result() -> impl Strategy<Value = ReconfigResult> {
    prop_oneof![0u32..=7, any::<u32>()].prop_map(ReconfigResult::from_code)
}

/// Any RE-CONFIG parameter (RFC 6525 4).
pub fn reconfig_param() -> impl Strategy<Value = ReconfigParam<'static>> {
    let unknown_type = any::<u16>().prop_filter("a RE-CONFIG type the codec does not know", |t| {
        !ReconfigParam::is_known_type(*t)
    });
    let streams = || vec(any::<u16>(), 0..=MAX_ITEMS);
    prop_oneof![
        (any::<u32>(), any::<u32>(), any::<u32>(), streams()).prop_map(
            |(request_seq, response_seq, last_tsn, streams)| ReconfigParam::OutgoingSsnReset {
                request_seq,
                response_seq,
                last_tsn,
                streams,
            }
        ),
        (any::<u32>(), streams()).prop_map(|(request_seq, streams)| {
            ReconfigParam::IncomingSsnReset {
                request_seq,
                streams,
            }
        }),
        any::<u32>().prop_map(|request_seq| ReconfigParam::SsnTsnReset { request_seq }),
        (
            any::<u32>(),
            reconfig_result(),
            proptest::option::of(any::<(u32, u32)>())
        )
            .prop_map(
                |(response_seq, result, next_tsns)| ReconfigParam::Response {
                    response_seq,
                    result,
                    next_tsns,
                }
            ),
        (any::<u32>(), any::<u16>()).prop_map(|(request_seq, new_streams)| {
            ReconfigParam::AddOutgoingStreams {
                request_seq,
                new_streams,
            }
        }),
        (any::<u32>(), any::<u16>()).prop_map(|(request_seq, new_streams)| {
            ReconfigParam::AddIncomingStreams {
                request_seq,
                new_streams,
            }
        }),
        (unknown_type, small_bytes())
            .prop_map(|(typ, value)| ReconfigParam::Unknown { typ, value }),
    ]
}

/// DATA and I-DATA flags: any combination of I, U, B and E.
fn data_flags() -> impl Strategy<Value = DataFlags> {
    any::<u8>().prop_map(DataFlags::from_bits)
}

/// A DATA chunk (RFC 9260 3.3.1), possibly with an empty payload.
pub fn data() -> impl Strategy<Value = Data<'static>> {
    (
        data_flags(),
        any::<u32>(),
        any::<u16>(),
        any::<u16>(),
        any::<u32>(),
        payload(),
    )
        .prop_map(|(flags, tsn, stream_id, ssn, ppid, payload)| Data {
            flags,
            tsn,
            stream_id,
            ssn,
            ppid,
            payload,
        })
}

/// INIT or INIT ACK with the given parameters.
fn init_chunk<const ACK: bool>(
    params: impl Strategy<Value = Vec<Param<'static>>>,
) -> impl Strategy<Value = InitChunk<'static, ACK>> {
    (
        any::<u32>(),
        any::<u32>(),
        any::<u16>(),
        any::<u16>(),
        any::<u32>(),
        params,
    )
        .prop_map(
            |(initiate_tag, a_rwnd, outbound_streams, inbound_streams, initial_tsn, params)| {
                InitChunk {
                    initiate_tag,
                    a_rwnd,
                    outbound_streams,
                    inbound_streams,
                    initial_tsn,
                    params,
                }
            },
        )
}

/// Inserts `item` into `items` at a position chosen by `at`.
fn insert_at<T>(mut items: Vec<T>, item: T, at: Index) -> Vec<T> {
    let pos = at.index(items.len() + 1);
    items.insert(pos, item);
    items
}

/// An INIT chunk (RFC 9260 3.3.2) with up to 8 parameters of any kind.
pub fn init() -> impl Strategy<Value = Init<'static>> {
    init_chunk(vec(param(), 0..=MAX_ITEMS))
}

/// An INIT ACK chunk (RFC 9260 3.3.3): a State Cookie among up to 7 other parameters.
pub fn init_ack() -> impl Strategy<Value = InitAck<'static>> {
    let params = (small_bytes(), vec(param(), 0..MAX_ITEMS), any::<Index>())
        .prop_map(|(cookie, params, at)| insert_at(params, Param::StateCookie(cookie), at));
    init_chunk(params)
}

/// A SACK chunk (RFC 9260 3.3.4).
pub fn sack() -> impl Strategy<Value = Sack> {
    let gap = any::<(u16, u16)>().prop_map(|(start, end)| GapBlock { start, end });
    (
        any::<u32>(),
        any::<u32>(),
        vec(gap, 0..=MAX_ITEMS),
        vec(any::<u32>(), 0..=MAX_ITEMS),
    )
        .prop_map(|(cum_tsn_ack, a_rwnd, gap_blocks, dup_tsns)| Sack {
            cum_tsn_ack,
            a_rwnd,
            gap_blocks,
            dup_tsns,
        })
}

/// HEARTBEAT or HEARTBEAT ACK: a Heartbeat Info among up to 2 other parameters.
fn heartbeat_chunk<const ACK: bool>() -> impl Strategy<Value = HeartbeatChunk<'static, ACK>> {
    (small_bytes(), vec(param(), 0..=2), any::<Index>()).prop_map(|(info, others, at)| {
        HeartbeatChunk {
            params: insert_at(others, Param::HeartbeatInfo(info), at),
        }
    })
}

/// A HEARTBEAT chunk (RFC 9260 3.3.5).
pub fn heartbeat() -> impl Strategy<Value = Heartbeat<'static>> {
    heartbeat_chunk::<false>()
}

/// A HEARTBEAT ACK chunk (RFC 9260 3.3.6).
pub fn heartbeat_ack() -> impl Strategy<Value = HeartbeatAck<'static>> {
    heartbeat_chunk::<true>()
}

/// An ABORT chunk (RFC 9260 3.3.7) with or without the T bit and up to 8 causes.
pub fn abort() -> impl Strategy<Value = Abort<'static>> {
    (any::<bool>(), vec(error_cause(), 0..=MAX_ITEMS)).prop_map(|(reflected_tag, causes)| Abort {
        reflected_tag,
        causes,
    })
}

/// A SHUTDOWN chunk (RFC 9260 3.3.8).
pub fn shutdown() -> impl Strategy<Value = Shutdown> {
    any::<u32>().prop_map(|cum_tsn_ack| Shutdown { cum_tsn_ack })
}

/// A SHUTDOWN ACK chunk (RFC 9260 3.3.9).
pub fn shutdown_ack() -> impl Strategy<Value = ShutdownAck> {
    Just(ShutdownAck)
}

/// An ERROR chunk (RFC 9260 3.3.10) with 1 to 8 causes.
pub fn error_chunk() -> impl Strategy<Value = OperationError<'static>> {
    vec(error_cause(), 1..=MAX_ITEMS).prop_map(|causes| OperationError { causes })
}

/// A COOKIE ECHO chunk (RFC 9260 3.3.11).
pub fn cookie_echo() -> impl Strategy<Value = CookieEcho<'static>> {
    small_bytes().prop_map(|cookie| CookieEcho { cookie })
}

/// A COOKIE ACK chunk (RFC 9260 3.3.12).
pub fn cookie_ack() -> impl Strategy<Value = CookieAck> {
    Just(CookieAck)
}

/// A SHUTDOWN COMPLETE chunk (RFC 9260 3.3.13) with or without the T bit.
pub fn shutdown_complete() -> impl Strategy<Value = ShutdownComplete> {
    any::<bool>().prop_map(|reflected_tag| ShutdownComplete { reflected_tag })
}

/// An I-DATA chunk (RFC 8260 2.1): a PPID when B is set, an FSN otherwise.
pub fn idata() -> impl Strategy<Value = IData<'static>> {
    (
        data_flags(),
        any::<u32>(),
        any::<u16>(),
        any::<u32>(),
        any::<u32>(),
        payload(),
    )
        .prop_map(|(flags, tsn, stream_id, mid, word, payload)| IData {
            flags,
            tsn,
            stream_id,
            mid,
            ppid_or_fsn: if flags.beginning {
                PpidOrFsn::Ppid(word)
            } else {
                PpidOrFsn::Fsn(word)
            },
            payload,
        })
}

/// A FORWARD TSN chunk (RFC 3758 3.2).
pub fn forward_tsn() -> impl Strategy<Value = ForwardTsn> {
    let stream =
        any::<(u16, u16)>().prop_map(|(stream_id, ssn)| ForwardTsnStream { stream_id, ssn });
    (any::<u32>(), vec(stream, 0..=MAX_ITEMS)).prop_map(|(new_cum_tsn, streams)| ForwardTsn {
        new_cum_tsn,
        streams,
    })
}

/// An I-FORWARD-TSN chunk (RFC 8260 2.3).
pub fn iforward_tsn() -> impl Strategy<Value = IForwardTsn> {
    let stream =
        (any::<u16>(), any::<bool>(), any::<u32>()).prop_map(|(stream_id, unordered, mid)| {
            IForwardTsnStream {
                stream_id,
                unordered,
                mid,
            }
        });
    (any::<u32>(), vec(stream, 0..=MAX_ITEMS)).prop_map(|(new_cum_tsn, streams)| IForwardTsn {
        new_cum_tsn,
        streams,
    })
}

/// A RE-CONFIG chunk (RFC 6525 3.1) with one or two parameters.
pub fn reconfig() -> impl Strategy<Value = ReConfig<'static>> {
    vec(reconfig_param(), 1..=2).prop_map(|params| ReConfig { params })
}

/// A PKTDROP chunk (draft-stewart-sctp-pktdrprep) with any M, B and T flags.
pub fn pktdrop() -> impl Strategy<Value = PktDrop<'static>> {
    (
        any::<u8>().prop_map(PktDropFlags::from_bits),
        any::<u32>(),
        any::<u32>(),
        any::<u16>(),
        payload(),
    )
        .prop_map(
            |(flags, bandwidth, queue_size, truncated_len, dropped)| PktDrop {
                flags,
                bandwidth,
                queue_size,
                truncated_len,
                dropped,
            },
        )
}

/// A chunk of a type the codec does not know, with any flags and value.
pub fn unknown_chunk() -> impl Strategy<Value = UnknownChunk<'static>> {
    let typ = any::<u8>().prop_filter("a chunk type the codec does not know", |t| {
        types::name(*t) == UnknownChunk::NAME
    });
    (typ, any::<u8>(), small_bytes()).prop_map(|(typ, flags, value)| UnknownChunk {
        typ,
        flags,
        value,
    })
}

/// Any chunk that may share a packet with others: all but INIT, INIT ACK and
/// SHUTDOWN COMPLETE (RFC 9260 6.10).
fn bundleable_chunk() -> impl Strategy<Value = Chunk<'static>> {
    prop_oneof![
        data().prop_map(Chunk::from),
        sack().prop_map(Chunk::from),
        heartbeat().prop_map(Chunk::from),
        heartbeat_ack().prop_map(Chunk::from),
        abort().prop_map(Chunk::from),
        shutdown().prop_map(Chunk::from),
        shutdown_ack().prop_map(Chunk::from),
        error_chunk().prop_map(Chunk::from),
        cookie_echo().prop_map(Chunk::from),
        cookie_ack().prop_map(Chunk::from),
        idata().prop_map(Chunk::from),
        forward_tsn().prop_map(Chunk::from),
        iforward_tsn().prop_map(Chunk::from),
        reconfig().prop_map(Chunk::from),
        pktdrop().prop_map(Chunk::from),
        unknown_chunk().prop_map(Chunk::from),
    ]
}

/// A chunk that must be alone in its packet.
fn lone_chunk() -> impl Strategy<Value = Chunk<'static>> {
    prop_oneof![
        init().prop_map(Chunk::from),
        init_ack().prop_map(Chunk::from),
        shutdown_complete().prop_map(Chunk::from),
    ]
}

/// Any chunk, of every type the codec knows and of unknown types.
pub fn chunk() -> impl Strategy<Value = Chunk<'static>> {
    prop_oneof![16 => bundleable_chunk(), 3 => lone_chunk()]
}

/// A valid packet: any ports and verification tag, then either one chunk that
/// must be alone or 1 to 8 chunks that may be bundled. The header's `checksum`
/// is the CRC32c of the encoded packet, so the packet decodes back to itself.
pub fn packet() -> impl Strategy<Value = Packet<'static>> {
    let header =
        any::<(u16, u16, u32)>().prop_map(|(src_port, dst_port, verification_tag)| CommonHeader {
            src_port,
            dst_port,
            verification_tag,
            checksum: 0,
        });
    let chunks = prop_oneof![
        1 => lone_chunk().prop_map(|c| vec![c]),
        6 => vec(bundleable_chunk(), 1..=MAX_CHUNKS),
    ];
    (header, chunks).prop_filter_map("the packet encodes", |(header, chunks)| {
        let mut packet = Packet { header, chunks };
        let bytes = packet.to_bytes().ok()?;
        packet.header.checksum = CommonHeader::decode(&bytes).ok()?.checksum;
        Some(packet)
    })
}
