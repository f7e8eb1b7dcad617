//! Loss recovery: the RTO estimator, the T3-rtx timer rules and fast
//! retransmit. The latency mechanisms (early retransmit, RTO restart, thin
//! streams, tail loss probe, PKTDROP) join here as modules of their own.

pub mod ack_reach;
pub mod early_retransmit;
pub mod failover;
pub mod fast_retransmit;
pub mod pktdrop;
pub mod rack;
pub mod rto;
pub mod rto_restart;
pub mod spurious;
pub mod t3;
pub mod tail_probe;
pub mod thin;
