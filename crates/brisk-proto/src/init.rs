//! INIT and INIT ACK (RFC 9260 5.1): the ones we build, with the state cookie
//! (5.1.3), and the checks on the peer's (3.3.2, 3.3.3). A leaf: the endpoint
//! answers an INIT without state (5.1 B) and the association answers one for
//! itself (5.2.1, 5.2.2) with the same code.

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use rand::RngCore;

use crate::config::Config;
use crate::cookie::{CookieContents, CookieSealer, PeerAddresses};
use crate::time::Time;
use crate::wire::Tlv;
use crate::wire::cause::ErrorCause;
use crate::wire::chunk::{Abort, Chunk, Init, InitAck, InitChunk};
use crate::wire::param::Param;

/// Draws a verification tag: random, never zero (RFC 9260 5.3.1), and none
/// that `in_use` says another association of the endpoint already has.
pub(crate) fn new_tag(rng: &mut dyn RngCore, in_use: &dyn Fn(u32) -> bool) -> u32 {
    loop {
        let tag = rng.next_u32();
        if tag != 0 && !in_use(tag) {
            return tag;
        }
    }
}

/// Why an INIT or INIT ACK cannot start an association.
pub(crate) enum InitProblem {
    /// 3.3.2: an Initiate Tag of 0: discard silently (an INIT ACK's destroys
    /// the TCB, 3.3.3).
    ZeroTag,
    /// 3.3.2, 3.3.3, 5.1: an invalid value or parameter: ABORT with this
    /// cause; the text says what was wrong.
    Abort(ErrorCause<'static>, &'static str),
}

/// RFC 9260 3.3.2, 3.3.3: the smallest a_rwnd an INIT or INIT ACK may carry.
pub(crate) const MIN_A_RWND: u32 = 1500;

/// How an INIT that cannot start an association is answered (3.3.2): `Ok`
/// when it can; `Err(None)` to discard it silently; `Err(Some(abort))` to send
/// back that ABORT under the INIT's Initiate Tag.
pub(crate) fn refusal(init: &Init<'_>) -> Result<(), Option<Chunk<'static>>> {
    match check_init(init) {
        Ok(()) => Ok(()),
        Err(InitProblem::ZeroTag) => Err(None),
        Err(InitProblem::Abort(cause, _)) => Err(Some(Chunk::Abort(Abort {
            reflected_tag: false,
            causes: vec![cause],
        }))),
    }
}

/// Checks the fixed fields of an INIT or INIT ACK, and that it lists no
/// host name.
pub(crate) fn check_init<const ACK: bool>(init: &InitChunk<'_, ACK>) -> Result<(), InitProblem> {
    if init.initiate_tag == 0 {
        return Err(InitProblem::ZeroTag);
    }
    if init.outbound_streams == 0 || init.inbound_streams == 0 {
        return Err(InitProblem::Abort(
            ErrorCause::InvalidMandatoryParameter,
            "zero streams",
        ));
    }
    // 3.3.2, 3.3.3: a_rwnd below 1500: discard, SHOULD answer with ABORT.
    if init.a_rwnd < MIN_A_RWND {
        return Err(InitProblem::Abort(
            ErrorCause::InvalidMandatoryParameter,
            "a_rwnd below 1500",
        ));
    }
    // 3.3.2.1 (11), 5.1.2 B: a Host Name Address MUST be answered with ABORT;
    // Unresolvable Address carries the whole parameter (3.3.10.5).
    if let Some(p) = init
        .params
        .iter()
        .find(|p| matches!(p, Param::HostNameAddress(_)))
    {
        let mut raw = Vec::with_capacity(4 + p.value_len());
        if p.encode(&mut raw).is_err() {
            raw.clear();
        }
        return Err(InitProblem::Abort(
            ErrorCause::UnresolvableAddress(raw.into()),
            "a Host Name Address",
        ));
    }
    Ok(())
}

/// RFC 9260 3.2.1: walks the parameters of an INIT or INIT ACK and returns the
/// unknown ones the sender asked to have reported, stopping where a parameter's
/// action says to stop.
pub(crate) fn unrecognized_to_report(params: &[Param<'_>]) -> Vec<Vec<u8>> {
    let mut reports = Vec::new();
    for p in params {
        let Some(action) = p.action() else { continue };
        if action.reports() {
            let mut raw = Vec::with_capacity(4 + p.value_len());
            if p.encode(&mut raw).is_ok() {
                reports.push(raw);
            }
        }
        if !action.continues() {
            break;
        }
    }
    reports
}

/// Everything an INIT ACK is made from.
pub(crate) struct InitAckInputs<'i> {
    pub cfg: &'i Config,
    /// Our IP addresses (listed when two or more: `address_params`).
    pub addresses: &'i [IpAddr],
    pub init: &'i Init<'i>,
    pub from: SocketAddr,
    pub local_port: u16,
    pub peer_port: u16,
    pub local_tag: u32,
    pub local_initial_tsn: u32,
    pub local_tie_tag: u32,
    pub peer_tie_tag: u32,
}

/// Builds an INIT ACK with a sealed state cookie (5.1.3), reporting unknown
/// parameters that asked to be reported (3.3.3).
pub(crate) fn build_init_ack(
    sealer: &CookieSealer,
    now: Time,
    i: &InitAckInputs<'_>,
) -> InitAck<'static> {
    // 5.1.3, 5.2.6: honour a Cookie Preservative, up to one more cookie life.
    let preserve = i
        .init
        .params
        .iter()
        .find_map(|p| match p {
            Param::CookiePreservative { increment_ms } => {
                Some(Duration::from_millis(u64::from(*increment_ms)))
            }
            _ => None,
        })
        .unwrap_or_default()
        .min(i.cfg.valid_cookie_life);
    let contents = CookieContents {
        peer_addr: i.from,
        local_port: i.local_port,
        peer_port: i.peer_port,
        created: now,
        lifetime: i.cfg.valid_cookie_life + preserve,
        local_tag: i.local_tag,
        local_initial_tsn: i.local_initial_tsn,
        local_outbound_streams: i.cfg.outbound_streams,
        local_max_inbound_streams: i.cfg.max_inbound_streams,
        local_a_rwnd: i.cfg.receive_buffer,
        peer_tag: i.init.initiate_tag,
        peer_initial_tsn: i.init.initial_tsn,
        peer_outbound_streams: i.init.outbound_streams,
        peer_inbound_streams: i.init.inbound_streams,
        peer_a_rwnd: i.init.a_rwnd,
        local_tie_tag: i.local_tie_tag,
        peer_tie_tag: i.peer_tie_tag,
        peer_pktdrop: i.init.supports(crate::wire::chunk::types::PKTDROP),
        peer_pr_sctp: offers_pr_sctp(i.init),
        peer_reconfig: i.init.supports(crate::wire::chunk::types::RECONFIG),
        peer_idata: offers_idata(i.init),
        peer_addrs: PeerAddresses::from_slice(&listed_addresses(&i.init.params)),
    };
    let mut params = vec![Param::StateCookie(sealer.seal(&contents).into())];
    // 3.3.3: each reported parameter is copied whole; with its padding, so
    // that it ends on a 4-byte boundary even as the last parameter (Wireshark
    // flags an unpadded copy there as malformed).
    params.extend(
        unrecognized_to_report(&i.init.params)
            .into_iter()
            .map(|mut raw| {
                raw.resize(crate::wire::padded(raw.len()), 0);
                Param::UnrecognizedParameter(raw.into())
            }),
    );
    params.extend(address_params(i.addresses));
    params.extend(extension_params(i.cfg));
    InitAck {
        initiate_tag: i.local_tag,
        a_rwnd: i.cfg.receive_buffer,
        // 3.3.3: no more outbound streams than the INIT's MIS.
        outbound_streams: i.cfg.outbound_streams.min(i.init.inbound_streams),
        inbound_streams: i.cfg.max_inbound_streams,
        initial_tsn: i.local_initial_tsn,
        params,
    }
}

/// The parameters that offer our extensions, each only when configured:
/// Forward-TSN-Supported (RFC 3758 3.1) for partial reliability, and RFC
/// 5061 4.2.7's Supported Extensions listing FORWARD TSN, PKTDROP, RE-CONFIG
/// (RFC 6525 3.1), and I-DATA with (under partial reliability) I-FORWARD-TSN
/// (RFC 8260 2.2).
pub(crate) fn extension_params(cfg: &Config) -> Vec<Param<'static>> {
    use crate::wire::chunk::types::{FORWARD_TSN, IDATA, IFORWARD_TSN, PKTDROP, RECONFIG};
    let mut params = Vec::new();
    if cfg.partial_reliability {
        params.push(Param::ForwardTsnSupported);
    }
    let listed: Vec<u8> = [
        (cfg.partial_reliability, FORWARD_TSN),
        (cfg.pktdrop, PKTDROP),
        // RFC 6525 3.1 (RFC 5061 4.2.7): RE-CONFIG is offered by listing it.
        (cfg.stream_reconfig, RECONFIG),
        (cfg.message_interleaving, IDATA),
        (
            cfg.message_interleaving && cfg.partial_reliability,
            IFORWARD_TSN,
        ),
    ]
    .into_iter()
    .filter_map(|(on, typ)| on.then_some(typ))
    .collect();
    if !listed.is_empty() {
        params.push(Param::SupportedExtensions(listed));
    }
    params
}

/// RFC 3758 3.1: the peer's INIT or INIT ACK offers partial reliability,
/// by Forward-TSN-Supported or by listing FORWARD TSN (RFC 5061 4.2.7).
pub(crate) fn offers_pr_sctp<const ACK: bool>(init: &InitChunk<'_, ACK>) -> bool {
    init.params
        .iter()
        .any(|p| matches!(p, Param::ForwardTsnSupported))
        || init.supports(crate::wire::chunk::types::FORWARD_TSN)
}

/// RFC 8260 2.2: the peer's INIT or INIT ACK lists I-DATA in its Supported
/// Extensions, so that both ends send I-DATA if we list it too.
pub(crate) fn offers_idata<const ACK: bool>(init: &InitChunk<'_, ACK>) -> bool {
    init.supports(crate::wire::chunk::types::IDATA)
}

/// RFC 9260 5.1.2: a multi-homed endpoint lists every address it may be
/// reached at. A single-homed one lists none (the peer takes the packet's
/// source address): pion drops INITs that carry address parameters, and
/// the single-homed handshake stays as it was.
pub(crate) fn address_params(addresses: &[IpAddr]) -> Vec<Param<'static>> {
    if addresses.len() < 2 {
        return Vec::new();
    }
    addresses
        .iter()
        .map(|ip| match ip.to_canonical() {
            IpAddr::V4(v4) => Param::Ipv4Address(v4),
            IpAddr::V6(v6) => Param::Ipv6Address(v6),
        })
        .collect()
}

/// The addresses an INIT or INIT ACK lists (5.1.2), in order.
pub(crate) fn listed_addresses(params: &[Param<'_>]) -> Vec<IpAddr> {
    params
        .iter()
        .filter_map(|p| match p {
            Param::Ipv4Address(v4) => Some(IpAddr::V4(*v4)),
            Param::Ipv6Address(v6) => Some(IpAddr::V6(*v6)),
            _ => None,
        })
        .collect()
}

/// Our INIT (5.1 A): address parameters only when multi-homed
/// (`address_params`), and Supported Extensions only when an extension is
/// enabled.
pub(crate) fn build_init(
    cfg: &Config,
    addresses: &[IpAddr],
    local_tag: u32,
    initial_tsn: u32,
    preserve_ms: Option<u32>,
) -> Init<'static> {
    let mut params: Vec<Param<'static>> = address_params(addresses);
    params.extend(extension_params(cfg));
    if let Some(increment_ms) = preserve_ms {
        params.push(Param::CookiePreservative { increment_ms });
    }
    Init {
        initiate_tag: local_tag,
        a_rwnd: cfg.receive_buffer,
        outbound_streams: cfg.outbound_streams,
        inbound_streams: cfg.max_inbound_streams,
        initial_tsn,
        params,
    }
}
