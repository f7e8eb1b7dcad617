//! SCTP chunks: one file per chunk type, each showing its layout and citing its RFC.
//!
//! Every chunk starts with the same 4-byte header (RFC 9260 3.2):
//!
//! ```text
//!  0                   1                   2                   3
//!  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |   Chunk Type  | Chunk  Flags  |        Chunk Length           |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! \                          Chunk Value                          \
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! ```

pub mod abort;
pub mod cookie_ack;
pub mod cookie_echo;
pub mod data;
pub mod error;
pub mod forward_tsn;
pub mod heartbeat;
pub mod heartbeat_ack;
pub mod idata;
pub mod iforward_tsn;
pub mod init;
pub mod init_ack;
pub mod pktdrop;
pub mod reconfig;
pub mod sack;
pub mod shutdown;
pub mod shutdown_ack;
pub mod shutdown_complete;
pub mod unknown;

pub use abort::Abort;
pub use cookie_ack::CookieAck;
pub use cookie_echo::CookieEcho;
pub use data::{Data, DataFlags};
pub use error::OperationError;
pub use forward_tsn::{ForwardTsn, ForwardTsnStream};
pub use heartbeat::{Heartbeat, HeartbeatChunk};
pub use heartbeat_ack::HeartbeatAck;
pub use idata::{IData, PpidOrFsn};
pub use iforward_tsn::{IForwardTsn, IForwardTsnStream};
pub use init::{Init, InitChunk};
pub use init_ack::InitAck;
pub use pktdrop::{PktDrop, PktDropFlags};
pub use reconfig::{ReConfig, ReconfigParam, ReconfigResult};
pub use sack::{GapBlock, Sack};
pub use shutdown::Shutdown;
pub use shutdown_ack::ShutdownAck;
pub use shutdown_complete::ShutdownComplete;
pub use unknown::UnknownChunk;

use super::WireError;
use super::buf::{len16, pad_from, padded, put_u16};
use super::unrecognized::UnrecognizedAction;

/// Chunk type numbers (RFC 9260 3.2 and the extension RFCs).
pub mod types {
    pub const DATA: u8 = 0;
    pub const INIT: u8 = 1;
    pub const INIT_ACK: u8 = 2;
    pub const SACK: u8 = 3;
    pub const HEARTBEAT: u8 = 4;
    pub const HEARTBEAT_ACK: u8 = 5;
    pub const ABORT: u8 = 6;
    pub const SHUTDOWN: u8 = 7;
    pub const SHUTDOWN_ACK: u8 = 8;
    pub const ERROR: u8 = 9;
    pub const COOKIE_ECHO: u8 = 10;
    pub const COOKIE_ACK: u8 = 11;
    pub const SHUTDOWN_COMPLETE: u8 = 14;
    pub const IDATA: u8 = 64;
    pub const PKTDROP: u8 = 129;
    pub const RECONFIG: u8 = 130;
    pub const FORWARD_TSN: u8 = 192;
    pub const IFORWARD_TSN: u8 = 194;

    /// The chunk's name as the RFC writes it, or `"unknown chunk"`.
    pub const fn name(typ: u8) -> &'static str {
        match typ {
            DATA => "DATA",
            INIT => "INIT",
            INIT_ACK => "INIT ACK",
            SACK => "SACK",
            HEARTBEAT => "HEARTBEAT",
            HEARTBEAT_ACK => "HEARTBEAT ACK",
            ABORT => "ABORT",
            SHUTDOWN => "SHUTDOWN",
            SHUTDOWN_ACK => "SHUTDOWN ACK",
            ERROR => "ERROR",
            COOKIE_ECHO => "COOKIE ECHO",
            COOKIE_ACK => "COOKIE ACK",
            SHUTDOWN_COMPLETE => "SHUTDOWN COMPLETE",
            IDATA => "I-DATA",
            PKTDROP => "PKTDROP",
            RECONFIG => "RE-CONFIG",
            FORWARD_TSN => "FORWARD TSN",
            IFORWARD_TSN => "I-FORWARD-TSN",
            _ => "unknown chunk",
        }
    }
}

/// The encoding and decoding of one chunk type's value; the 4-byte chunk header
/// and the padding are handled here once for all of them.
pub trait ChunkCodec<'a>: Sized {
    /// The chunk type number.
    const TYPE: u8;
    /// The chunk's name as the RFC writes it, for errors and logs.
    const NAME: &'static str;

    /// Decodes the chunk from its flags and its value (the bytes after the 4-byte
    /// header, padding excluded).
    fn decode(flags: u8, value: &'a [u8]) -> Result<Self, WireError>;
    /// The flags byte.
    fn flags(&self) -> u8 {
        0
    }
    /// Length of the value as it will be encoded, without the header or the final padding.
    fn value_len(&self) -> usize;
    /// Appends the value, without the final padding.
    fn encode_value(&self, out: &mut Vec<u8>) -> Result<(), WireError>;

    /// The Chunk Length field: header plus value, not counting the final padding.
    fn chunk_len(&self) -> usize {
        4 + self.value_len()
    }

    /// The bytes the chunk takes in a packet, padding included.
    fn encoded_len(&self) -> usize {
        padded(self.chunk_len())
    }

    /// Appends the whole chunk, header and padding included (RFC 9260 3.2).
    fn encode(&self, out: &mut Vec<u8>) -> Result<(), WireError> {
        let start = out.len();
        out.push(Self::TYPE);
        out.push(self.flags());
        put_u16(out, 0);
        self.encode_value(out)?;
        let len = len16(Self::NAME, out.len() - start)?;
        out[start + 2..start + 4].copy_from_slice(&len.to_be_bytes());
        pad_from(out, start);
        Ok(())
    }
}

/// Fails unless a chunk without a value has exactly the 4-byte header.
pub(crate) fn expect_empty(what: &'static str, value: &[u8]) -> Result<(), WireError> {
    if value.is_empty() {
        Ok(())
    } else {
        Err(WireError::InvalidLength {
            what,
            len: 4 + value.len(),
            expected: "exactly 4",
        })
    }
}

/// Any chunk. Byte fields borrow from the packet when decoded (`Chunk<'a>`), or
/// own their bytes when built by hand (`Chunk<'static>`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Chunk<'a> {
    Data(Data<'a>),
    Init(Init<'a>),
    InitAck(InitAck<'a>),
    Sack(Sack),
    Heartbeat(Heartbeat<'a>),
    HeartbeatAck(HeartbeatAck<'a>),
    Abort(Abort<'a>),
    Shutdown(Shutdown),
    ShutdownAck(ShutdownAck),
    Error(OperationError<'a>),
    CookieEcho(CookieEcho<'a>),
    CookieAck(CookieAck),
    ShutdownComplete(ShutdownComplete),
    IData(IData<'a>),
    ForwardTsn(ForwardTsn),
    IForwardTsn(IForwardTsn),
    ReConfig(ReConfig<'a>),
    PktDrop(PktDrop<'a>),
    /// A chunk type this codec does not know, kept whole.
    Unknown(UnknownChunk<'a>),
}

/// Runs `$body` with `$c` bound to the inner chunk of a known type, or
/// `$unknown` with `$u` bound to an [`UnknownChunk`].
macro_rules! each_chunk {
    ($chunk:expr, $c:ident => $body:expr, $u:ident => $unknown:expr) => {
        match $chunk {
            Chunk::Data($c) => $body,
            Chunk::Init($c) => $body,
            Chunk::InitAck($c) => $body,
            Chunk::Sack($c) => $body,
            Chunk::Heartbeat($c) => $body,
            Chunk::HeartbeatAck($c) => $body,
            Chunk::Abort($c) => $body,
            Chunk::Shutdown($c) => $body,
            Chunk::ShutdownAck($c) => $body,
            Chunk::Error($c) => $body,
            Chunk::CookieEcho($c) => $body,
            Chunk::CookieAck($c) => $body,
            Chunk::ShutdownComplete($c) => $body,
            Chunk::IData($c) => $body,
            Chunk::ForwardTsn($c) => $body,
            Chunk::IForwardTsn($c) => $body,
            Chunk::ReConfig($c) => $body,
            Chunk::PktDrop($c) => $body,
            Chunk::Unknown($u) => $unknown,
        }
    };
}

/// The type number and name of a chunk struct, usable through `Chunk`.
fn meta<'a, C: ChunkCodec<'a>>(_: &C) -> (u8, &'static str) {
    (C::TYPE, C::NAME)
}

impl<'a> Chunk<'a> {
    /// Decodes a chunk from its type, flags and value (padding excluded).
    pub fn decode(typ: u8, flags: u8, value: &'a [u8]) -> Result<Self, WireError> {
        Ok(match typ {
            types::DATA => Chunk::Data(Data::decode(flags, value)?),
            types::INIT => Chunk::Init(Init::decode(flags, value)?),
            types::INIT_ACK => Chunk::InitAck(InitAck::decode(flags, value)?),
            types::SACK => Chunk::Sack(Sack::decode(flags, value)?),
            types::HEARTBEAT => Chunk::Heartbeat(Heartbeat::decode(flags, value)?),
            types::HEARTBEAT_ACK => Chunk::HeartbeatAck(HeartbeatAck::decode(flags, value)?),
            types::ABORT => Chunk::Abort(Abort::decode(flags, value)?),
            types::SHUTDOWN => Chunk::Shutdown(Shutdown::decode(flags, value)?),
            types::SHUTDOWN_ACK => Chunk::ShutdownAck(ShutdownAck::decode(flags, value)?),
            types::ERROR => Chunk::Error(OperationError::decode(flags, value)?),
            types::COOKIE_ECHO => Chunk::CookieEcho(CookieEcho::decode(flags, value)?),
            types::COOKIE_ACK => Chunk::CookieAck(CookieAck::decode(flags, value)?),
            types::SHUTDOWN_COMPLETE => {
                Chunk::ShutdownComplete(ShutdownComplete::decode(flags, value)?)
            }
            types::IDATA => Chunk::IData(IData::decode(flags, value)?),
            types::FORWARD_TSN => Chunk::ForwardTsn(ForwardTsn::decode(flags, value)?),
            types::IFORWARD_TSN => Chunk::IForwardTsn(IForwardTsn::decode(flags, value)?),
            types::RECONFIG => Chunk::ReConfig(ReConfig::decode(flags, value)?),
            types::PKTDROP => Chunk::PktDrop(PktDrop::decode(flags, value)?),
            typ => Chunk::Unknown(UnknownChunk::new(typ, flags, value)),
        })
    }

    /// The chunk type number.
    pub fn chunk_type(&self) -> u8 {
        each_chunk!(self, c => meta(c).0, u => u.typ)
    }

    /// The chunk's name, e.g. `"SACK"`.
    pub fn name(&self) -> &'static str {
        each_chunk!(self, c => meta(c).1, _u => UnknownChunk::NAME)
    }

    /// The flags byte.
    pub fn flags(&self) -> u8 {
        each_chunk!(self, c => c.flags(), u => u.flags)
    }

    /// The bytes the chunk takes in a packet, padding included.
    pub fn encoded_len(&self) -> usize {
        each_chunk!(self, c => c.encoded_len(), u => u.encoded_len())
    }

    /// Appends the chunk, header and padding included.
    pub fn encode(&self, out: &mut Vec<u8>) -> Result<(), WireError> {
        each_chunk!(self, c => c.encode(out), u => u.encode(out))
    }

    /// RFC 9260 3.2: for an unknown chunk type, what the receiver must do.
    /// `None` for chunk types this codec understands.
    pub fn action(&self) -> Option<UnrecognizedAction> {
        match self {
            Chunk::Unknown(u) => Some(u.action()),
            _ => None,
        }
    }

    /// Whether RFC 9260 6.10 requires this chunk to be alone in its packet.
    pub fn must_be_alone(&self) -> bool {
        matches!(
            self,
            Chunk::Init(_) | Chunk::InitAck(_) | Chunk::ShutdownComplete(_)
        )
    }

    /// RFC 9260 5.1: COOKIE ECHO and COOKIE ACK must be the first chunk of
    /// their packet (other chunks may follow them).
    pub fn must_lead(&self) -> bool {
        matches!(self, Chunk::CookieEcho(_) | Chunk::CookieAck(_))
    }
}

macro_rules! impl_from {
    ($($variant:ident($ty:ty)),* $(,)?) => {
        $(impl<'a> From<$ty> for Chunk<'a> {
            fn from(c: $ty) -> Self {
                Chunk::$variant(c)
            }
        })*
    };
}

impl_from!(
    Data(Data<'a>),
    Init(Init<'a>),
    InitAck(InitAck<'a>),
    Sack(Sack),
    Heartbeat(Heartbeat<'a>),
    HeartbeatAck(HeartbeatAck<'a>),
    Abort(Abort<'a>),
    Shutdown(Shutdown),
    ShutdownAck(ShutdownAck),
    Error(OperationError<'a>),
    CookieEcho(CookieEcho<'a>),
    CookieAck(CookieAck),
    ShutdownComplete(ShutdownComplete),
    IData(IData<'a>),
    ForwardTsn(ForwardTsn),
    IForwardTsn(IForwardTsn),
    ReConfig(ReConfig<'a>),
    PktDrop(PktDrop<'a>),
    Unknown(UnknownChunk<'a>),
);
