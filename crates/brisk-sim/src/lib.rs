//! Deterministic discrete-event network simulator for Brisk (arrives with the
//! network-lab work); today: pcap output.

pub mod pcap;
