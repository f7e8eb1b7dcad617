//! The State Cookie (RFC 9260 5.1.3, 5.1.5): everything needed to create the
//! association, MAC'd with HMAC-SHA256 under an endpoint secret, so that a
//! server keeps no state for an INIT until the COOKIE ECHO proves the peer
//! received the INIT ACK.
//!
//! Layout (all big-endian), followed by a 32-byte HMAC-SHA256 over it:
//!
//! ```text
//! version (1) | address family (1) | peer IP (16) | peer UDP port (2)
//! local SCTP port (2) | peer SCTP port (2)
//! created, microseconds (8) | lifetime, microseconds (8)
//! local tag (4) | local initial TSN (4) | local outbound streams (2) | local max inbound (2)
//! local a_rwnd (4)
//! peer tag (4) | peer initial TSN (4) | peer outbound streams (2) | peer inbound streams (2)
//! peer a_rwnd (4)
//! local tie-tag (4) | peer tie-tag (4) | extensions the peer offered (1)
//! [only if the peer listed addresses: count (1) | count x (family (1) | IP (16))]
//! ```
//!
//! A cookie for a peer that listed no addresses is exactly as it was before
//! multi-homing, so the single-homed handshake is unchanged.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::time::Duration;

use hmac::{Hmac, Mac};
use sha2::Sha256;

use crate::time::Time;
use crate::wire::CommonHeader;

const VERSION: u8 = 1;
const BODY_LEN: usize =
    1 + 1 + 16 + 2 + 2 + 2 + 8 + 8 + 4 + 4 + 2 + 2 + 4 + 4 + 4 + 2 + 2 + 4 + 4 + 4 + 1;
/// Extension bit: the peer offered PKTDROP.
const EXT_PKTDROP: u8 = 0x01;
/// Extension bit: the peer offered partial reliability (RFC 3758).
const EXT_PR_SCTP: u8 = 0x02;
/// Extension bit: the peer listed RE-CONFIG (RFC 6525). (0x04 is I-DATA's.)
const EXT_RECONFIG: u8 = 0x08;
/// Extension bit: the peer listed I-DATA (RFC 8260 2.2).
const EXT_IDATA: u8 = 0x04;
const MAC_LEN: usize = 32;
/// Bytes of an encoded cookie whose peer listed no addresses.
pub const COOKIE_LEN: usize = BODY_LEN + MAC_LEN;
/// Bytes of one listed address: its family and the IP (IPv4 mapped).
const ADDR_LEN: usize = 17;

/// The addresses a peer listed in its INIT (RFC 9260 5.1.2), as many as an
/// association keeps besides the one the INIT came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PeerAddresses {
    addrs: [IpAddr; crate::path::MAX_PATHS - 1],
    len: u8,
}

impl Default for PeerAddresses {
    fn default() -> Self {
        Self {
            addrs: [IpAddr::V4(Ipv4Addr::UNSPECIFIED); crate::path::MAX_PATHS - 1],
            len: 0,
        }
    }
}

impl PeerAddresses {
    /// The first addresses of `ips`, as many as fit.
    pub fn from_slice(ips: &[IpAddr]) -> Self {
        let mut out = Self::default();
        for ip in ips.iter().take(out.addrs.len()) {
            out.addrs[usize::from(out.len)] = *ip;
            out.len += 1;
        }
        out
    }

    pub fn as_slice(&self) -> &[IpAddr] {
        &self.addrs[..usize::from(self.len)]
    }
}

/// What the cookie carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CookieContents {
    /// The peer's transport address the INIT came from.
    pub peer_addr: SocketAddr,
    pub local_port: u16,
    pub peer_port: u16,
    pub created: Time,
    pub lifetime: Duration,
    pub local_tag: u32,
    pub local_initial_tsn: u32,
    pub local_outbound_streams: u16,
    pub local_max_inbound_streams: u16,
    pub local_a_rwnd: u32,
    pub peer_tag: u32,
    pub peer_initial_tsn: u32,
    pub peer_outbound_streams: u16,
    pub peer_inbound_streams: u16,
    pub peer_a_rwnd: u32,
    /// Tie-tags (RFC 9260 5.2.2): zero unless a TCB existed.
    pub local_tie_tag: u32,
    pub peer_tie_tag: u32,
    /// The peer listed PKTDROP in its Supported Extensions.
    pub peer_pktdrop: bool,
    /// The peer offered partial reliability (Forward-TSN-Supported, RFC 3758).
    pub peer_pr_sctp: bool,
    /// The peer listed RE-CONFIG in its Supported Extensions (RFC 6525 3.1).
    pub peer_reconfig: bool,
    /// The peer listed I-DATA in its Supported Extensions (RFC 8260 2.2).
    pub peer_idata: bool,
    /// The addresses the peer listed in its INIT (RFC 9260 5.1.2).
    pub peer_addrs: PeerAddresses,
}

impl CookieContents {
    /// RFC 9260 5.1.5 step 3, and the cookie's binding to the peer's transport
    /// address: the packet carries the tag the cookie gave the peer, between
    /// the ports it was issued for, from the address the INIT came from (an
    /// IPv4 address and its IPv4-mapped IPv6 form being the same).
    pub fn addressed_to(&self, header: &CommonHeader, from: SocketAddr) -> bool {
        header.verification_tag == self.local_tag
            && header.dst_port == self.local_port
            && header.src_port == self.peer_port
            && self.peer_addr.port() == from.port()
            && self.peer_addr.ip().to_canonical() == from.ip().to_canonical()
    }
}

/// Why a cookie was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CookieError {
    /// Wrong size or version: not one of ours.
    #[error("malformed state cookie")]
    Malformed,
    /// The MAC does not verify: forged or corrupted (5.1.5 step 2).
    #[error("state cookie MAC does not verify")]
    BadMac,
    /// Authentic but past its lifetime (5.1.5 step 4).
    #[error("state cookie expired {staleness:?} ago")]
    Stale {
        staleness: Duration,
        contents: Box<CookieContents>,
    },
}

/// Seals and opens cookies with one endpoint secret.
#[derive(Clone)]
pub struct CookieSealer {
    key: [u8; 32],
}

impl std::fmt::Debug for CookieSealer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CookieSealer { key: <secret> }")
    }
}

fn mac(key: &[u8; 32], body: &[u8]) -> Hmac<Sha256> {
    // HMAC accepts keys of any length, so this cannot fail.
    let mut m = <Hmac<Sha256> as Mac>::new_from_slice(key)
        .unwrap_or_else(|_| unreachable!("HMAC takes keys of any length"));
    m.update(body);
    m
}

impl CookieSealer {
    pub fn new(key: [u8; 32]) -> Self {
        Self { key }
    }

    /// Encodes and MACs a cookie.
    pub fn seal(&self, c: &CookieContents) -> Vec<u8> {
        let mut out = Vec::with_capacity(COOKIE_LEN);
        out.push(VERSION);
        push_ip(&mut out, c.peer_addr.ip());
        out.extend_from_slice(&c.peer_addr.port().to_be_bytes());
        out.extend_from_slice(&c.local_port.to_be_bytes());
        out.extend_from_slice(&c.peer_port.to_be_bytes());
        out.extend_from_slice(&c.created.as_micros().to_be_bytes());
        let lifetime = u64::try_from(c.lifetime.as_micros()).unwrap_or(u64::MAX);
        out.extend_from_slice(&lifetime.to_be_bytes());
        for v in [c.local_tag, c.local_initial_tsn] {
            out.extend_from_slice(&v.to_be_bytes());
        }
        for v in [c.local_outbound_streams, c.local_max_inbound_streams] {
            out.extend_from_slice(&v.to_be_bytes());
        }
        for v in [c.local_a_rwnd, c.peer_tag, c.peer_initial_tsn] {
            out.extend_from_slice(&v.to_be_bytes());
        }
        for v in [c.peer_outbound_streams, c.peer_inbound_streams] {
            out.extend_from_slice(&v.to_be_bytes());
        }
        for v in [c.peer_a_rwnd, c.local_tie_tag, c.peer_tie_tag] {
            out.extend_from_slice(&v.to_be_bytes());
        }
        let mut ext = 0;
        if c.peer_pktdrop {
            ext |= EXT_PKTDROP;
        }
        if c.peer_pr_sctp {
            ext |= EXT_PR_SCTP;
        }
        if c.peer_reconfig {
            ext |= EXT_RECONFIG;
        }
        if c.peer_idata {
            ext |= EXT_IDATA;
        }
        out.push(ext);
        debug_assert_eq!(out.len(), BODY_LEN);
        let listed = c.peer_addrs.as_slice();
        if !listed.is_empty() {
            out.push(c.peer_addrs.len);
            for ip in listed {
                push_ip(&mut out, *ip);
            }
        }
        let tag = mac(&self.key, &out).finalize().into_bytes();
        out.extend_from_slice(&tag);
        out
    }

    /// Verifies the MAC (in constant time) and the lifetime, and decodes.
    pub fn open(&self, cookie: &[u8], now: Time) -> Result<CookieContents, CookieError> {
        let extra = cookie.len().checked_sub(COOKIE_LEN);
        let listed = match extra {
            Some(0) => 0,
            Some(n) if (n - 1) % ADDR_LEN == 0 && (n - 1) / ADDR_LEN < crate::path::MAX_PATHS => {
                (n - 1) / ADDR_LEN
            }
            _ => return Err(CookieError::Malformed),
        };
        let (body, tag) = cookie.split_at(cookie.len() - MAC_LEN);
        mac(&self.key, body)
            .verify_slice(tag)
            .map_err(|_| CookieError::BadMac)?;
        let (fixed, addrs) = body.split_at(BODY_LEN);
        let mut contents = decode_body(fixed).ok_or(CookieError::Malformed)?;
        if listed > 0 {
            contents.peer_addrs = decode_addresses(addrs, listed).ok_or(CookieError::Malformed)?;
        }
        let expires = contents.created + contents.lifetime;
        if now > expires {
            return Err(CookieError::Stale {
                staleness: now.since(expires),
                contents: Box::new(contents),
            });
        }
        Ok(contents)
    }
}

fn decode_body(body: &[u8]) -> Option<CookieContents> {
    let mut pos = 0usize;
    let mut take = |n: usize| -> Option<&[u8]> {
        let s = body.get(pos..pos + n)?;
        pos += n;
        Some(s)
    };
    let u16_at = |s: &[u8]| -> Option<u16> { Some(u16::from_be_bytes(s.try_into().ok()?)) };
    let u32_at = |s: &[u8]| -> Option<u32> { Some(u32::from_be_bytes(s.try_into().ok()?)) };
    let u64_at = |s: &[u8]| -> Option<u64> { Some(u64::from_be_bytes(s.try_into().ok()?)) };
    if take(1)?[0] != VERSION {
        return None;
    }
    let ip = decode_ip(take(ADDR_LEN)?)?;
    let udp_port = u16_at(take(2)?)?;
    let mut contents = CookieContents {
        peer_addr: SocketAddr::new(ip, udp_port),
        local_port: u16_at(take(2)?)?,
        peer_port: u16_at(take(2)?)?,
        created: Time::from_micros(u64_at(take(8)?)?),
        lifetime: Duration::from_micros(u64_at(take(8)?)?),
        local_tag: u32_at(take(4)?)?,
        local_initial_tsn: u32_at(take(4)?)?,
        local_outbound_streams: u16_at(take(2)?)?,
        local_max_inbound_streams: u16_at(take(2)?)?,
        local_a_rwnd: u32_at(take(4)?)?,
        peer_tag: u32_at(take(4)?)?,
        peer_initial_tsn: u32_at(take(4)?)?,
        peer_outbound_streams: u16_at(take(2)?)?,
        peer_inbound_streams: u16_at(take(2)?)?,
        peer_a_rwnd: u32_at(take(4)?)?,
        local_tie_tag: u32_at(take(4)?)?,
        peer_tie_tag: u32_at(take(4)?)?,
        peer_pktdrop: false,
        peer_pr_sctp: false,
        peer_reconfig: false,
        peer_idata: false,
        peer_addrs: PeerAddresses::default(),
    };
    let ext = take(1)?[0];
    contents.peer_pktdrop = ext & EXT_PKTDROP != 0;
    contents.peer_pr_sctp = ext & EXT_PR_SCTP != 0;
    contents.peer_reconfig = ext & EXT_RECONFIG != 0;
    contents.peer_idata = ext & EXT_IDATA != 0;
    Some(contents)
}

/// Appends an address as its family and 16 bytes (IPv4 mapped).
fn push_ip(out: &mut Vec<u8>, ip: IpAddr) {
    let (family, bytes) = match ip {
        IpAddr::V4(v4) => (4u8, v4.to_ipv6_mapped().octets()),
        IpAddr::V6(v6) => (6u8, v6.octets()),
    };
    out.push(family);
    out.extend_from_slice(&bytes);
}

/// An address as `push_ip` wrote it.
fn decode_ip(b: &[u8]) -> Option<IpAddr> {
    let (&family, rest) = b.split_first()?;
    let ip: [u8; 16] = rest.try_into().ok()?;
    match family {
        4 => Some(IpAddr::V4(
            Ipv6Addr::from(ip)
                .to_ipv4_mapped()
                .unwrap_or(Ipv4Addr::UNSPECIFIED),
        )),
        6 => Some(IpAddr::V6(Ipv6Addr::from(ip))),
        _ => None,
    }
}

/// The listed addresses: their count, then each.
fn decode_addresses(b: &[u8], listed: usize) -> Option<PeerAddresses> {
    let (&count, rest) = b.split_first()?;
    if usize::from(count) != listed {
        return None;
    }
    let ips: Option<Vec<IpAddr>> = rest.chunks_exact(ADDR_LEN).map(decode_ip).collect();
    Some(PeerAddresses::from_slice(&ips?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn contents() -> CookieContents {
        CookieContents {
            peer_addr: "192.0.2.7:9899".parse().unwrap(),
            local_port: 5000,
            peer_port: 5001,
            created: Time::from_millis(1000),
            lifetime: Duration::from_secs(60),
            local_tag: 0x1111_2222,
            local_initial_tsn: 7,
            local_outbound_streams: 10,
            local_max_inbound_streams: 12,
            local_a_rwnd: 65536,
            peer_tag: 0x3333_4444,
            peer_initial_tsn: 99,
            peer_outbound_streams: 5,
            peer_inbound_streams: 6,
            peer_a_rwnd: 131072,
            local_tie_tag: 0,
            peer_tie_tag: 0,
            peer_pktdrop: true,
            peer_pr_sctp: true,
            peer_reconfig: true,
            peer_idata: true,
            peer_addrs: PeerAddresses::default(),
        }
    }

    #[test]
    fn listed_peer_addresses_ride_in_the_cookie_and_only_then_lengthen_it() {
        let s = CookieSealer::new([7; 32]);
        let ips: Vec<IpAddr> = vec!["10.1.0.2".parse().unwrap(), "2001:db8::2".parse().unwrap()];
        let c = CookieContents {
            peer_addrs: PeerAddresses::from_slice(&ips),
            ..contents()
        };
        let sealed = s.seal(&c);
        assert_eq!(sealed.len(), COOKIE_LEN + 1 + 2 * ADDR_LEN);
        let opened = s.open(&sealed, Time::from_millis(2000)).unwrap();
        assert_eq!(opened.peer_addrs.as_slice(), &ips[..]);
        // A truncated or padded address list is no cookie of ours.
        assert_eq!(
            s.open(&sealed[..sealed.len() - 1], Time::ZERO),
            Err(CookieError::Malformed)
        );
        let many: Vec<IpAddr> = (0..20u8)
            .map(|i| IpAddr::V4(Ipv4Addr::new(10, 0, i, 2)))
            .collect();
        let bounded = PeerAddresses::from_slice(&many);
        assert_eq!(bounded.as_slice().len(), crate::path::MAX_PATHS - 1);
    }

    #[test]
    fn sealed_cookie_opens_to_the_same_contents() {
        let s = CookieSealer::new([7; 32]);
        let c = contents();
        let sealed = s.seal(&c);
        assert_eq!(sealed.len(), COOKIE_LEN);
        assert_eq!(s.open(&sealed, Time::from_millis(2000)), Ok(c));
        let v6 = CookieContents {
            peer_addr: "[2001:db8::1]:9899".parse().unwrap(),
            ..c
        };
        assert_eq!(s.open(&s.seal(&v6), Time::from_millis(2000)), Ok(v6));
    }

    #[test]
    fn a_forged_or_flipped_cookie_fails_the_mac() {
        let s = CookieSealer::new([7; 32]);
        let mut sealed = s.seal(&contents());
        for i in [0, 40, BODY_LEN - 1, BODY_LEN, COOKIE_LEN - 1] {
            sealed[i] ^= 0x01;
            assert_eq!(
                s.open(&sealed, Time::ZERO),
                Err(CookieError::BadMac),
                "byte {i}"
            );
            sealed[i] ^= 0x01;
        }
        let other = CookieSealer::new([8; 32]);
        assert_eq!(other.open(&sealed, Time::ZERO), Err(CookieError::BadMac));
        assert_eq!(
            s.open(&sealed[1..], Time::ZERO),
            Err(CookieError::Malformed)
        );
    }

    #[test]
    fn a_cookie_is_addressed_to_its_peer_address_ports_and_tag_only() {
        let c = contents();
        let header = CommonHeader {
            src_port: 5001,
            dst_port: 5000,
            verification_tag: 0x1111_2222,
            checksum: 0,
        };
        let from: SocketAddr = "192.0.2.7:9899".parse().unwrap();
        assert!(c.addressed_to(&header, from));
        let mapped: SocketAddr = "[::ffff:192.0.2.7]:9899".parse().unwrap();
        assert!(c.addressed_to(&header, mapped));
        for other in ["192.0.2.8:9899", "192.0.2.7:9900"] {
            assert!(!c.addressed_to(&header, other.parse().unwrap()), "{other}");
        }
        let wrong_tag = CommonHeader {
            verification_tag: 1,
            ..header
        };
        assert!(!c.addressed_to(&wrong_tag, from));
        let wrong_port = CommonHeader {
            src_port: 5002,
            ..header
        };
        assert!(!c.addressed_to(&wrong_port, from));
    }

    #[test]
    fn an_expired_cookie_reports_its_staleness() {
        let s = CookieSealer::new([7; 32]);
        let sealed = s.seal(&contents());
        let late = Time::from_millis(1000 + 60_000 + 250);
        match s.open(&sealed, late) {
            Err(CookieError::Stale { staleness, .. }) => {
                assert_eq!(staleness, Duration::from_millis(250))
            }
            other => panic!("expected Stale, got {other:?}"),
        }
    }
}
