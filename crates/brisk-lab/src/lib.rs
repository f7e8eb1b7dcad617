//! Brisk's network lab: experiments, metrics, reports, and the `brisk` CLI.
//!
//! Today it holds only `reproduce`, which finds the experiment files; the
//! experiment runner arrives with the simulator (see `DESIGN.md`).

pub mod net;
pub mod reproduce;
