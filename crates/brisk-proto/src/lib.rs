//! # brisk-proto
//!
//! The sans-IO core of Brisk, a user-space SCTP stack built for the timely
//! delivery of small messages. This crate never touches sockets, clocks or
//! threads: the caller passes time and randomness in and moves the datagrams.
//!
//! Today it holds the complete packet codec, [`wire`].

#![forbid(unsafe_code)]

pub mod wire;
