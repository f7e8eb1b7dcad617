//! A channel's options, and how they map to DCEP (RFC 8832 5.1) and to
//! Brisk's per-message send options (RFC 8831 6.4, 6.6).

use std::time::Duration;

use crate::association::SendOptions;
use brisk_proto::Reliability;

use super::dcep::{ChannelType, Open};

/// RFC 8831 6.4: the "normal" priority (below 128, 256, 512, 1024 steps).
pub const PRIORITY_NORMAL: u16 = 256;

/// How a channel is opened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChannelOptions {
    /// In-order delivery (RFC 8831 6.4). Unordered channels still send
    /// ordered until the DATA_CHANNEL_ACK arrives (RFC 8832 6).
    pub ordered: bool,
    /// Reliable, or partially reliable with a retransmission limit or a
    /// lifetime (RFC 8831 6.4, RFC 7496). Needs partial reliability
    /// negotiated on the association (`Config::partial_reliability`).
    /// A lifetime is carried in whole milliseconds, at most `u32::MAX`.
    pub reliability: Reliability,
    /// The sub-protocol name (RFC 8832 5.1), UTF-8, at most 65535 bytes.
    pub protocol: String,
    /// Carried in DATA_CHANNEL_OPEN (RFC 8832 5.1); Brisk's scheduler does
    /// not act on it.
    pub priority: u16,
    /// A channel agreed out of band on this stream id (RFC 8831 6.5): no
    /// DCEP, open at once on both ends, which must use the same options.
    pub negotiated: Option<u16>,
}

impl Default for ChannelOptions {
    fn default() -> Self {
        Self {
            ordered: true,
            reliability: Reliability::Reliable,
            protocol: String::new(),
            priority: PRIORITY_NORMAL,
            negotiated: None,
        }
    }
}

impl ChannelOptions {
    /// The DATA_CHANNEL_OPEN that announces a channel with these options.
    pub(crate) fn to_open(&self, label: &str) -> Open {
        let (kind, reliability) = match self.reliability {
            Reliability::Reliable => (0, 0),
            Reliability::MaxRetransmits(n) => (1, n),
            Reliability::Lifetime(d) => (2, u32::try_from(d.as_millis()).unwrap_or(u32::MAX)),
        };
        let channel_type = match (kind, self.ordered) {
            (0, true) => ChannelType::Reliable,
            (0, false) => ChannelType::ReliableUnordered,
            (1, true) => ChannelType::PartialReliableRexmit,
            (1, false) => ChannelType::PartialReliableRexmitUnordered,
            (_, true) => ChannelType::PartialReliableTimed,
            (_, false) => ChannelType::PartialReliableTimedUnordered,
        };
        Open {
            channel_type,
            priority: self.priority,
            reliability,
            label: label.to_owned(),
            protocol: self.protocol.clone(),
        }
    }

    /// The options a received DATA_CHANNEL_OPEN asks for.
    pub(crate) fn from_open(open: &Open) -> Self {
        use ChannelType::*;
        let reliability = match open.channel_type {
            // RFC 8832 5.1: the parameter is ignored for reliable channels.
            Reliable | ReliableUnordered => Reliability::Reliable,
            PartialReliableRexmit | PartialReliableRexmitUnordered => {
                Reliability::MaxRetransmits(open.reliability)
            }
            PartialReliableTimed | PartialReliableTimedUnordered => {
                Reliability::Lifetime(Duration::from_millis(u64::from(open.reliability)))
            }
        };
        Self {
            ordered: !open.channel_type.unordered(),
            reliability,
            protocol: open.protocol.clone(),
            priority: open.priority,
            negotiated: None,
        }
    }

    /// How one user message is sent. RFC 8832 6: until the DATA_CHANNEL_ACK
    /// has arrived, messages are sent ordered, so none overtakes the OPEN.
    pub(crate) fn send_options(&self, ppid: u32, acked: bool) -> SendOptions {
        SendOptions {
            ppid,
            unordered: !self.ordered && acked,
            immediate_sack: false,
            reliability: self.reliability,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_map_to_the_six_channel_types_and_back() {
        let cases = [
            (true, Reliability::Reliable, ChannelType::Reliable, 0),
            (
                false,
                Reliability::Reliable,
                ChannelType::ReliableUnordered,
                0,
            ),
            (
                true,
                Reliability::MaxRetransmits(5),
                ChannelType::PartialReliableRexmit,
                5,
            ),
            (
                false,
                Reliability::MaxRetransmits(0),
                ChannelType::PartialReliableRexmitUnordered,
                0,
            ),
            (
                true,
                Reliability::Lifetime(Duration::from_millis(1500)),
                ChannelType::PartialReliableTimed,
                1500,
            ),
            (
                false,
                Reliability::Lifetime(Duration::from_millis(20)),
                ChannelType::PartialReliableTimedUnordered,
                20,
            ),
        ];
        for (ordered, reliability, channel_type, param) in cases {
            let opts = ChannelOptions {
                ordered,
                reliability,
                protocol: "p".into(),
                priority: 512,
                negotiated: None,
            };
            let open = opts.to_open("l");
            assert_eq!(open.channel_type, channel_type);
            assert_eq!(open.reliability, param);
            assert_eq!(open.priority, 512);
            assert_eq!(ChannelOptions::from_open(&open), opts);
        }
    }

    #[test]
    fn a_reliable_open_ignores_its_parameter() {
        let mut open = ChannelOptions::default().to_open("x");
        open.reliability = 77;
        assert_eq!(
            ChannelOptions::from_open(&open).reliability,
            Reliability::Reliable
        );
    }

    #[test]
    fn unordered_channels_send_ordered_until_acked() {
        let opts = ChannelOptions {
            ordered: false,
            reliability: Reliability::MaxRetransmits(0),
            ..ChannelOptions::default()
        };
        let before = opts.send_options(53, false);
        assert!(!before.unordered);
        assert_eq!(before.reliability, Reliability::MaxRetransmits(0));
        let after = opts.send_options(53, true);
        assert!(after.unordered);
        assert_eq!(after.ppid, 53);
        assert!(!ChannelOptions::default().send_options(51, true).unordered);
    }

    #[test]
    fn a_lifetime_beyond_u32_milliseconds_saturates() {
        let opts = ChannelOptions {
            reliability: Reliability::Lifetime(Duration::from_secs(10_000_000)),
            ..ChannelOptions::default()
        };
        assert_eq!(opts.to_open("x").reliability, u32::MAX);
    }
}
