//! Impairment pattern files: one impairment per line, applied in order to the
//! packets entering a link direction.
//!
//! ```text
//! # KauNet-style: lose the 3rd and 4th DATA packets, then a loss burst
//! drop-data 3 4
//! window 1.5s 2s
//! bernoulli 0.01
//! ```
//!
//! `#` starts a comment that runs to the end of the line; blank lines are
//! ignored; words are separated by spaces or tabs. Ordinals are 1-based and
//! count the packets entering the link direction (before any impairment acts);
//! the `-data` forms count only packets that carry a DATA or I-DATA chunk, so
//! the handshake, SACKs and heartbeats are not counted. An ordinal list is
//! numbers and inclusive ranges: `5 6 12 20-24`.
//!
//! | line | effect |
//! | --- | --- |
//! | `drop N...` | drop the packets with these ordinals |
//! | `drop-data N...` | drop the DATA packets with these ordinals (retransmissions and copies count) |
//! | `drop-new-chunk K...` | drop the packet carrying the first transmission of the K-th new DATA chunk (numbered by TSN; retransmissions never count) |
//! | `drop-new-byte B...` | drop the TCP segment carrying the first transmission of the B-th byte of its connection's stream (per direction, from the first payload byte seen; retransmissions never count) |
//! | `window FROM TO` | drop every packet entering at FROM <= t < TO |
//! | `bernoulli P` | drop each packet with probability P |
//! | `gilbert P R [LOSS_GOOD LOSS_BAD]` | Gilbert-Elliott: per packet go good->bad with P, bad->good with R, then drop with the state's loss probability (default 0 and 1) |
//! | `corrupt P` | corrupt each packet with probability P |
//! | `corrupt-at N...` | corrupt the packets with these ordinals |
//! | `corrupt-data-at N...` | corrupt the DATA packets with these ordinals |
//! | `delay-at T DELAY` | packets starting transmission at or after T get propagation delay DELAY |
//! | `bandwidth-at T RATE` | packets starting transmission at or after T are serialized at RATE |
//! | `reorder P EXTRA` | with probability P, deliver the packet EXTRA later than normal |
//! | `duplicate P` | with probability P, deliver the packet twice |
//! | `jitter MAX` | delay each packet by a uniform 0 to MAX more, never letting it overtake the one before |
//! | `tick PERIOD` | packets leave the link only on ticks of PERIOD (Dummynet: 1ms) |
//!
//! Times and durations are a decimal number and a unit: `s`, `ms`, `us`
//! (`1.5s`, `20ms`, `250us`). Rates are a decimal number and a unit: `bit`,
//! `kbit`, `mbit`, `gbit` (powers of 1000, per second; `0bit` means infinitely
//! fast). Probabilities are decimal numbers from 0 to 1. A corrupted packet has
//! bits of one byte flipped after the common header, so the receiver's CRC32c
//! check fails; it still takes its time on the link.
//!
//! Errors name the line (1-based) and what was expected:
//! `line 3: bernoulli: expected a probability from 0 to 1, found `1.5``.

use std::time::Duration;

use crate::impair::Impairment;

/// The most ordinals one line may list (ranges expanded).
pub const MAX_ORDINALS_PER_LINE: u64 = 1_000_000;

/// A pattern line that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct PatternError {
    /// 1-based.
    pub line: usize,
    pub message: String,
}

/// Every form a line may take, for error messages.
const FORMS: &str = "drop, drop-data, drop-new-chunk, drop-new-byte, window, bernoulli, gilbert, corrupt, corrupt-at, \
corrupt-data-at, delay-at, bandwidth-at, reorder, duplicate, jitter, tick";

/// Parses a pattern file (see the module documentation).
pub fn parse_pattern(text: &str) -> Result<Vec<Impairment>, PatternError> {
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let content = raw.split('#').next().unwrap_or("");
        let words: Vec<&str> = content.split_whitespace().collect();
        let Some((&keyword, args)) = words.split_first() else {
            continue;
        };
        let imp = parse_line(keyword, args).map_err(|message| PatternError {
            line: i + 1,
            message,
        })?;
        out.push(imp);
    }
    Ok(out)
}

fn parse_line(keyword: &str, args: &[&str]) -> Result<Impairment, String> {
    let fail = |what: &str, found: &str| format!("{keyword}: expected {what}, found `{found}`");
    let count = |n: usize, usage: &str| {
        if args.len() == n {
            Ok(())
        } else {
            Err(format!(
                "{keyword}: expected {n} argument{} ({usage}), found {}",
                if n == 1 { "" } else { "s" },
                args.len()
            ))
        }
    };
    let prob = |s: &str| match s.parse::<f64>() {
        Ok(p) if (0.0..=1.0).contains(&p) => Ok(p),
        _ => Err(fail("a probability from 0 to 1", s)),
    };
    let dur = |s: &str| match parse_duration(s) {
        Some(d) => Ok(d),
        None => Err(fail("a duration such as 1.5s, 20ms or 250us", s)),
    };
    Ok(match keyword {
        "drop" | "drop-data" | "corrupt-at" | "corrupt-data-at" => {
            let ordinals = ordinals(keyword, args)?;
            let data_only = keyword.contains("data");
            if keyword.starts_with("drop") {
                Impairment::DropOrdinals {
                    ordinals,
                    data_only,
                }
            } else {
                Impairment::CorruptOrdinals {
                    ordinals,
                    data_only,
                }
            }
        }
        "drop-new-chunk" => Impairment::DropNewChunks {
            chunks: ordinals(keyword, args)?,
        },
        "drop-new-byte" => Impairment::DropNewBytes {
            bytes: ordinals(keyword, args)?,
        },
        "jitter" => {
            count(1, "MAX, e.g. `jitter 2ms`")?;
            Impairment::Jitter { max: dur(args[0])? }
        }
        "tick" => {
            count(1, "PERIOD, e.g. `tick 1ms`")?;
            Impairment::Tick {
                period: dur(args[0])?,
            }
        }
        "window" => {
            count(2, "FROM TO, e.g. `window 1.5s 2s`")?;
            let (from, to) = (dur(args[0])?, dur(args[1])?);
            if from >= to {
                return Err(fail("an end after the start", args[1]));
            }
            Impairment::DropWindow { from, to }
        }
        "bernoulli" => {
            count(1, "P, e.g. `bernoulli 0.01`")?;
            Impairment::Bernoulli { p: prob(args[0])? }
        }
        "gilbert" => {
            if args.len() != 2 && args.len() != 4 {
                return Err(format!(
                    "gilbert: expected 2 or 4 arguments (P R [LOSS_GOOD LOSS_BAD], \
                     e.g. `gilbert 0.01 0.3 0 1`), found {}",
                    args.len()
                ));
            }
            let (loss_good, loss_bad) = match args.len() {
                4 => (prob(args[2])?, prob(args[3])?),
                _ => (0.0, 1.0),
            };
            Impairment::GilbertElliott {
                p: prob(args[0])?,
                r: prob(args[1])?,
                loss_good,
                loss_bad,
            }
        }
        "corrupt" => {
            count(1, "P, e.g. `corrupt 0.001`")?;
            Impairment::Corrupt { p: prob(args[0])? }
        }
        "delay-at" => {
            count(2, "T DELAY, e.g. `delay-at 10s 50ms`")?;
            Impairment::DelayChange {
                at: dur(args[0])?,
                delay: dur(args[1])?,
            }
        }
        "bandwidth-at" => {
            count(2, "T RATE, e.g. `bandwidth-at 5s 1000kbit`")?;
            let at = dur(args[0])?;
            let Some(bandwidth_bps) = parse_rate(args[1]) else {
                return Err(fail("a rate such as 1000kbit, 2.5mbit or 1gbit", args[1]));
            };
            Impairment::BandwidthChange { at, bandwidth_bps }
        }
        "reorder" => {
            count(2, "P EXTRA, e.g. `reorder 0.01 20ms`")?;
            Impairment::Reorder {
                p: prob(args[0])?,
                extra: dur(args[1])?,
            }
        }
        "duplicate" => {
            count(1, "P, e.g. `duplicate 0.005`")?;
            Impairment::Duplicate { p: prob(args[0])? }
        }
        other => {
            return Err(format!(
                "unknown impairment `{other}`; expected one of {FORMS}"
            ));
        }
    })
}

/// A list of ordinals and inclusive ranges, at least one.
fn ordinals(keyword: &str, args: &[&str]) -> Result<Vec<u64>, String> {
    if args.is_empty() {
        return Err(format!(
            "{keyword}: expected packet ordinals (1-based numbers or ranges such as 5 6 12 20-24), found none"
        ));
    }
    let bad = |s: &str| {
        format!(
            "{keyword}: expected a packet ordinal (a number from 1, or a range such as 20-24), found `{s}`"
        )
    };
    let number = |s: &str| s.parse::<u64>().ok().filter(|&n| n >= 1);
    let mut out = Vec::new();
    for &arg in args {
        let (lo, hi) = match arg.split_once('-') {
            Some((a, b)) => match (number(a), number(b)) {
                (Some(a), Some(b)) if a <= b => (a, b),
                _ => return Err(bad(arg)),
            },
            None => match number(arg) {
                Some(n) => (n, n),
                None => return Err(bad(arg)),
            },
        };
        if out.len() as u64 + (hi - lo) >= MAX_ORDINALS_PER_LINE {
            return Err(format!(
                "{keyword}: expected at most {MAX_ORDINALS_PER_LINE} ordinals on one line, found more at `{arg}`"
            ));
        }
        out.extend(lo..=hi);
    }
    Ok(out)
}

/// `digits[.digits]` times `10^scale`, exactly (extra decimals truncated).
fn decimal(s: &str, scale: u32) -> Option<u128> {
    let (int, frac) = s.split_once('.').unwrap_or((s, ""));
    let digits = |d: &str| d.bytes().all(|b| b.is_ascii_digit());
    if int.is_empty() && frac.is_empty() || !digits(int) || !digits(frac) {
        return None;
    }
    let unit = 10u128.checked_pow(scale)?;
    let mut value = if int.is_empty() {
        0
    } else {
        int.parse::<u128>().ok()?.checked_mul(unit)?
    };
    let mut place = unit;
    for b in frac.bytes() {
        place /= 10;
        value = value.checked_add(u128::from(b - b'0') * place)?;
    }
    Some(value)
}

/// `1.5s`, `20ms`, `250us`.
fn parse_duration(s: &str) -> Option<Duration> {
    let (number, scale) = if let Some(n) = s.strip_suffix("ms") {
        (n, 6)
    } else if let Some(n) = s.strip_suffix("us") {
        (n, 3)
    } else {
        (s.strip_suffix('s')?, 9)
    };
    let ns = u64::try_from(decimal(number, scale)?).ok()?;
    Some(Duration::from_nanos(ns))
}

/// `1000kbit`, `2.5mbit`, `1gbit`, `64000bit`; case does not matter.
fn parse_rate(s: &str) -> Option<u64> {
    let lower = s.to_ascii_lowercase();
    let number = lower.strip_suffix("bit")?;
    let (number, scale) = match number.as_bytes().last()? {
        b'k' => (&number[..number.len() - 1], 3),
        b'm' => (&number[..number.len() - 1], 6),
        b'g' => (&number[..number.len() - 1], 9),
        _ => (number, 0),
    };
    u64::try_from(decimal(number, scale)?).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    fn one(line: &str) -> Impairment {
        let v = parse_pattern(line).unwrap();
        assert_eq!(v.len(), 1, "{line}");
        v.into_iter().next().unwrap()
    }

    fn error(text: &str) -> PatternError {
        parse_pattern(text).unwrap_err()
    }

    #[test]
    fn every_line_form_parses() {
        let text = "\
# a comment line

drop 5 6 12        # trailing comment
drop-data 3
window 1.5s 2s
bernoulli 0.01
gilbert 0.01 0.3 0 1
gilbert 0.02 0.5
corrupt 0.001
corrupt-at 7
corrupt-data-at 2
delay-at 10s 50ms
bandwidth-at 5s 1000kbit
reorder 0.01 20ms
duplicate 0.005
drop-new-chunk 4
drop-new-byte 613 817
";
        let got = parse_pattern(text).unwrap();
        assert_eq!(
            got,
            vec![
                Impairment::DropOrdinals {
                    ordinals: vec![5, 6, 12],
                    data_only: false
                },
                Impairment::DropOrdinals {
                    ordinals: vec![3],
                    data_only: true
                },
                Impairment::DropWindow {
                    from: ms(1500),
                    to: ms(2000)
                },
                Impairment::Bernoulli { p: 0.01 },
                Impairment::GilbertElliott {
                    p: 0.01,
                    r: 0.3,
                    loss_good: 0.0,
                    loss_bad: 1.0
                },
                Impairment::GilbertElliott {
                    p: 0.02,
                    r: 0.5,
                    loss_good: 0.0,
                    loss_bad: 1.0
                },
                Impairment::Corrupt { p: 0.001 },
                Impairment::CorruptOrdinals {
                    ordinals: vec![7],
                    data_only: false
                },
                Impairment::CorruptOrdinals {
                    ordinals: vec![2],
                    data_only: true
                },
                Impairment::DelayChange {
                    at: ms(10_000),
                    delay: ms(50)
                },
                Impairment::BandwidthChange {
                    at: ms(5000),
                    bandwidth_bps: 1_000_000
                },
                Impairment::Reorder {
                    p: 0.01,
                    extra: ms(20)
                },
                Impairment::Duplicate { p: 0.005 },
                Impairment::DropNewChunks { chunks: vec![4] },
                Impairment::DropNewBytes {
                    bytes: vec![613, 817]
                },
            ]
        );
    }

    #[test]
    fn ranges_units_and_decimals_are_exact() {
        assert_eq!(
            one("drop 1 3-5\t9"),
            Impairment::DropOrdinals {
                ordinals: vec![1, 3, 4, 5, 9],
                data_only: false
            }
        );
        assert_eq!(parse_duration("0.1s"), Some(ms(100)));
        assert_eq!(parse_duration("250us"), Some(Duration::from_micros(250)));
        assert_eq!(
            parse_duration("1.0005ms"),
            Some(Duration::from_nanos(1_000_500))
        );
        assert_eq!(parse_duration(".5s"), Some(ms(500)));
        assert_eq!(parse_rate("2.5Mbit"), Some(2_500_000));
        assert_eq!(parse_rate("1gbit"), Some(1_000_000_000));
        assert_eq!(parse_rate("64000bit"), Some(64_000));
        assert_eq!(parse_rate("0bit"), Some(0));
        for bad in ["", "s", "1", "1.2.3s", "-1s", "1 s", "1min", "ms"] {
            assert_eq!(parse_duration(bad), None, "{bad:?}");
        }
        for bad in [
            "1000",
            "kbit",
            "1kbps",
            "-5kbit",
            "99999999999999999999gbit",
        ] {
            assert_eq!(parse_rate(bad), None, "{bad:?}");
        }
        assert!(parse_pattern("").unwrap().is_empty());
        assert!(parse_pattern("  # only a comment\n\n").unwrap().is_empty());
    }

    #[test]
    fn errors_name_the_line_and_the_expectation() {
        let e = error("drop 1\n\nbernoulli 1.5\n");
        assert_eq!(e.line, 3);
        assert_eq!(
            e.to_string(),
            "line 3: bernoulli: expected a probability from 0 to 1, found `1.5`"
        );
        let e = error("# header\nlose 5");
        assert_eq!(e.line, 2);
        assert!(e.message.contains("unknown impairment `lose`"), "{e}");
        assert!(e.message.contains("drop-data"), "{e}");
        let e = error("window 2s");
        assert_eq!(
            e.to_string(),
            "line 1: window: expected 2 arguments (FROM TO, e.g. `window 1.5s 2s`), found 1"
        );
        assert!(
            error("window 2s 1s")
                .message
                .contains("an end after the start")
        );
        assert!(
            error("window 2 3s")
                .message
                .contains("a duration such as 1.5s")
        );
        assert!(error("drop").message.contains("found none"));
        assert!(error("drop 0").message.contains("found `0`"));
        assert!(error("drop 7-3").message.contains("found `7-3`"));
        assert!(error("drop-data x").message.contains("packet ordinal"));
        assert!(error("drop 1-2000000").message.contains("at most"));
        assert!(error("gilbert 0.1").message.contains("2 or 4 arguments"));
        assert!(
            error("gilbert 0.1 0.2 0.3")
                .message
                .contains("2 or 4 arguments")
        );
        assert!(
            error("bandwidth-at 5s 10mbps")
                .message
                .contains("a rate such as")
        );
        assert!(error("reorder 0.1").message.contains("P EXTRA"));
        assert!(error("duplicate nan").message.contains("probability"));
        assert!(
            error("corrupt 0.1 0.2")
                .message
                .contains("expected 1 argument ")
        );
    }
}
