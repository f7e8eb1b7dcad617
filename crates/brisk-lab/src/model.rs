//! Seed 003's throughput model (Rüngeler, Tüxen & Rathgeb 2009, sections 3
//! and 4.1): SCTP goodput over a lossy path, and the loss-free ceiling of a
//! link. Every function returns user payload bytes per second.

/// Bytes of a DATA chunk header (RFC 9260 3.3.1).
pub const H_CHUNK: f64 = 16.0;
/// Bytes of the SCTP common header.
pub const H_SCTP: f64 = 12.0;
/// Bytes of an IPv4 header without options.
pub const H_IP: f64 = 20.0;

/// Eq. 5, headers not counted in flight:
/// `sqrt(D * MTU) * sqrt(3/2) / (RTT * sqrt(p))`, with `d` the DATA chunk
/// payload (bytes), `mtu` in bytes, `rtt` in seconds and `p` the packet loss
/// rate. `None` when a parameter is out of range (`p` or `rtt` not positive).
pub fn eq5(d: f64, mtu: f64, rtt: f64, p: f64) -> Option<f64> {
    if !(d > 0.0 && mtu > 0.0 && rtt > 0.0 && p > 0.0) {
        return None;
    }
    Some((d * mtu).sqrt() * 1.5f64.sqrt() / (rtt * p.sqrt()))
}

/// Eq. 6: `H = 1 + H_chunk / UMS`, the headers' share of the data in flight.
pub fn header_factor(ums: f64) -> f64 {
    1.0 + H_CHUNK / ums
}

/// Eq. 7, chunk headers counted in flight: eq. 5 divided by `sqrt(H)`, with
/// `ums = d`, the message size.
pub fn eq7(d: f64, mtu: f64, rtt: f64, p: f64) -> Option<f64> {
    Some(eq5(d, mtu, rtt, p)? / header_factor(d).sqrt())
}

/// Padding after a DATA chunk of `ums` payload bytes (to 4-byte alignment).
pub fn padding(ums: usize) -> usize {
    (4 - ums % 4) % 4
}

/// Eqs. 8 to 11 (the ceiling the paper states as eq. 12): on an error-free
/// link of `rate_bps` bits per second, with `ums`-byte messages and an IP MTU
/// of `mtu` bytes, `CPP = floor((MTU - H_IP - H_SCTP) / CL)` chunks of
/// `CL = UMS + pad + H_chunk` bytes fill each packet, `PPS = rate / (H_IP +
/// H_SCTP + CPP * CL)` packets leave per second, and the payload rate is
/// `CPP * UMS * PPS`. (Eq. 12 as printed writes CPP without the floor in its
/// first factor; eqs. 8 and 9 have it, and so does this.) `None` when not
/// even one chunk fits.
pub fn eq12(ums: usize, mtu: usize, rate_bps: f64) -> Option<f64> {
    let cl = (ums + padding(ums)) as f64 + H_CHUNK;
    let room = mtu as f64 - H_IP - H_SCTP;
    let cpp = (room / cl).floor();
    if ums == 0 || cpp < 1.0 || rate_bps <= 0.0 {
        return None;
    }
    let pps = rate_bps / 8.0 / (H_IP + H_SCTP + cpp * cl);
    Some(cpp * ums as f64 * pps)
}
