//! Brisk's network lab: experiment files, the runner that plays them in the
//! deterministic simulator, metrics, statistics, plots and the report; and the
//! `brisk` CLI's network commands.

pub mod bootstrap;
pub mod dual_homed;
pub mod emu_report;
pub mod emu_runner;
pub mod emulate;
pub mod experiment;
pub mod failover;
mod figfmt;
pub mod figures;
pub mod flowfigs;
pub mod hosts;
pub mod linux_cc;
pub mod model;
pub mod net;
pub mod never_worse;
pub mod output;
pub mod packet_delay;
pub mod plot;
pub mod positions;
pub mod report;
pub mod reproduce;
pub mod runner;
pub mod shard;
pub mod stats;
pub mod sweep;
pub mod tails;
pub mod traces;
pub mod traffic;
pub mod workload;
