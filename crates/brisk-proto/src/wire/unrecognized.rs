//! What a receiver must do with a chunk or parameter type it does not know.
//!
//! RFC 9260 3.2 (chunks) and 3.2.1 (parameters): the two highest-order bits of
//! the type encode the action, so an old receiver handles new extensions safely.

/// The action encoded in the upper two bits of an unrecognized type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UnrecognizedAction {
    /// `00`: stop processing. For a chunk, discard it and every chunk after it in
    /// the packet; for a parameter, ignore every parameter after it in the chunk.
    Stop,
    /// `01`: as [`Stop`](Self::Stop), and report it (an ERROR chunk with an
    /// Unrecognized Chunk Type cause, or an Unrecognized Parameter).
    StopAndReport,
    /// `10`: skip it and carry on with the next one.
    Skip,
    /// `11`: skip it, carry on, and report it.
    SkipAndReport,
}

impl UnrecognizedAction {
    /// RFC 9260 3.2: the action for an unrecognized chunk type.
    pub const fn for_chunk_type(typ: u8) -> Self {
        Self::from_bits(typ >> 6)
    }

    /// RFC 9260 3.2.1: the action for an unrecognized parameter type.
    pub const fn for_param_type(typ: u16) -> Self {
        Self::from_bits((typ >> 14) as u8)
    }

    const fn from_bits(bits: u8) -> Self {
        match bits & 0b11 {
            0b00 => Self::Stop,
            0b01 => Self::StopAndReport,
            0b10 => Self::Skip,
            _ => Self::SkipAndReport,
        }
    }

    /// Whether processing continues after the unrecognized item.
    pub const fn continues(self) -> bool {
        matches!(self, Self::Skip | Self::SkipAndReport)
    }

    /// Whether the sender must be told about the unrecognized item.
    pub const fn reports(self) -> bool {
        matches!(self, Self::StopAndReport | Self::SkipAndReport)
    }
}

#[cfg(test)]
mod tests {
    use super::UnrecognizedAction::*;
    use super::*;

    #[test]
    fn chunk_action_comes_from_the_two_high_bits() {
        assert_eq!(UnrecognizedAction::for_chunk_type(0x3f), Stop);
        assert_eq!(UnrecognizedAction::for_chunk_type(0x40), StopAndReport);
        assert_eq!(UnrecognizedAction::for_chunk_type(0x81), Skip);
        assert_eq!(UnrecognizedAction::for_chunk_type(0xc1), SkipAndReport);
    }

    #[test]
    fn param_action_comes_from_the_two_high_bits() {
        assert_eq!(UnrecognizedAction::for_param_type(0x0011), Stop);
        assert_eq!(UnrecognizedAction::for_param_type(0x4011), StopAndReport);
        assert_eq!(UnrecognizedAction::for_param_type(0x8008), Skip);
        assert_eq!(UnrecognizedAction::for_param_type(0xc000), SkipAndReport);
        assert!(SkipAndReport.continues() && SkipAndReport.reports());
        assert!(!Stop.continues() && !Stop.reports());
    }
}
