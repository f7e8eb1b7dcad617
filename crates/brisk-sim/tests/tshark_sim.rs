//! The pcap of a whole simulated run, read by an independent dissector:
//! Wireshark's, through `tshark`. Every packet's CRC32c is good except the
//! one the link corrupted.
//!
//! tshark is required: without it the test fails (it never skips). On
//! failure the pcap files are kept and their paths printed.

mod common;

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::process::Command;

use brisk_proto::Time;
use brisk_sim::{Fate, Impairment};
use common::*;

/// Wireshark's checksum status values (`proto_checksum_enum_e`).
const CHECKSUM_BAD: &str = "0";
const CHECKSUM_GOOD: &str = "1";

fn temp_pcap(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("brisk-sim-{name}-{}.pcap", std::process::id()))
}

/// The SCTP checksum status of every packet in `path`, in order.
fn checksum_statuses(path: &Path) -> Vec<String> {
    let out = Command::new("tshark")
        .arg("-r")
        .arg(path)
        .args([
            "-n",
            "-o",
            "sctp.checksum:CRC 32c",
            "-d",
            "udp.port==9899,sctp",
            "-T",
            "fields",
            "-e",
            "sctp.checksum.status",
        ])
        .output();
    let out = match out {
        Ok(out) => out,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => panic!(
            "tshark is not installed, and this test needs it to check the simulator's pcap \
             output independently. Install it: apt-get install tshark (or run scripts/test, \
             which installs it)"
        ),
        Err(e) => panic!("running tshark: {e}"),
    };
    assert!(
        out.status.success(),
        "tshark failed ({}) on {}:\n{}",
        out.status,
        path.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.trim().to_string())
        .collect()
}

#[test]
fn tshark_reads_a_whole_run_and_finds_only_the_corrupted_packet_bad() {
    let noisy = link().with_impairments([Impairment::CorruptOrdinals {
        ordinals: vec![2],
        data_only: true,
    }]);
    let mut p = pair(5, Client::new(addr(SERVER_ADDR), 10), noisy, link());
    let (fwd_path, back_path) = (temp_pcap("forward"), temp_pcap("back"));
    for (l, path) in [(p.forward, &fwd_path), (p.back, &back_path)] {
        let file = File::create(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        p.sim.capture(l, Box::new(BufWriter::new(file)));
    }
    p.sim.trace(p.forward);
    p.sim.run(Time::from_secs(60));
    p.sim.finish_captures().unwrap();
    assert_eq!(p.numbers(), (0..10).collect::<Vec<_>>());

    // Which packet the link corrupted, by its place in the capture.
    let corrupted: Vec<usize> = p
        .sim
        .packet_log(p.forward)
        .iter()
        .enumerate()
        .filter(|(_, r)| {
            matches!(
                r.fate,
                Fate::Sent {
                    corrupted: true,
                    ..
                }
            )
        })
        .map(|(i, _)| i)
        .collect();
    assert_eq!(corrupted.len(), 1);

    let keep = format!(
        "(pcaps kept: {} and {})",
        fwd_path.display(),
        back_path.display()
    );
    let fwd = checksum_statuses(&fwd_path);
    assert_eq!(
        fwd.len() as u64,
        p.sim.link_stats(p.forward).sent,
        "every packet that entered is in the capture {keep}"
    );
    for (i, status) in fwd.iter().enumerate() {
        let want = if i == corrupted[0] {
            CHECKSUM_BAD
        } else {
            CHECKSUM_GOOD
        };
        assert_eq!(status, want, "client->server packet {} {keep}", i + 1);
    }
    let back = checksum_statuses(&back_path);
    assert_eq!(back.len() as u64, p.sim.link_stats(p.back).sent, "{keep}");
    assert!(
        back.iter().all(|s| s == CHECKSUM_GOOD),
        "server->client: {back:?} {keep}"
    );
    let _ = std::fs::remove_file(&fwd_path);
    let _ = std::fs::remove_file(&back_path);
}
