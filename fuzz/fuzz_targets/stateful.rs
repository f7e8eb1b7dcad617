//! The fuzz input drives the step interpreter of the stateful loop
//! (`crates/brisk-proto/tests/fuzzing/mod.rs`): every decision (sends, clock,
//! loss, reordering, injected packets and their mutations) is read from it,
//! and the same invariants are checked after every step.

#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../../crates/brisk-proto/tests/fuzzing/mod.rs"]
mod fuzzing;

fuzz_target!(|data: &[u8]| {
    fuzzing::stateful_case(data);
});
