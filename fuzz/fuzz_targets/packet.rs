//! One packet, from the fuzz input, into an established association: to B as
//! it is, then to B and to A with the live verification tag, each with a
//! correct CRC32c; then the clock runs, and every invariant of the stateful
//! driver is checked (`crates/brisk-proto/tests/fuzzing/mod.rs`).

#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../../crates/brisk-proto/tests/fuzzing/mod.rs"]
mod fuzzing;

fuzz_target!(|data: &[u8]| {
    fuzzing::packet_case(data);
});
