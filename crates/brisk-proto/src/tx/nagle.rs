//! Nagle's algorithm for messages (the thesis' paper D; Minshall's rule).
//!
//! Classic Nagle holds a less-than-full packet while any data is outstanding;
//! with delayed SACK this can stall a message by up to the SACK delay. Minshall's
//! rule holds a less-than-full packet only while a previously sent
//! less-than-full packet is unacknowledged. A packet counts as full when the
//! next queued chunk would not fit.

use crate::config::Nagle;

/// Whether to hold the new data that would form a less-than-full packet.
/// `outstanding`: any data is unacknowledged; `small_unacked`: a less-than-full
/// packet sent earlier is unacknowledged.
pub fn hold(mode: Nagle, would_fill: bool, outstanding: bool, small_unacked: bool) -> bool {
    if would_fill {
        return false;
    }
    match mode {
        Nagle::Off => false,
        Nagle::Classic => outstanding,
        Nagle::Minshall => small_unacked,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classic_holds_behind_any_outstanding_data_minshall_only_behind_a_small_packet() {
        assert!(!hold(Nagle::Off, false, true, true));
        assert!(hold(Nagle::Classic, false, true, false));
        assert!(!hold(Nagle::Classic, false, false, false));
        assert!(
            !hold(Nagle::Minshall, false, true, false),
            "full packets outstanding"
        );
        assert!(hold(Nagle::Minshall, false, true, true));
        assert!(
            !hold(Nagle::Classic, true, true, true),
            "a full packet always goes"
        );
    }
}
