//! The UDP socket's receive buffer, sized for the window we advertise.
//!
//! SCTP's flow control (RFC 9260 6.1) keeps a sender within our a_rwnd, but
//! over UDP (RFC 6951) the datagrams first wait in the kernel's socket buffer,
//! which Linux sizes at `net.core.rmem_default` (208 KiB) whatever we
//! advertise. A sender that fills a 1 MiB window overruns it: the kernel drops
//! datagrams we had room for, and each loss costs a recovery (on loopback, a
//! T3 timeout cut Brisk's bulk rate eightfold once every datagram was
//! acknowledged as RFC 9260 6.2 asks). So the driver asks for a buffer that
//! holds the advertised window: `SO_RCVBUF`, which the kernel caps at
//! `net.core.rmem_max`, then `SO_RCVBUFFORCE` where we may (CAP_NET_ADMIN).
//!
//! Only for the socket [`Endpoint::bind`](crate::Endpoint::bind) opens: an
//! endpoint over the application's transport leaves its buffers to it.

use std::os::fd::AsFd;

#[cfg(target_os = "linux")]
use nix::sys::socket::{getsockopt, setsockopt, sockopt};

/// Asks for a receive buffer of at least `window` bytes of datagrams; keeps
/// what the kernel grants where it refuses more.
#[cfg(target_os = "linux")]
pub fn raise(socket: &impl AsFd, window: usize) {
    // The kernel doubles the value for its bookkeeping and charges each
    // datagram its whole buffer, so ask for twice the window.
    let want = window.saturating_mul(2);
    if current(socket) >= want {
        return;
    }
    let _ = setsockopt(socket, sockopt::RcvBuf, &want);
    if current(socket) < want {
        // Beyond rmem_max: only with CAP_NET_ADMIN.
        let _ = setsockopt(socket, sockopt::RcvBufForce, &want);
    }
}

/// Elsewhere the platform's default stands.
#[cfg(not(target_os = "linux"))]
pub fn raise(_socket: &impl AsFd, _window: usize) {}

/// The receive buffer the kernel gives the socket now.
#[cfg(target_os = "linux")]
pub fn current(socket: &impl AsFd) -> usize {
    getsockopt(&socket.as_fd(), sockopt::RcvBuf).unwrap_or(0)
}

#[cfg(not(target_os = "linux"))]
pub fn current(_socket: &impl AsFd) -> usize {
    0
}
