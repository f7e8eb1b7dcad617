//! Measures the emulator's accuracy with the published plan and prints the
//! tables (as root): `cargo run --release -p brisk-emu --example accuracy`.
//! `brisk emulate-accuracy` runs the same measurement.

fn main() {
    match brisk_emu::accuracy::measure(&brisk_emu::accuracy::Plan::default()) {
        Ok(acc) => print!("{acc}"),
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    }
}
