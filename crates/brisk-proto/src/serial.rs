//! Serial number arithmetic (RFC 1982), as RFC 9260 1.6 requires for TSNs and
//! SSNs, and unwrapping of 32-bit TSNs into monotone 64-bit values so that
//! ordered containers work across wrap-around.

/// `a < b` in 32-bit serial arithmetic (RFC 1982 3.2).
pub const fn lt32(a: u32, b: u32) -> bool {
    a != b && b.wrapping_sub(a) < (1 << 31)
}

/// `a <= b` in 32-bit serial arithmetic.
pub const fn le32(a: u32, b: u32) -> bool {
    a == b || lt32(a, b)
}

/// `a < b` in 16-bit serial arithmetic (SSNs).
pub const fn lt16(a: u16, b: u16) -> bool {
    a != b && b.wrapping_sub(a) < (1 << 15)
}

/// Maps 32-bit serial numbers onto a monotone 64-bit line, choosing for each the
/// value nearest to the last one seen (dcSCTP and QUIC use the same idea).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unwrapper {
    last: u64,
}

impl Unwrapper {
    /// Starts the line at `first`, which unwraps to `1 << 32 | first` so that
    /// values slightly before it stay positive.
    pub const fn new(first: u32) -> Self {
        Self {
            last: (1 << 32) | first as u64,
        }
    }

    /// The 64-bit value of `n` nearest to the last one unwrapped; remembers it.
    pub fn unwrap(&mut self, n: u32) -> u64 {
        let v = self.peek(n);
        self.last = v;
        v
    }

    /// The 64-bit value of `n` nearest to the last one, without remembering it.
    pub fn peek(&self, n: u32) -> u64 {
        let delta = n.wrapping_sub(self.last as u32);
        if delta < (1 << 31) {
            self.last + u64::from(delta)
        } else {
            self.last.saturating_sub(u64::from(delta.wrapping_neg()))
        }
    }
}

/// The 32-bit serial number of an unwrapped value.
pub const fn wrap(v: u64) -> u32 {
    v as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serial_comparison_holds_across_wraparound() {
        assert!(lt32(u32::MAX, 0));
        assert!(lt32(u32::MAX - 5, 3));
        assert!(!lt32(3, u32::MAX - 5));
        assert!(le32(7, 7) && !lt32(7, 7));
        assert!(lt16(u16::MAX, 1));
        assert!(!lt16(1, u16::MAX));
    }

    #[test]
    fn unwrapper_is_monotone_across_wraparound() {
        let mut u = Unwrapper::new(u32::MAX - 1);
        let a = u.unwrap(u32::MAX - 1);
        let b = u.unwrap(u32::MAX);
        let c = u.unwrap(0);
        let d = u.unwrap(1);
        assert!(a < b && b < c && c < d);
        assert_eq!(d - a, 3);
        // A value slightly behind the last one unwraps below it.
        assert_eq!(u.peek(u32::MAX), c - 1);
        assert_eq!(wrap(c), 0);
    }
}
