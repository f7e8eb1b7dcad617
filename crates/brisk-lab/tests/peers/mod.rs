//! What the workload tests of the interop peers share: building a peer,
//! free ports, the receiver's rows and their checks.

#![allow(dead_code)]

use std::net::UdpSocket;
use std::process::Output;

pub const MS: u64 = 1_000_000;

#[path = "../../../../tests/interop/build_peer.rs"]
mod build;
pub use build::build_peer;

/// Two distinct free UDP ports on loopback.
pub fn two_ports() -> (u16, u16) {
    let a = UdpSocket::bind("127.0.0.1:0").unwrap();
    let b = UdpSocket::bind("127.0.0.1:0").unwrap();
    (
        a.local_addr().unwrap().port(),
        b.local_addr().unwrap().port(),
    )
}

#[derive(Debug)]
pub struct Record {
    pub seq: u32,
    pub written_ns: u64,
    pub read_ns: u64,
    pub size: usize,
}

impl Record {
    pub fn mtt_ns(&self) -> u64 {
        self.read_ns.saturating_sub(self.written_ns)
    }
}

pub fn parse(csv: &str) -> Vec<Record> {
    let mut lines = csv.lines();
    assert_eq!(lines.next(), Some("seq,written_ns,read_ns,size"), "{csv}");
    lines
        .map(|line| {
            let f: Vec<&str> = line.split(',').collect();
            assert_eq!(f.len(), 4, "bad record {line:?}");
            Record {
                seq: f[0].parse().unwrap(),
                written_ns: f[1].parse().unwrap(),
                read_ns: f[2].parse().unwrap(),
                size: f[3].parse().unwrap(),
            }
        })
        .collect()
}

pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

pub fn check_ok(out: &Output, what: &str, stream: &[u8], want: &str) {
    assert!(
        out.status.success() && text(stream).lines().any(|l| l == want),
        "{what}: {:?}, want {want:?}\nstdout: {}\nstderr: {}",
        out.status,
        text(&out.stdout),
        text(&out.stderr)
    );
}

/// The rows of `n` messages of `size` bytes: each seq once, each MTT above 0
/// and under 50 ms; returns the write stamps by seq.
pub fn check_records(recs: &[Record], n: usize, size: usize) -> Vec<u64> {
    let mut written = vec![None; n];
    for r in recs {
        let i = r.seq as usize;
        assert!(i < n, "seq {} out of range: {r:?}", r.seq);
        assert!(written[i].is_none(), "seq {} twice", r.seq);
        written[i] = Some(r.written_ns);
        assert_eq!(r.size, size, "{r:?}");
        assert!(
            r.read_ns > r.written_ns && r.mtt_ns() < 50 * MS,
            "MTT of {:.3} ms: {r:?}",
            r.mtt_ns() as f64 / 1e6
        );
    }
    written.into_iter().map(Option::unwrap).collect()
}
