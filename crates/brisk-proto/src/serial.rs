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

/// A Transmission Sequence Number (RFC 9260 3.3.1): 32 bits, compared in
/// serial arithmetic (1.6). Deliberately not `Ord`: serial order is not a
/// total order, so TSNs are compared only with [`Tsn::is_before`] and its kin.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Tsn(pub u32);

impl Tsn {
    /// `self < other` in serial arithmetic.
    pub const fn is_before(self, other: Tsn) -> bool {
        lt32(self.0, other.0)
    }

    /// `self <= other` in serial arithmetic.
    pub const fn is_at_or_before(self, other: Tsn) -> bool {
        le32(self.0, other.0)
    }

    /// The TSN after this one (wrapping).
    pub const fn next(self) -> Tsn {
        Tsn(self.0.wrapping_add(1))
    }

    /// The TSN before this one (wrapping).
    pub const fn prev(self) -> Tsn {
        Tsn(self.0.wrapping_sub(1))
    }

    /// `n` TSNs after this one (wrapping).
    pub const fn plus(self, n: u32) -> Tsn {
        Tsn(self.0.wrapping_add(n))
    }

    /// How many TSNs `self` lies after `base` (wrapping: a TSN before `base`
    /// is far ahead).
    pub const fn since(self, base: Tsn) -> u32 {
        self.0.wrapping_sub(base.0)
    }
}

impl std::fmt::Display for Tsn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// A Stream Sequence Number (RFC 9260 3.3.1): 16 bits, per stream, compared
/// in serial arithmetic.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Ssn(pub u16);

impl Ssn {
    /// `self < other` in serial arithmetic.
    pub const fn is_before(self, other: Ssn) -> bool {
        lt16(self.0, other.0)
    }

    /// The SSN after this one (65535 is followed by 0).
    pub const fn next(self) -> Ssn {
        Ssn(self.0.wrapping_add(1))
    }
}

/// A stream identifier (RFC 9260 3.3.1).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StreamId(pub u16);

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
    fn tsns_and_ssns_compare_and_step_across_wraparound() {
        let last = Tsn(u32::MAX);
        assert_eq!(last.next(), Tsn(0));
        assert!(last.is_before(Tsn(0)) && !Tsn(0).is_before(last));
        assert!(Tsn(5).is_at_or_before(Tsn(5)));
        assert_eq!(Tsn(2).since(last), 3);
        assert_eq!(Tsn(0).prev(), last);
        assert_eq!(last.plus(2), Tsn(1));
        assert_eq!(Ssn(u16::MAX).next(), Ssn(0));
        assert!(Ssn(u16::MAX).is_before(Ssn(0)));
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
