//! A tshark capture of loopback UDP, checked packet by packet: shared by the
//! interop tests (`interop.rs`, `datachannel_interop.rs`) through `#[path]`.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// tshark's option to verify SCTP's CRC32c checksum (RFC 9260 6.8).
const CRC32C: &[&str] = &["-o", "sctp.checksum:CRC 32c"];

/// Field `i` of a tshark output line: its values (tshark's aggregator `sep`
/// between them), without empty ones.
fn field_list<'a>(f: &[&'a str], i: usize, sep: char) -> Vec<&'a str> {
    f.get(i)
        .map(|v| v.split(sep).filter(|x| !x.is_empty()).collect())
        .unwrap_or_default()
}

/// A tshark capture of loopback UDP on some ports.
pub struct Capture {
    child: Child,
    file: PathBuf,
    /// The peer's port, then Brisk's.
    ports: Vec<u16>,
}

impl Capture {
    pub fn start(name: &str, ports: &[u16]) -> Capture {
        let uid = Command::new("id")
            .arg("-u")
            .output()
            .map(|o| o.stdout)
            .unwrap_or_default();
        assert_eq!(
            String::from_utf8_lossy(&uid).trim(),
            "0",
            "capturing on loopback needs root (CI and scripts/test run as root)"
        );
        // Unique per capture: tests running at once may share a name.
        static SEQ: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let seq = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let file = std::env::temp_dir().join(format!(
            "brisk-interop-{name}-{}-{seq}.pcapng",
            std::process::id()
        ));
        let filter = ports
            .iter()
            .map(|p| format!("udp port {p}"))
            .collect::<Vec<_>>()
            .join(" or ");
        let mut child = Command::new("tshark")
            .args(["-i", "lo", "-q", "-f", &filter, "-w"])
            .arg(&file)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("tshark is needed for the interop captures: apt-get install tshark");
        // Wait until tshark says it is capturing.
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if line.contains("Capturing on") {
                    let _ = tx.send(());
                }
            }
        });
        rx.recv_timeout(Duration::from_secs(20))
            .expect("tshark did not start capturing on lo within 20 s");
        std::thread::sleep(Duration::from_millis(200));
        Capture {
            child,
            file,
            ports: ports.to_vec(),
        }
    }

    /// Brisk's port: the last one given to `start`.
    pub fn ours(&self) -> u16 {
        self.ports.last().copied().unwrap_or_default()
    }

    /// Runs tshark over the capture file, every port decoded as SCTP over
    /// UDP, with `args` after that; fails the test when tshark does.
    fn read(&self, args: &[&[&str]]) -> String {
        let mut cmd = Command::new("tshark");
        cmd.arg("-r").arg(&self.file);
        for p in &self.ports {
            cmd.args(["-d", &format!("udp.port=={p},sctp")]);
        }
        let out = cmd.args(args.concat()).output().expect("tshark");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Stops capturing (once), leaving the file to read.
    fn stop(&mut self) {
        if self.child.try_wait().ok().flatten().is_some() {
            return;
        }
        std::thread::sleep(Duration::from_millis(300));
        let _ = Command::new("kill")
            .args(["-INT", &self.child.id().to_string()])
            .status();
        let _ = self.child.wait();
    }

    /// Stops the capture and lists the DCEP messages in it (SCTP PPID 50,
    /// which tshark dissects as `rtcdc`, RFC 8832): per UDP source port, the
    /// message types and the OPENs' labels, in capture order. A frame tshark
    /// finds malformed or flags as an error fails the test when Brisk sent it,
    /// and is reported when the peer did.
    #[allow(dead_code)] // used by datachannel_interop.rs only
    pub fn dcep_messages(&mut self) -> std::collections::HashMap<u16, (Vec<u8>, Vec<String>)> {
        self.stop();
        let text = self.read(&[
            CRC32C,
            &["-Y", "rtcdc"],
            &["-T", "fields", "-E", "occurrence=a", "-E", "aggregator=;"],
            &["-e", "frame.number", "-e", "udp.srcport"],
            &["-e", "rtcdc.message_type", "-e", "rtcdc.label"],
            &["-e", "_ws.malformed", "-e", "_ws.expert.severity"],
        ]);
        let ours = self.ours();
        let mut found: std::collections::HashMap<u16, (Vec<u8>, Vec<String>)> = Default::default();
        for line in text.lines() {
            let f: Vec<&str> = line.split('\t').collect();
            let port: u16 = f.get(1).and_then(|p| p.parse().ok()).unwrap_or(0);
            let list = |i: usize| field_list(&f, i, ';');
            let kinds = list(2)
                .iter()
                .map(|t| t.parse().unwrap_or(0))
                .collect::<Vec<u8>>();
            let labels = list(3).iter().map(|l| l.to_string()).collect::<Vec<_>>();
            let malformed = f.get(4).is_some_and(|m| !m.is_empty());
            // Expert severity 8388608 is "error" (4194304 warning).
            let error = f.get(5).is_some_and(|e| e.contains("8388608"));
            if (malformed || error) && port == ours {
                panic!("DCEP frame {} sent by Brisk: {line}", f[0]);
            } else if malformed || error {
                eprintln!("note: DCEP frame {} sent by the peer: {line}", f[0]);
            }
            let entry = found.entry(port).or_default();
            entry.0.extend(kinds);
            entry.1.extend(labels);
        }
        found
    }

    /// Stops the capture and counts the SCTP chunks of `chunk_type` in it,
    /// per UDP source port.
    #[allow(dead_code)] // used by datachannel_interop.rs only
    pub fn chunks(&mut self, chunk_type: u8) -> std::collections::HashMap<u16, usize> {
        self.stop();
        let text = self.read(&[
            &["-T", "fields", "-E", "occurrence=a", "-E", "aggregator=;"],
            &["-e", "udp.srcport", "-e", "sctp.chunk_type"],
        ]);
        let mut found: std::collections::HashMap<u16, usize> = Default::default();
        for line in text.lines() {
            let mut f = line.split('\t');
            let port = f.next().and_then(|p| p.parse().ok()).unwrap_or(0);
            let n = f
                .next()
                .unwrap_or("")
                .split(';')
                .filter(|t| t.parse() == Ok(chunk_type))
                .count();
            *found.entry(port).or_default() += n;
        }
        found
    }

    /// Stops the capture and checks every SCTP packet in it; returns the count.
    pub fn finish(mut self) -> usize {
        let sctp = self.stop_and_check();
        let _ = std::fs::remove_file(&self.file);
        sctp
    }

    /// Like `finish`, and also finds the packets matching each tshark
    /// display filter: for each, their capture times (s, from the first).
    #[allow(dead_code)] // used by interop.rs only
    pub fn finish_matching(mut self, filters: &[String]) -> (usize, Vec<Vec<f64>>) {
        let sctp = self.stop_and_check();
        let times = filters.iter().map(|f| self.times(f)).collect();
        let _ = std::fs::remove_file(&self.file);
        (sctp, times)
    }

    /// When the captured packets matching a tshark display filter were seen.
    #[allow(dead_code)] // used by interop.rs only
    fn times(&self, filter: &str) -> Vec<f64> {
        self.read(&[&["-Y", filter, "-T", "fields", "-e", "frame.time_relative"]])
            .lines()
            .map(|t| t.trim().parse().expect("frame.time_relative"))
            .collect()
    }

    /// Stops the capture and checks every SCTP packet in it; returns the
    /// count and keeps the file.
    fn stop_and_check(&mut self) -> usize {
        self.stop();
        let text = self.read(&[
            CRC32C,
            &["-T", "fields", "-e", "frame.number", "-e", "udp.srcport"],
            &["-e", "sctp.checksum.status"],
            &["-e", "_ws.malformed", "-e", "_ws.expert.severity"],
        ]);
        let ours = self.ours().to_string();
        let mut sctp = 0;
        for line in text.lines() {
            let f: Vec<&str> = line.split('\t').collect();
            let status = f.get(2).copied().unwrap_or("");
            if status.is_empty() {
                continue;
            }
            sctp += 1;
            assert_eq!(
                status,
                "1",
                "frame {} has a bad checksum in {}",
                f[0],
                self.file.display()
            );
            let malformed = f.get(3).is_some_and(|m| !m.is_empty());
            // Ours is the last port; the peer's own quirks (pion v1.11.3
            // now and then sends a HEARTBEAT without its Heartbeat Info
            // parameter) are reported, not failed: Brisk must only survive them.
            if malformed && f[1] == ours {
                panic!(
                    "frame {} (sent by Brisk) is malformed in {}",
                    f[0],
                    self.file.display()
                );
            } else if malformed {
                eprintln!(
                    "note: frame {} (sent by the peer) is malformed in {}",
                    f[0],
                    self.file.display()
                );
            }
        }
        assert!(
            sctp > 0,
            "no SCTP packets captured in {}",
            self.file.display()
        );
        sctp
    }
}

/// One chunk of user data as tshark dissects it.
#[allow(dead_code)] // used by interop.rs only
#[derive(Debug, Clone, Copy)]
pub struct WireChunk {
    /// Sent from this UDP port.
    pub from: u16,
    /// I-DATA (with a MID), or DATA (with an SSN).
    pub idata: bool,
    pub tsn: u32,
    pub stream: u16,
}

impl Capture {
    /// Stops the capture and returns every DATA and I-DATA chunk in it,
    /// after the checks of `finish`; also the SCTP packet count.
    #[allow(dead_code)] // used by interop.rs only
    pub fn finish_with_chunks(mut self) -> (usize, Vec<WireChunk>) {
        self.stop();
        // Per frame: the TSN and stream of each DATA/I-DATA chunk, and
        // which of them carry a MID (I-DATA) or an SSN (DATA).
        let text = self.read(&[
            CRC32C,
            &[
                "-Y",
                "sctp.data_tsn_raw",
                "-T",
                "fields",
                "-E",
                "aggregator=,",
            ],
            &["-e", "udp.srcport", "-e", "sctp.data_tsn_raw"],
            &[
                "-e",
                "sctp.data_sid",
                "-e",
                "sctp.data_mid",
                "-e",
                "sctp.data_ssn",
            ],
        ]);
        let mut chunks = Vec::new();
        for line in text.lines() {
            let f: Vec<&str> = line.split('\t').collect();
            let list = |i: usize| field_list(&f, i, ',');
            let (tsns, sids) = (list(1), list(2));
            let (mids, ssns) = (list(3).len(), list(4).len());
            assert_eq!(tsns.len(), sids.len(), "frame `{line}`");
            assert!(
                mids == 0 || ssns == 0,
                "DATA and I-DATA in one packet: `{line}`"
            );
            let from = f[0].parse().unwrap_or(0);
            for (t, s) in tsns.iter().zip(&sids) {
                chunks.push(WireChunk {
                    from,
                    idata: mids > 0,
                    tsn: t.parse().unwrap(),
                    // tshark prints the stream identifier in hex.
                    stream: u16::from_str_radix(s.trim_start_matches("0x"), 16).unwrap(),
                });
            }
        }
        let sctp = self.stop_and_check();
        let _ = std::fs::remove_file(&self.file);
        (sctp, chunks)
    }
}
