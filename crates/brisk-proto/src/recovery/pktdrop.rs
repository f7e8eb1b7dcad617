//! PKTDROP (draft-stewart-sctp-pktdrprep; seed 003, 4): a receiver that gets a
//! packet with a bad checksum, which still maps to an association, reports it;
//! the sender retransmits the DATA it can identify at once, without treating
//! the loss as congestion.
//!
//! Rules implemented here:
//! - negotiated by listing 0x81 in Supported Extensions; never sent to a peer
//!   that did not list it;
//! - never sent in reply to ABORT, PKTDROP or INIT ACK;
//! - the dropped packet is embedded from its common header, cut to fit one
//!   PMTU (T set, original length in Truncated Length); an end host puts its
//!   receive buffer size in Link Bandwidth and the bytes in use in Queue Size;
//! - the sender identifies each DATA chunk by its TSN and the start of its
//!   payload.

use std::borrow::Cow;

use crate::wire::chunk::{PktDrop, PktDropFlags, types};

/// Bytes of a PKTDROP chunk before the embedded packet.
const HEADER: usize = 16;
/// Bytes of payload compared to identify a chunk.
const PREFIX: usize = 8;

/// Whether a corrupted packet may be reported: not an ABORT, PKTDROP or INIT
/// ACK (judged by the chunk types that can still be read).
pub fn may_report(packet: &[u8]) -> bool {
    let mut offset = 12;
    while let Some(header) = packet.get(offset..offset + 4) {
        if matches!(
            header[0],
            types::ABORT | types::PKTDROP | types::INIT_ACK | types::INIT
        ) {
            return false;
        }
        let len = usize::from(u16::from_be_bytes([header[2], header[3]]));
        if len < 4 {
            break;
        }
        offset += (len + 3) & !3;
    }
    packet.len() >= 12
}

/// The PKTDROP that reports `packet`, within a packet of `mtu` bytes.
pub fn report(packet: &[u8], mtu: usize, receive_buffer: u32, buffered: u32) -> PktDrop<'static> {
    let room = mtu.saturating_sub(12 + HEADER);
    let truncated = packet.len() > room;
    let kept = &packet[..packet.len().min(room)];
    PktDrop {
        flags: PktDropFlags {
            middlebox: false,
            bad_checksum: true,
            truncated,
        },
        bandwidth: receive_buffer,
        queue_size: buffered,
        truncated_len: if truncated {
            u16::try_from(packet.len()).unwrap_or(u16::MAX)
        } else {
            0
        },
        dropped: Cow::Owned(kept.to_vec()),
    }
}

/// The DATA (and I-DATA, RFC 8260 2.1: a 20-byte header) chunks that can be
/// read in an embedded packet: their TSN and the first bytes of their
/// payload. Truncated chunks still count if their header survived. Never
/// panics on whatever the peer sent.
pub fn embedded_data(dropped: &[u8]) -> Vec<(u32, Vec<u8>)> {
    let mut out = Vec::new();
    let mut offset = 12;
    while let Some(header) = dropped.get(offset..offset + 4) {
        let len = usize::from(u16::from_be_bytes([header[2], header[3]]));
        if len < 4 {
            break;
        }
        let value = dropped
            .get(offset + 4..(offset + len).min(dropped.len()))
            .unwrap_or(&[]);
        // The bytes after the chunk header before the user data.
        let before_payload = match header[0] {
            types::DATA => Some(12),
            types::IDATA => Some(16),
            _ => None,
        };
        if let Some(skip) = before_payload
            && value.len() >= skip
        {
            let tsn = u32::from_be_bytes([value[0], value[1], value[2], value[3]]);
            let payload = &value[skip..];
            out.push((tsn, payload[..payload.len().min(PREFIX)].to_vec()));
        }
        offset += (len + 3) & !3;
    }
    out
}

/// Whether a chunk's payload matches the prefix read from the embedded packet.
pub fn matches(payload: &[u8], prefix: &[u8]) -> bool {
    !prefix.is_empty() && payload.starts_with(prefix)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::chunk::{Abort, Data, DataFlags};
    use crate::wire::{Chunk, CommonHeader, Packet};

    fn packet(chunks: Vec<Chunk<'static>>) -> Vec<u8> {
        Packet {
            header: CommonHeader::default(),
            chunks,
        }
        .to_bytes()
        .unwrap()
    }

    fn data(tsn: u32, len: usize) -> Chunk<'static> {
        Chunk::Data(Data {
            flags: DataFlags::UNFRAGMENTED,
            tsn,
            stream_id: 0,
            ssn: 0,
            ppid: 0,
            payload: (0..len).map(|i| i as u8).collect::<Vec<u8>>().into(),
        })
    }

    #[test]
    fn the_report_embeds_the_packet_and_truncates_it_to_the_mtu() {
        let p = packet(vec![data(7, 100)]);
        let r = report(&p, 1452, 65536, 300);
        assert!(r.flags.bad_checksum && !r.flags.truncated && !r.flags.middlebox);
        assert_eq!(
            (r.bandwidth, r.queue_size, r.truncated_len),
            (65536, 300, 0)
        );
        assert_eq!(&r.dropped[..], &p[..]);
        let big = packet(vec![data(8, 1400)]);
        let r = report(&big, 1200, 65536, 0);
        assert!(r.flags.truncated);
        assert_eq!(r.truncated_len as usize, big.len());
        assert_eq!(r.dropped.len(), 1200 - 28);
    }

    #[test]
    fn data_chunks_are_identified_even_in_a_truncated_packet() {
        let p = packet(vec![data(7, 100), data(8, 1300)]);
        let cut = &p[..700];
        let found = embedded_data(cut);
        assert_eq!(found.iter().map(|f| f.0).collect::<Vec<_>>(), vec![7, 8]);
        assert_eq!(found[0].1, vec![0, 1, 2, 3, 4, 5, 6, 7]);
        assert!(embedded_data(&[0xff; 5]).is_empty());
        assert!(
            embedded_data(&[0u8; 40]).is_empty(),
            "zero lengths end the walk"
        );
    }

    #[test]
    fn i_data_chunks_are_identified_by_tsn_and_payload_after_their_20_byte_header() {
        use crate::wire::chunk::{IData, PpidOrFsn};
        let idata = Chunk::IData(IData {
            flags: DataFlags::UNFRAGMENTED,
            tsn: 9,
            stream_id: 2,
            mid: 77,
            ppid_or_fsn: PpidOrFsn::Ppid(5),
            payload: vec![42u8; 30].into(),
        });
        let found = embedded_data(&packet(vec![data(7, 10), idata]));
        assert_eq!(found.iter().map(|f| f.0).collect::<Vec<_>>(), vec![7, 9]);
        assert_eq!(found[1].1, vec![42; 8]);
    }

    #[test]
    fn aborts_init_acks_and_pktdrops_are_never_reported() {
        assert!(may_report(&packet(vec![data(1, 10)])));
        assert!(!may_report(&packet(vec![Chunk::Abort(Abort::default())])));
        assert!(!may_report(&[0u8; 8]));
    }
}
