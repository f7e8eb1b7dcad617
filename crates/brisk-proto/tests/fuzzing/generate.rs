//! Structurally generated chunks and packets, built with the `brisk_proto::wire`
//! encoders so that they decode and reach the association's rules. Their
//! fields are aimed at the association they are sent to: TSNs near the ones in
//! use, the verification tags on the wire, the cookie and heartbeat info seen.
//!
//! Every DATA and I-DATA payload is made of [`INJECTED`] bytes only, so a
//! message the application receives that holds such a byte is known to carry
//! injected data (genuine messages never contain it).

use std::borrow::Cow;
use std::net::{Ipv4Addr, Ipv6Addr};

use brisk_proto::wire::chunk::idata::PpidOrFsn;
use brisk_proto::wire::chunk::{
    Abort, CookieAck, CookieEcho, Data, DataFlags, ForwardTsn, ForwardTsnStream, GapBlock,
    HeartbeatChunk, IData, IForwardTsn, IForwardTsnStream, InitChunk, OperationError, PktDrop,
    PktDropFlags, ReConfig, ReconfigParam, ReconfigResult, Sack, Shutdown, ShutdownAck,
    ShutdownComplete, UnknownChunk, types,
};
use brisk_proto::wire::{Chunk, CommonHeader, ErrorCause, PacketWriter, Param};

use super::source::Dice;

/// The byte injected DATA payloads are made of; genuine payloads never hold it.
pub const INJECTED: u8 = 0xFF;

/// What the generator knows about the association a packet is aimed at. The
/// packet pretends to come from the target's peer.
#[derive(Debug, Clone, Default)]
pub struct Aim {
    /// The verification tag the target expects (its own tag).
    pub tag: u32,
    /// The tag the target puts on its packets (the peer's tag), which a T bit reflects.
    pub peer_tag: u32,
    /// The next TSN the peer would send to the target.
    pub peer_next_tsn: u32,
    /// The next TSN the target would send, what a SACK to it acknowledges.
    pub own_next_tsn: u32,
    /// The last cumulative TSN ack the peer sent the target.
    pub cum_ack: u32,
    /// Streams in use.
    pub streams: u16,
    /// A state cookie seen on the wire.
    pub cookie: Option<Vec<u8>>,
    /// A heartbeat info the target sent.
    pub hb_info: Option<Vec<u8>>,
    /// A packet the target sent, for PKTDROP to report.
    pub own_packet: Option<Vec<u8>>,
    pub src_port: u16,
    pub dst_port: u16,
}

/// Chunk kinds with their weights: the association-killing ones are rare so
/// that most cases keep an association to fuzz.
const KINDS: &[(u8, u32)] = &[
    (types::DATA, 24),
    (types::SACK, 24),
    (types::HEARTBEAT, 6),
    (types::HEARTBEAT_ACK, 6),
    (types::ERROR, 5),
    (types::FORWARD_TSN, 5),
    (types::IFORWARD_TSN, 3),
    (types::IDATA, 5),
    (types::RECONFIG, 4),
    (types::PKTDROP, 7),
    (0xFE, 6), // unknown types, whatever their top bits say
    (types::INIT, 4),
    (types::INIT_ACK, 3),
    (types::COOKIE_ECHO, 4),
    (types::COOKIE_ACK, 3),
    (types::SHUTDOWN, 1),
    (types::SHUTDOWN_ACK, 1),
    (types::SHUTDOWN_COMPLETE, 1),
    (types::ABORT, 1),
];

fn injected_payload(d: &mut Dice<'_>) -> Cow<'static, [u8]> {
    let len = match d.below(8) {
        0..=4 => d.range_usize(1, 64),
        5 | 6 => d.range_usize(1, 1500),
        _ => d.range_usize(1, 9000),
    };
    Cow::Owned(vec![INJECTED; len])
}

fn small_bytes(d: &mut Dice<'_>, max: usize) -> Cow<'static, [u8]> {
    let n = d.range_usize(0, max);
    Cow::Owned(d.bytes(n))
}

fn stream(d: &mut Dice<'_>, aim: &Aim) -> u16 {
    if d.chance(24) {
        d.u16()
    } else {
        d.below(u32::from(aim.streams.max(1)) + 2) as u16
    }
}

fn data_flags(d: &mut Dice<'_>) -> DataFlags {
    if d.chance(160) {
        let mut f = DataFlags::UNFRAGMENTED;
        f.unordered = d.chance(64);
        f.immediate = d.chance(32);
        f
    } else {
        DataFlags::from_bits(d.byte())
    }
}

pub fn param(d: &mut Dice<'_>, aim: &Aim) -> Param<'static> {
    match d.below(13) {
        0 => Param::HeartbeatInfo(small_bytes(d, 48)),
        1 => Param::Ipv4Address(Ipv4Addr::from(d.u32())),
        2 => Param::Ipv6Address(Ipv6Addr::from(
            u128::from(d.u64()) << 64 | u128::from(d.u64()),
        )),
        3 => Param::StateCookie(match &aim.cookie {
            Some(c) if d.bool() => Cow::Owned(c.clone()),
            _ => small_bytes(d, 200),
        }),
        4 => Param::UnrecognizedParameter(small_bytes(d, 16)),
        5 => Param::CookiePreservative {
            increment_ms: d.u32(),
        },
        6 => Param::HostNameAddress(small_bytes(d, 16)),
        7 => Param::SupportedAddressTypes((0..d.below(4)).map(|_| d.u16()).collect()),
        8 => Param::ZeroChecksumAcceptable { edmid: d.u32() },
        9 => Param::SupportedExtensions((0..d.below(6)).map(|_| d.byte()).collect()),
        10 => Param::ForwardTsnSupported,
        _ => {
            let typ = d.u16();
            if Param::is_known_type(typ) {
                Param::ForwardTsnSupported
            } else {
                Param::Unknown {
                    typ,
                    value: small_bytes(d, 16),
                }
            }
        }
    }
}

pub fn cause(d: &mut Dice<'_>) -> ErrorCause<'static> {
    match d.below(15) {
        0 => ErrorCause::InvalidStreamIdentifier { stream_id: d.u16() },
        1 => ErrorCause::MissingMandatoryParameter {
            types: (0..d.below(4)).map(|_| d.u16()).collect(),
        },
        2 => ErrorCause::StaleCookie {
            staleness_us: d.u32(),
        },
        3 => ErrorCause::OutOfResource,
        4 => ErrorCause::UnresolvableAddress(small_bytes(d, 12)),
        5 => ErrorCause::UnrecognizedChunkType(small_bytes(d, 12)),
        6 => ErrorCause::InvalidMandatoryParameter,
        7 => ErrorCause::UnrecognizedParameters(small_bytes(d, 12)),
        8 => ErrorCause::NoUserData { tsn: d.u32() },
        9 => ErrorCause::CookieReceivedWhileShuttingDown,
        10 => ErrorCause::RestartWithNewAddresses(small_bytes(d, 12)),
        11 => ErrorCause::UserInitiatedAbort(small_bytes(d, 12)),
        12 => ErrorCause::ProtocolViolation(small_bytes(d, 12)),
        13 => ErrorCause::UnsupportedHmacIdentifier { hmac_id: d.u16() },
        _ => {
            let code = d.u16();
            if ErrorCause::is_known_code(code) {
                ErrorCause::OutOfResource
            } else {
                ErrorCause::Unknown {
                    code,
                    value: small_bytes(d, 12),
                }
            }
        }
    }
}

fn reconfig_param(d: &mut Dice<'_>, aim: &Aim) -> ReconfigParam<'static> {
    let streams = |d: &mut Dice<'_>| (0..d.below(5)).map(|_| stream(d, aim)).collect();
    match d.below(7) {
        0 => ReconfigParam::OutgoingSsnReset {
            request_seq: d.u32(),
            response_seq: d.u32(),
            last_tsn: d.near(aim.peer_next_tsn),
            streams: streams(d),
        },
        1 => ReconfigParam::IncomingSsnReset {
            request_seq: d.u32(),
            streams: streams(d),
        },
        2 => ReconfigParam::SsnTsnReset {
            request_seq: d.u32(),
        },
        3 => ReconfigParam::Response {
            response_seq: d.u32(),
            result: ReconfigResult::from_code(d.below(9)),
            next_tsns: d.bool().then(|| (d.u32(), d.u32())),
        },
        4 => ReconfigParam::AddOutgoingStreams {
            request_seq: d.u32(),
            new_streams: d.u16(),
        },
        5 => ReconfigParam::AddIncomingStreams {
            request_seq: d.u32(),
            new_streams: d.u16(),
        },
        _ => {
            let typ = d.u16();
            if ReconfigParam::is_known_type(typ) {
                ReconfigParam::SsnTsnReset { request_seq: 0 }
            } else {
                ReconfigParam::Unknown {
                    typ,
                    value: small_bytes(d, 12),
                }
            }
        }
    }
}

fn init_chunk<const ACK: bool>(d: &mut Dice<'_>, aim: &Aim) -> InitChunk<'static, ACK> {
    let mut params: Vec<Param<'static>> = (0..d.below(5)).map(|_| param(d, aim)).collect();
    if ACK && d.chance(200) {
        let cookie = match &aim.cookie {
            Some(c) if d.bool() => Cow::Owned(c.clone()),
            _ => small_bytes(d, 300),
        };
        let at = d.index(params.len() + 1);
        params.insert(at, Param::StateCookie(cookie));
    }
    let (os, is) = (d.u16(), d.u16());
    InitChunk {
        initiate_tag: match d.below(4) {
            0 => 0,
            1 => aim.peer_tag,
            _ => d.u32(),
        },
        a_rwnd: *d.pick(&[0, 1, 1500, 65_535, 1 << 20, u32::MAX]),
        outbound_streams: *d.pick(&[0, 1, 16, u16::MAX, os]),
        inbound_streams: *d.pick(&[0, 1, 16, u16::MAX, is]),
        initial_tsn: d.near(aim.peer_next_tsn),
        params,
    }
}

/// A TSN for injected DATA: mostly one the peer already used (a duplicate, or
/// one that fills a hole), since DATA ahead of the peer's own TSNs gets
/// acknowledged to the peer, which then aborts (a TSN it never sent).
fn data_tsn(d: &mut Dice<'_>, aim: &Aim) -> u32 {
    if d.chance(192) {
        aim.peer_next_tsn.wrapping_sub(d.range(1, 24))
    } else {
        d.near(aim.peer_next_tsn)
    }
}

/// A cumulative TSN ack for the target's data: mostly between the last one
/// and the last TSN it sent (acknowledging a TSN never sent aborts, which ends
/// the fuzzing of that association), sometimes anything near.
fn plausible_ack(d: &mut Dice<'_>, aim: &Aim) -> u32 {
    let last_sent = aim.own_next_tsn.wrapping_sub(1);
    let span = last_sent.wrapping_sub(aim.cum_ack);
    if span < 1 << 20 && d.chance(216) {
        aim.cum_ack
            .wrapping_sub(d.below(4))
            .wrapping_add(d.below(span + 1).min(span))
    } else {
        d.near(last_sent)
    }
}

/// Gap blocks within what the target sent beyond its last cumulative ack.
fn plausible_gaps(d: &mut Dice<'_>, aim: &Aim) -> Vec<GapBlock> {
    let span = aim.own_next_tsn.wrapping_sub(1).wrapping_sub(aim.cum_ack);
    let span = u16::try_from(span).unwrap_or(u16::MAX);
    let mut out = Vec::new();
    let mut start = 2u16;
    while start <= span && out.len() < 4 && d.chance(160) {
        let s = start + d.below(u32::from(span - start) + 1).min(3) as u16;
        let e = s + d.below(u32::from(span - s) + 1).min(4) as u16;
        out.push(GapBlock { start: s, end: e });
        start = e.saturating_add(2);
    }
    out
}

fn gap_blocks(d: &mut Dice<'_>) -> Vec<GapBlock> {
    let count = match d.below(16) {
        0..=11 => d.below(5) as usize,
        12..=14 => d.range_usize(5, 40),
        _ => d.range_usize(40, 400),
    };
    let mut start = 1u16;
    (0..count)
        .map(|_| {
            if d.chance(200) {
                // Plausible: ascending, non-overlapping.
                let s = start.wrapping_add(d.range(0, 6) as u16);
                let e = s.wrapping_add(d.range(0, 8) as u16);
                start = e.wrapping_add(2);
                GapBlock { start: s, end: e }
            } else {
                GapBlock {
                    start: d.near16(start),
                    end: d.near16(start),
                }
            }
        })
        .collect()
}

/// One chunk of the given type, aimed at `aim`.
pub fn chunk_of(d: &mut Dice<'_>, aim: &Aim, typ: u8) -> Chunk<'static> {
    match typ {
        types::DATA => Chunk::Data(Data {
            flags: data_flags(d),
            tsn: data_tsn(d, aim),
            stream_id: stream(d, aim),
            ssn: d.near16(0),
            ppid: d.u32(),
            payload: injected_payload(d),
        }),
        types::SACK => {
            let any_rwnd = d.u32();
            Chunk::Sack(Sack {
                cum_tsn_ack: plausible_ack(d, aim),
                a_rwnd: *d.pick(&[0, 1, 1500, 65_535, 1 << 20, u32::MAX, any_rwnd]),
                gap_blocks: if d.chance(200) {
                    plausible_gaps(d, aim)
                } else {
                    gap_blocks(d)
                },
                dup_tsns: (0..d.below(4)).map(|_| d.near(aim.own_next_tsn)).collect(),
            })
        }
        types::INIT => Chunk::Init(init_chunk::<false>(d, aim)),
        types::INIT_ACK => Chunk::InitAck(init_chunk::<true>(d, aim)),
        types::HEARTBEAT => Chunk::Heartbeat(heartbeat(d, aim)),
        types::HEARTBEAT_ACK => Chunk::HeartbeatAck(heartbeat(d, aim)),
        types::ABORT => Chunk::Abort(Abort {
            reflected_tag: d.chance(64),
            causes: (0..d.below(3)).map(|_| cause(d)).collect(),
        }),
        types::SHUTDOWN => Chunk::Shutdown(Shutdown {
            cum_tsn_ack: plausible_ack(d, aim),
        }),
        types::SHUTDOWN_ACK => Chunk::ShutdownAck(ShutdownAck),
        types::ERROR => Chunk::Error(OperationError {
            causes: (0..d.range(1, 3)).map(|_| cause(d)).collect(),
        }),
        types::COOKIE_ECHO => Chunk::CookieEcho(CookieEcho {
            cookie: match &aim.cookie {
                Some(c) if d.chance(200) => {
                    let mut c = c.clone();
                    if !c.is_empty() && d.bool() {
                        let i = d.index(c.len());
                        c[i] ^= 1 << d.below(8);
                    }
                    Cow::Owned(c)
                }
                _ => small_bytes(d, 300),
            },
        }),
        types::COOKIE_ACK => Chunk::CookieAck(CookieAck),
        types::SHUTDOWN_COMPLETE => Chunk::ShutdownComplete(ShutdownComplete {
            reflected_tag: d.chance(64),
        }),
        types::IDATA => {
            let flags = data_flags(d);
            let word = d.near(0);
            Chunk::IData(IData {
                flags,
                tsn: data_tsn(d, aim),
                stream_id: stream(d, aim),
                mid: d.near(0),
                ppid_or_fsn: if flags.beginning {
                    PpidOrFsn::Ppid(word)
                } else {
                    PpidOrFsn::Fsn(word)
                },
                payload: injected_payload(d),
            })
        }
        types::FORWARD_TSN => Chunk::ForwardTsn(ForwardTsn {
            new_cum_tsn: d.near(aim.peer_next_tsn),
            streams: (0..d.below(5))
                .map(|_| ForwardTsnStream {
                    stream_id: stream(d, aim),
                    ssn: d.near16(0),
                })
                .collect(),
        }),
        types::IFORWARD_TSN => Chunk::IForwardTsn(IForwardTsn {
            new_cum_tsn: d.near(aim.peer_next_tsn),
            streams: (0..d.below(5))
                .map(|_| IForwardTsnStream {
                    stream_id: stream(d, aim),
                    unordered: d.bool(),
                    mid: d.near(0),
                })
                .collect(),
        }),
        types::RECONFIG => Chunk::ReConfig(ReConfig {
            params: (0..d.range(1, 2)).map(|_| reconfig_param(d, aim)).collect(),
        }),
        types::PKTDROP => {
            let dropped = match &aim.own_packet {
                Some(p) if d.chance(200) => {
                    let keep = if d.chance(64) {
                        d.range_usize(0, p.len())
                    } else {
                        p.len()
                    };
                    let mut p = p[..keep].to_vec();
                    if !p.is_empty() && d.chance(64) {
                        let i = d.index(p.len());
                        p[i] ^= 1 << d.below(8);
                    }
                    Cow::Owned(p)
                }
                _ => small_bytes(d, 200),
            };
            Chunk::PktDrop(PktDrop {
                flags: PktDropFlags::from_bits(d.byte()),
                bandwidth: d.u32(),
                queue_size: d.u32(),
                truncated_len: d.u16(),
                dropped,
            })
        }
        _ => {
            let mut typ = d.byte();
            if types::name(typ) != UnknownChunk::NAME {
                typ = *d.pick(&[0x3F, 0x7F, 0xBF, 0xFF, 0x0F, 0xC5, 0x85, 0x45]);
            }
            Chunk::Unknown(UnknownChunk::new(typ, d.byte(), small_bytes(d, 40)))
        }
    }
}

fn heartbeat<const ACK: bool>(d: &mut Dice<'_>, aim: &Aim) -> HeartbeatChunk<'static, ACK> {
    let info: Cow<'static, [u8]> = match &aim.hb_info {
        Some(i) if d.chance(160) => {
            let mut i = i.clone();
            if !i.is_empty() && d.bool() {
                let at = d.index(i.len());
                i[at] = i[at].wrapping_add(d.range(1, 255) as u8);
            }
            Cow::Owned(i)
        }
        _ => small_bytes(d, 48),
    };
    let mut params = vec![Param::HeartbeatInfo(info)];
    if d.chance(32) {
        params.insert(d.index(2), param(d, aim));
    }
    if d.chance(16) {
        params.clear();
    }
    HeartbeatChunk { params }
}

/// A chunk of a type chosen by weight.
pub fn chunk(d: &mut Dice<'_>, aim: &Aim) -> Chunk<'static> {
    let weights: Vec<u32> = KINDS.iter().map(|&(_, w)| w).collect();
    let typ = KINDS[d.weighted(&weights)].0;
    chunk_of(d, aim, typ)
}

/// A whole packet of generated chunks, with a correct CRC32c, and the
/// verification tag the target expects most of the time.
pub fn packet(d: &mut Dice<'_>, aim: &Aim) -> Vec<u8> {
    let count = match d.below(16) {
        0..=9 => 1,
        10..=14 => d.range_usize(2, 4),
        _ => d.range_usize(5, 40),
    };
    let chunks: Vec<Chunk<'static>> = (0..count).map(|_| chunk(d, aim)).collect();
    let tag = match d.below(32) {
        0 => 0,
        1 => d.u32(),
        2 => aim.tag ^ (1 << d.below(32)),
        3 => aim.peer_tag,
        _ => match chunks.first() {
            Some(Chunk::Init(_)) => 0,
            Some(Chunk::Abort(Abort {
                reflected_tag: true,
                ..
            }))
            | Some(Chunk::ShutdownComplete(ShutdownComplete {
                reflected_tag: true,
            })) => aim.peer_tag,
            _ => aim.tag,
        },
    };
    let header = CommonHeader {
        src_port: if d.chance(8) { d.u16() } else { aim.src_port },
        dst_port: if d.chance(8) { d.u16() } else { aim.dst_port },
        verification_tag: tag,
        checksum: 0,
    };
    let mut out = Vec::new();
    let mut w = PacketWriter::new(&mut out, &header);
    for c in &chunks {
        // A chunk the encoder refuses (too long) is left out.
        let _ = w.push(c);
    }
    if w.is_empty() {
        let _ = w.push(&Chunk::CookieAck(CookieAck));
    }
    w.finish().expect("a packet with a header seals");
    out
}
