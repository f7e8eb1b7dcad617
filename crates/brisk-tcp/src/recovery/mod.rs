//! Loss recovery: the RTO estimator, the SACK scoreboard, NewReno's partial
//! ACKs, and the optional mechanisms (Early Retransmit, RACK-TLP and the
//! thin-stream options), each in a module of its own. The connection
//! (`conn::ack`) decides when each applies.

pub mod early_retransmit;
pub mod newreno;
pub mod rack;
pub mod rto;
pub mod scoreboard;
pub mod thin;
pub mod tlp;
