//! Sequence numbers: 32 bits on the wire (RFC 9293 3.4), 64 bits inside.
//!
//! Inside a connection every sequence number is an offset from the initial
//! sequence number of its direction (the SYN is offset 0, the first data byte
//! offset 1), so comparisons never wrap. The wire form is the low 32 bits added
//! to the ISN; a received number is unwrapped to the offset nearest a
//! reference the connection already holds (SND.UNA or RCV.NXT).

/// The wire sequence number of offset `abs` in the space that starts at `isn`.
pub fn to_wire(isn: u32, abs: u64) -> u32 {
    // Truncation intended: sequence space is modulo 2^32 (RFC 9293 3.4).
    isn.wrapping_add(abs as u32)
}

/// The offset of the wire number `wire` nearest to `reference` (within 2^31
/// either way), or `None` if that would lie before the ISN.
pub fn unwrap(isn: u32, reference: u64, wire: u32) -> Option<u64> {
    let diff = wire.wrapping_sub(to_wire(isn, reference)) as i32;
    reference.checked_add_signed(i64::from(diff))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_survive_the_wrap_of_the_32_bit_space() {
        let isn = u32::MAX - 10;
        assert_eq!(to_wire(isn, 0), isn);
        assert_eq!(to_wire(isn, 11), 0);
        assert_eq!(unwrap(isn, 5, 3), Some(14));
        assert_eq!(unwrap(isn, 14, isn), Some(0));
        assert_eq!(unwrap(isn, 0, isn.wrapping_sub(1)), None);
        let far = (1u64 << 32) + 100;
        assert_eq!(unwrap(isn, far, to_wire(isn, far + 7)), Some(far + 7));
        assert_eq!(unwrap(isn, far, to_wire(isn, far - 7)), Some(far - 7));
    }
}
