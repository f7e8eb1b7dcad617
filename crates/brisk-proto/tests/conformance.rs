//! A conformance suite of our own: the ETSI TS 102 369 SCTP test purposes
//! (as nplab's ETSI-SCTP-Conformance-Testsuite groups them) and nplab's
//! FORWARD-TSN, I-DATA and RE-CONFIG scripts, each played by a tester that
//! builds and reads packets against one Brisk endpoint, on virtual time.
//! `conformance/README.md` tabulates what is covered.

mod harness;

#[path = "conformance/tester.rs"]
mod tester;

#[path = "conformance/association.rs"]
mod association;

#[path = "conformance/termination.rs"]
mod termination;

#[path = "conformance/duplicates.rs"]
mod duplicates;

#[path = "conformance/ootb.rs"]
mod ootb;

#[path = "conformance/errors.rs"]
mod errors;

#[path = "conformance/heartbeat.rs"]
mod heartbeat;

#[path = "conformance/timers.rs"]
mod timers;

#[path = "conformance/sack.rs"]
mod sack;

#[path = "conformance/bundling.rs"]
mod bundling;

#[path = "conformance/data.rs"]
mod data;

#[path = "conformance/forward_tsn.rs"]
mod forward_tsn;

#[path = "conformance/idata.rs"]
mod idata;

#[path = "conformance/reconfig.rs"]
mod reconfig;
