//! Deterministic shards of an experiment's runs, and their merge.
//!
//! `brisk run EXP --shard K/N` runs the K-th of N disjoint slices of the runs
//! [`runner::expand`] lists (sweep points x variants x replications x loss
//! positions) and writes a shard directory; `brisk merge DIR...` puts the N
//! shards together into exactly the records and counters an unsharded run
//! gives, so its `runs.csv`, `summary.csv` and `summary.json` are the same
//! bytes.
//!
//! Assignment is round-robin: run `i` (0-based, in `expand` order) belongs to
//! shard `i mod N + 1`. `expand` lists the loss positions of one (point,
//! replication, variant) next to each other and the variants of a point next
//! to each other, so round-robin deals every shard a near-equal share of each
//! point, variant and position; contiguous ranges would give one shard all of
//! the slow points (long delays, low bandwidths) and another all the fast.
//!
//! A shard directory holds:
//! - `manifest.json`: format and version, the experiment's name and content
//!   hash, K, N, the runs of the shard and of the whole experiment, the
//!   records; written last, so a directory without it is an unfinished shard;
//! - `runs.csv`: the shard's records, the columns of the report's `runs.csv`;
//! - `shard-runs.csv`: one row per run: its number in `expand` order, its
//!   key, how many of the records are its, and the counters the report needs
//!   that are not records (simulated events, virtual time, completeness).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::experiment::Experiment;
use crate::runner::{self, Record, RunTotals, SweepValues};

/// The `format` field of every shard manifest.
pub const FORMAT: &str = "brisk-shard";
/// The version of the shard directory's layout; a reader refuses others.
pub const FORMAT_VERSION: u32 = 1;
pub const MANIFEST_FILE: &str = "manifest.json";
pub const RECORDS_FILE: &str = "runs.csv";
pub const RUNS_FILE: &str = "shard-runs.csv";

/// Shard K of N (1 <= K <= N).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Shard {
    /// 1-based.
    pub index: u32,
    pub count: u32,
}

impl Shard {
    /// Shard `index` of `count`, or why not.
    pub fn new(index: u32, count: u32) -> Result<Shard, ShardError> {
        let spec = format!("{index}/{count}");
        if count == 0 {
            return Err(ShardError::Spec {
                spec,
                why: "N must be at least 1".into(),
            });
        }
        if index == 0 || index > count {
            return Err(ShardError::Spec {
                spec,
                why: format!("K must be from 1 to N = {count}"),
            });
        }
        Ok(Shard { index, count })
    }

    /// Whether run `i` (0-based, in [`runner::expand`] order) is this shard's.
    pub fn owns(&self, i: usize) -> bool {
        i % self.count as usize == (self.index - 1) as usize
    }

    /// How many of `total` runs are this shard's.
    pub fn len_of(&self, total: usize) -> usize {
        (0..total).filter(|&i| self.owns(i)).count()
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl FromStr for Shard {
    type Err = ShardError;

    /// `K/N`, e.g. `2/7`.
    fn from_str(s: &str) -> Result<Shard, ShardError> {
        let bad = |why: &str| ShardError::Spec {
            spec: s.to_owned(),
            why: why.to_owned(),
        };
        let (k, n) = s
            .split_once('/')
            .ok_or_else(|| bad("expected K/N, e.g. 2/7"))?;
        let k: u32 = k
            .trim()
            .parse()
            .map_err(|_| bad("K is not a whole number (expected K/N, e.g. 2/7)"))?;
        let n: u32 = n
            .trim()
            .parse()
            .map_err(|_| bad("N is not a whole number (expected K/N, e.g. 2/7)"))?;
        Shard::new(k, n).map_err(|_| {
            if n == 0 {
                bad("N must be at least 1")
            } else {
                bad(&format!("K must be from 1 to N = {n}"))
            }
        })
    }
}

/// What a shard, a set of shards or a shard directory got wrong.
#[derive(Debug, thiserror::Error)]
pub enum ShardError {
    #[error("--shard {spec}: {why}")]
    Spec { spec: String, why: String },
    #[error("{}: {why}", path.display())]
    Io { path: PathBuf, why: String },
    /// A file of a shard directory that is not what this version writes.
    #[error("{}: {why}", path.display())]
    Corrupt { path: PathBuf, why: String },
    #[error("no shards to merge")]
    NoShards,
    /// `found` and `expected` name the experiment and its hash.
    #[error("{origin}: shard of another experiment: it is {found}, expected {expected}")]
    OtherExperiment {
        origin: String,
        found: String,
        expected: String,
    },
    #[error(
        "{origin}: shard {shard} is one of {found} shards, but {first} is one of {expected}: \
         all shards must come from the same --shard K/N split"
    )]
    DifferentCount {
        origin: String,
        shard: Shard,
        found: u32,
        first: String,
        expected: u32,
    },
    #[error("shard {shard} is there twice: {first} and {second}")]
    Duplicate {
        shard: Shard,
        first: String,
        second: String,
    },
    #[error("missing shard{} {} of {count}", if missing.len() == 1 { "" } else { "s" }, list(missing))]
    Missing { missing: Vec<u32>, count: u32 },
    #[error("{origin}: shard {shard} is inconsistent: {why}")]
    Inconsistent {
        origin: String,
        shard: Shard,
        why: String,
    },
}

fn list(xs: &[u32]) -> String {
    xs.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")
}

/// A shard's description: what it belongs to and what it holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// Always [`FORMAT`].
    pub format: String,
    /// [`FORMAT_VERSION`] of the writer.
    pub format_version: u32,
    /// The version of brisk that ran the shard.
    pub brisk_version: String,
    /// The experiment's name, and its file as the runner was given it.
    pub experiment: String,
    pub experiment_file: String,
    /// [`experiment_hash`]: equal for shards of the same experiment.
    pub experiment_hash: String,
    /// K and N of `--shard K/N`.
    pub shard: u32,
    pub shards: u32,
    /// How runs are dealt to shards, in words.
    pub assignment: String,
    /// Runs in this shard, and in the whole experiment.
    pub runs: usize,
    pub runs_total: usize,
    /// Rows of the shard's `runs.csv`.
    pub records: usize,
}

impl Manifest {
    pub fn shard(&self) -> Result<Shard, ShardError> {
        Shard::new(self.shard, self.shards)
    }
}

/// One run of a shard: its number in [`runner::expand`]'s list, its key
/// (beside the point the number gives), how many of the shard's records are
/// its, and its counters.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShardRun {
    pub index: usize,
    pub variant: usize,
    pub replication: u32,
    pub position: Option<u64>,
    pub records: usize,
    pub sim_events: u64,
    /// Virtual time the run simulated, in nanoseconds (exact, as the
    /// runner's [`Duration`] sum).
    pub virtual_time_ns: u64,
    pub complete: bool,
}

/// A shard's results: its manifest, its runs (sorted by run key, as the
/// runner sorts them) and their records, in the same order.
#[derive(Debug, Clone, PartialEq)]
pub struct ShardOutput {
    pub manifest: Manifest,
    pub runs: Vec<ShardRun>,
    pub records: Vec<Record>,
    /// Where it was read from (`None`: made in this process).
    pub origin: Option<PathBuf>,
}

/// The assignment in words, as manifests record it.
pub const ASSIGNMENT: &str =
    "round-robin: run i (0-based, in expand order) goes to shard i mod N + 1";

/// A hash (SHA-256, hex) of the experiment's content: every validated value,
/// including the messages of the trace files it names, but not the path it
/// was loaded from, so the shards of one experiment run from different
/// checkouts agree, and any change that could change a run changes it.
pub fn experiment_hash(exp: &Experiment) -> String {
    let mut content = exp.clone();
    content.file = PathBuf::new();
    let digest = Sha256::digest(format!("{content:?}").as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

impl ShardOutput {
    /// Puts together a shard's results (see [`runner::run_shard`]).
    pub fn new(
        exp: &Experiment,
        shard: Shard,
        runs_total: usize,
        runs: Vec<ShardRun>,
        records: Vec<Record>,
    ) -> ShardOutput {
        ShardOutput {
            manifest: Manifest {
                format: FORMAT.into(),
                format_version: FORMAT_VERSION,
                brisk_version: env!("CARGO_PKG_VERSION").into(),
                experiment: exp.name.clone(),
                // In full, so `brisk merge` finds it from anywhere.
                experiment_file: std::fs::canonicalize(&exp.file)
                    .unwrap_or_else(|_| exp.file.clone())
                    .display()
                    .to_string(),
                experiment_hash: experiment_hash(exp),
                shard: shard.index,
                shards: shard.count,
                assignment: ASSIGNMENT.into(),
                runs: runs.len(),
                runs_total,
                records: records.len(),
            },
            runs,
            records,
            origin: None,
        }
    }

    /// The shard as its manifest says (checked when made or read).
    pub fn shard(&self) -> Shard {
        Shard {
            index: self.manifest.shard,
            count: self.manifest.shards,
        }
    }

    /// How errors name it: its directory, or `shard K/N`.
    pub fn name(&self) -> String {
        match &self.origin {
            Some(dir) => dir.display().to_string(),
            None => format!("shard {}", self.shard()),
        }
    }

    /// Writes the shard directory `dir` (created if need be): the records,
    /// the runs, and last the manifest.
    pub fn write(&self, dir: &Path) -> Result<(), ShardError> {
        let io = |path: &Path, e: &dyn fmt::Display| ShardError::Io {
            path: path.to_owned(),
            why: e.to_string(),
        };
        std::fs::create_dir_all(dir).map_err(|e| io(dir, &e))?;
        let manifest = dir.join(MANIFEST_FILE);
        // An unfinished rewrite must not pass for a shard.
        match std::fs::remove_file(&manifest) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(io(&manifest, &e)),
            _ => {}
        }
        crate::output::write_csv(&dir.join(RECORDS_FILE), &self.records)
            .map_err(|e| io(&dir.join(RECORDS_FILE), &e))?;
        write_runs(&dir.join(RUNS_FILE), &self.runs)?;
        let tmp = dir.join(format!("{MANIFEST_FILE}.tmp"));
        crate::output::write_json(&tmp, &self.manifest).map_err(|e| io(&tmp, &e))?;
        std::fs::rename(&tmp, &manifest).map_err(|e| io(&manifest, &e))
    }

    /// Reads a shard directory that [`ShardOutput::write`] wrote, checking
    /// that its files agree with each other.
    pub fn read(dir: &Path) -> Result<ShardOutput, ShardError> {
        let manifest = read_manifest(dir)?;
        let shard = manifest.shard().map_err(|e| ShardError::Corrupt {
            path: dir.join(MANIFEST_FILE),
            why: e.to_string(),
        })?;
        let runs = read_runs(&dir.join(RUNS_FILE))?;
        let records = read_records(&dir.join(RECORDS_FILE))?;
        let out = ShardOutput {
            manifest,
            runs,
            records,
            origin: Some(dir.to_owned()),
        };
        let inconsistent = |why: String| ShardError::Inconsistent {
            origin: dir.display().to_string(),
            shard,
            why,
        };
        if out.runs.len() != out.manifest.runs {
            return Err(inconsistent(format!(
                "{RUNS_FILE} lists {} runs, {MANIFEST_FILE} says {}",
                out.runs.len(),
                out.manifest.runs
            )));
        }
        if out.records.len() != out.manifest.records {
            return Err(inconsistent(format!(
                "{RECORDS_FILE} has {} records, {MANIFEST_FILE} says {}",
                out.records.len(),
                out.manifest.records
            )));
        }
        Ok(out)
    }
}

impl ShardOutput {
    /// The shard in one buffer, for a process that hands it on in memory
    /// (a Ray task's result): a `brisk-shard 1` line, then the manifest,
    /// the runs and the records, each as `LENGTH\n` and the bytes of the
    /// file of the same name in a shard directory.
    pub fn encode(&self) -> Result<Vec<u8>, ShardError> {
        let fail = |why: String| ShardError::Corrupt {
            path: PathBuf::from(format!("shard {}", self.shard())),
            why,
        };
        let manifest = serde_json::to_vec(&self.manifest).map_err(|e| fail(e.to_string()))?;
        let runs = csv_bytes(&self.runs).map_err(fail)?;
        let records = csv_bytes(&self.records).map_err(fail)?;
        let mut out = format!("{FORMAT} {FORMAT_VERSION}\n").into_bytes();
        for part in [manifest, runs, records] {
            out.extend(format!("{}\n", part.len()).into_bytes());
            out.extend(part);
        }
        Ok(out)
    }

    /// Reads what [`ShardOutput::encode`] wrote; `origin` names it in errors.
    pub fn decode(bytes: &[u8], origin: &str) -> Result<ShardOutput, ShardError> {
        let corrupt = |why: &str| ShardError::Corrupt {
            path: PathBuf::from(origin),
            why: why.to_owned(),
        };
        let mut rest = bytes;
        let line = |rest: &mut &[u8]| -> Result<Vec<u8>, ShardError> {
            let end = rest
                .iter()
                .position(|&b| b == b'\n')
                .ok_or_else(|| corrupt("truncated"))?;
            let l = rest[..end].to_vec();
            *rest = &rest[end + 1..];
            Ok(l)
        };
        if line(&mut rest)? != format!("{FORMAT} {FORMAT_VERSION}").as_bytes() {
            return Err(corrupt(&format!(
                "expected a `{FORMAT} {FORMAT_VERSION}` buffer"
            )));
        }
        let mut parts = Vec::new();
        for _ in 0..3 {
            let len: usize = std::str::from_utf8(&line(&mut rest)?)
                .ok()
                .and_then(|l| l.parse().ok())
                .ok_or_else(|| corrupt("a part's length is not a number"))?;
            if len > rest.len() {
                return Err(corrupt("truncated"));
            }
            parts.push(&rest[..len]);
            rest = &rest[len..];
        }
        if !rest.is_empty() {
            return Err(corrupt("bytes after the records"));
        }
        let manifest: Manifest =
            serde_json::from_slice(parts[0]).map_err(|e| corrupt(&format!("manifest: {e}")))?;
        if manifest.format != FORMAT || manifest.format_version != FORMAT_VERSION {
            return Err(corrupt("manifest of another format"));
        }
        let runs = csv_rows::<ShardRun>(parts[1], origin)?;
        let records = csv_rows::<RecordRow>(parts[2], origin)?
            .into_iter()
            .map(Record::from)
            .collect();
        Ok(ShardOutput {
            manifest,
            runs,
            records,
            origin: Some(PathBuf::from(origin)),
        })
    }
}

fn csv_bytes<T: Serialize>(rows: &[T]) -> Result<Vec<u8>, String> {
    let mut w = csv::Writer::from_writer(Vec::new());
    for row in rows {
        w.serialize(row).map_err(|e| e.to_string())?;
    }
    w.into_inner().map_err(|e| e.to_string())
}

fn csv_rows<T: serde::de::DeserializeOwned>(
    bytes: &[u8],
    origin: &str,
) -> Result<Vec<T>, ShardError> {
    csv::Reader::from_reader(bytes)
        .deserialize()
        .enumerate()
        .map(|(i, row)| {
            row.map_err(|e| ShardError::Corrupt {
                path: PathBuf::from(origin),
                why: format!("row {}: {e}", i + 2),
            })
        })
        .collect()
}

/// Reads and checks the manifest of shard directory `dir`.
pub fn read_manifest(dir: &Path) -> Result<Manifest, ShardError> {
    let path = dir.join(MANIFEST_FILE);
    if !dir.is_dir() {
        return Err(ShardError::Io {
            path: dir.to_owned(),
            why: "not a directory (expected a shard directory written by `brisk run --shard K/N --out DIR`)".into(),
        });
    }
    let text = std::fs::read_to_string(&path).map_err(|e| ShardError::Io {
        path: path.clone(),
        why: if e.kind() == std::io::ErrorKind::NotFound {
            "missing: not a shard directory, or its shard did not finish".into()
        } else {
            e.to_string()
        },
    })?;
    let value: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| ShardError::Corrupt {
            path: path.clone(),
            why: format!("not JSON: {e}"),
        })?;
    if value.get("format").and_then(|v| v.as_str()) != Some(FORMAT) {
        return Err(ShardError::Corrupt {
            path,
            why: format!("expected \"format\": \"{FORMAT}\""),
        });
    }
    let version = value.get("format_version").and_then(|v| v.as_u64());
    if version != Some(u64::from(FORMAT_VERSION)) {
        return Err(ShardError::Corrupt {
            path,
            why: format!(
                "format_version {}: this brisk reads version {FORMAT_VERSION}",
                version.map_or("missing".into(), |v| v.to_string())
            ),
        });
    }
    serde_json::from_value(value).map_err(|e| ShardError::Corrupt {
        path,
        why: e.to_string(),
    })
}

fn write_runs(path: &Path, runs: &[ShardRun]) -> Result<(), ShardError> {
    crate::output::write_csv(path, runs).map_err(|why| ShardError::Io {
        path: path.to_owned(),
        why,
    })
}

fn read_runs(path: &Path) -> Result<Vec<ShardRun>, ShardError> {
    read_csv(path)
}

/// A row of `runs.csv` as read back: the columns [`Record`] writes.
#[derive(Debug, Deserialize)]
struct RecordRow {
    experiment: String,
    variant: String,
    bandwidth_kbps: u64,
    delay_ms: f64,
    replication: u32,
    position: Option<u64>,
    flow: u32,
    tsn: Option<u64>,
    metric: String,
    value: f64,
    message_size: Option<usize>,
    loss: Option<f64>,
    corrupt: Option<f64>,
    rate: Option<f64>,
    mtu: Option<usize>,
}

impl From<RecordRow> for Record {
    fn from(r: RecordRow) -> Record {
        let sweep = SweepValues {
            message_size: r.message_size,
            loss: r.loss,
            corrupt: r.corrupt,
            rate: r.rate,
            mtu: r.mtu,
        };
        Record {
            experiment: r.experiment,
            variant: r.variant,
            bandwidth_kbps: r.bandwidth_kbps,
            delay_ms: r.delay_ms,
            replication: r.replication,
            position: r.position,
            flow: r.flow,
            tsn: r.tsn,
            metric: r.metric,
            value: r.value,
            // Whether the experiment carries sweep values is settled by
            // `merge`, which knows the experiment.
            sweep: (sweep != SweepValues::default()).then(|| Box::new(sweep)),
        }
    }
}

/// Reads records as `runs.csv` holds them. Every f64 was written in its
/// shortest round-trip form (NaN as `NaN`), so it reads back to the same
/// value and writes again as the same text.
pub fn read_records(path: &Path) -> Result<Vec<Record>, ShardError> {
    Ok(read_csv::<RecordRow>(path)?
        .into_iter()
        .map(Record::from)
        .collect())
}

fn read_csv<T: serde::de::DeserializeOwned>(path: &Path) -> Result<Vec<T>, ShardError> {
    let mut r = csv::Reader::from_path(path).map_err(|e| ShardError::Io {
        path: path.to_owned(),
        why: e.to_string(),
    })?;
    r.deserialize()
        .enumerate()
        .map(|(i, row)| {
            row.map_err(|e| ShardError::Corrupt {
                path: path.to_owned(),
                // Line 1 is the header.
                why: format!("row {}: {e}", i + 2),
            })
        })
        .collect()
}

/// Reads the shard directories `dirs` and merges them (see [`merge`]).
pub fn merge_dirs(
    exp: &Experiment,
    dirs: &[PathBuf],
) -> Result<(Vec<Record>, RunTotals), ShardError> {
    let shards = first_error(dirs.par_iter().map(|d| ShardOutput::read(d)).collect())?;
    merge(exp, shards)
}

/// Decodes the buffers [`ShardOutput::encode`] made, on every core (they are
/// the serial end of a sharded run); errors name a buffer `shards[i]`, its
/// place in the list.
pub fn decode_all<B: AsRef<[u8]> + Sync>(buffers: &[B]) -> Result<Vec<ShardOutput>, ShardError> {
    first_error(
        buffers
            .par_iter()
            .enumerate()
            .map(|(i, b)| ShardOutput::decode(b.as_ref(), &format!("shards[{i}]")))
            .collect(),
    )
}

/// The outputs, or the error of the first in the list that failed (not of
/// the first thread to fail: the message does not depend on timing).
fn first_error(
    outputs: Vec<Result<ShardOutput, ShardError>>,
) -> Result<Vec<ShardOutput>, ShardError> {
    outputs.into_iter().collect()
}

/// Merges the N shards of `exp` into the records and counters of an
/// unsharded [`runner::run`]: the same records in the same order, the same
/// totals. Checks that every shard is of `exp` (same content hash), that all
/// were cut into the same N, that each K from 1 to N is there exactly once,
/// and that each holds exactly its runs.
pub fn merge(
    exp: &Experiment,
    shards: Vec<ShardOutput>,
) -> Result<(Vec<Record>, RunTotals), ShardError> {
    let hash = experiment_hash(exp);
    let first = shards.first().ok_or(ShardError::NoShards)?;
    let (count, first_name) = (first.manifest.shards, first.name());
    let mut by_index: BTreeMap<u32, ShardOutput> = BTreeMap::new();
    for s in shards {
        let m = &s.manifest;
        if m.experiment_hash != hash {
            let hint = if m.experiment == exp.name {
                " (the same name: the experiment file or a trace it names changed since the \
                 shard ran, or another brisk version ran it)"
            } else {
                ""
            };
            return Err(ShardError::OtherExperiment {
                origin: s.name(),
                found: format!("`{}` (hash {})", m.experiment, m.experiment_hash),
                expected: format!("`{}` (hash {hash}){hint}", exp.name),
            });
        }
        if m.shards != count {
            return Err(ShardError::DifferentCount {
                origin: s.name(),
                shard: s.shard(),
                found: m.shards,
                first: first_name,
                expected: count,
            });
        }
        if let Some(other) = by_index.get(&m.shard) {
            return Err(ShardError::Duplicate {
                shard: s.shard(),
                first: other.name(),
                second: s.name(),
            });
        }
        by_index.insert(m.shard, s);
    }
    let missing: Vec<u32> = (1..=count).filter(|k| !by_index.contains_key(k)).collect();
    if !missing.is_empty() {
        return Err(ShardError::Missing { missing, count });
    }

    let keys = runner::expand(exp);
    let sweep = exp.records_sweep_values();
    let mut runs: Vec<(runner::RunKey, ShardRun, Vec<Record>)> = Vec::with_capacity(keys.len());
    for s in by_index.into_values() {
        let shard = s.shard();
        let name = s.name();
        let inconsistent = |why: String| ShardError::Inconsistent {
            origin: name.clone(),
            shard,
            why,
        };
        if s.manifest.runs_total != keys.len() {
            return Err(inconsistent(format!(
                "it counts {} runs in all, the experiment has {}",
                s.manifest.runs_total,
                keys.len()
            )));
        }
        let owned: BTreeSet<usize> = (0..keys.len()).filter(|&i| shard.owns(i)).collect();
        let held: BTreeSet<usize> = s.runs.iter().map(|r| r.index).collect();
        if held != owned || held.len() != s.runs.len() {
            return Err(inconsistent(format!(
                "it holds {} runs, shard {shard} of this experiment has {} (runs {})",
                s.runs.len(),
                owned.len(),
                describe_difference(&owned, &held),
            )));
        }
        let total_records: usize = s.runs.iter().map(|r| r.records).sum();
        if total_records != s.records.len() {
            return Err(inconsistent(format!(
                "its runs account for {total_records} records, it has {}",
                s.records.len()
            )));
        }
        let mut records = s.records.into_iter();
        for run in s.runs {
            let key = keys[run.index];
            if (key.variant, key.replication, key.position)
                != (run.variant, run.replication, run.position)
            {
                return Err(inconsistent(format!(
                    "run {} is (variant {}, replication {}, position {:?}), the experiment's is \
                     (variant {}, replication {}, position {:?})",
                    run.index,
                    run.variant,
                    run.replication,
                    run.position,
                    key.variant,
                    key.replication,
                    key.position
                )));
            }
            let mine: Vec<Record> = records
                .by_ref()
                .take(run.records)
                .map(|mut r| {
                    r.sweep = if sweep {
                        Some(r.sweep.unwrap_or_default())
                    } else {
                        None
                    };
                    r
                })
                .collect();
            runs.push((key, run, mine));
        }
    }
    // The runner's order: by run key.
    runs.sort_by_key(|(k, _, _)| *k);
    let mut totals = RunTotals::default();
    let mut records = Vec::new();
    for (_, run, mine) in runs {
        totals.runs += 1;
        totals.sim_events += run.sim_events;
        totals.virtual_time += Duration::from_nanos(run.virtual_time_ns);
        totals.incomplete += u64::from(!run.complete);
        records.extend(mine);
    }
    Ok((records, totals))
}

/// The runs a shard lacks and those it should not have, briefly.
fn describe_difference(owned: &BTreeSet<usize>, held: &BTreeSet<usize>) -> String {
    let few = |xs: Vec<&usize>| {
        let mut s: Vec<String> = xs.iter().take(5).map(|x| x.to_string()).collect();
        if xs.len() > 5 {
            s.push(format!("and {} more", xs.len() - 5));
        }
        s.join(", ")
    };
    let lacks: Vec<&usize> = owned.difference(held).collect();
    let extra: Vec<&usize> = held.difference(owned).collect();
    match (lacks.is_empty(), extra.is_empty()) {
        (false, false) => format!("lacks {}; not its own: {}", few(lacks), few(extra)),
        (false, true) => format!("lacks {}", few(lacks)),
        (true, false) => format!("not its own: {}", few(extra)),
        (true, true) => "listed twice".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shard_specs_parse_and_refuse_with_the_reason() {
        assert_eq!(
            "2/7".parse::<Shard>().unwrap(),
            Shard { index: 2, count: 7 }
        );
        assert_eq!(
            "1/1".parse::<Shard>().unwrap(),
            Shard { index: 1, count: 1 }
        );
        for (spec, why) in [
            ("3/2", "--shard 3/2: K must be from 1 to N = 2"),
            ("0/4", "--shard 0/4: K must be from 1 to N = 4"),
            ("1/0", "--shard 1/0: N must be at least 1"),
            ("2", "--shard 2: expected K/N, e.g. 2/7"),
            ("a/3", "--shard a/3: K is not a whole number"),
            ("1/-3", "--shard 1/-3: N is not a whole number"),
        ] {
            let e = spec.parse::<Shard>().unwrap_err().to_string();
            assert!(e.starts_with(why), "{spec}: {e}");
        }
    }

    #[test]
    fn parallel_decode_names_the_first_bad_buffer_in_the_list() {
        // A small bad buffer is refused at once, a long one after its first
        // line: whichever thread fails first, the error is the list's first.
        let long_bad = [b"brisk-shard 1\n".as_slice(), &vec![b'x'; 1 << 20]].concat();
        for _ in 0..20 {
            let buffers: Vec<&[u8]> = vec![&long_bad, b"?", b"?"];
            let e = decode_all(&buffers).err().map(|e| e.to_string());
            assert!(
                e.as_deref().is_some_and(|e| e.starts_with("shards[0]")),
                "{e:?}"
            );
        }
        assert!(matches!(decode_all::<&[u8]>(&[]), Ok(v) if v.is_empty()));
    }

    #[test]
    fn round_robin_deals_every_run_to_exactly_one_shard() {
        for n in [1u32, 2, 3, 7] {
            let shards: Vec<Shard> = (1..=n).map(|k| Shard::new(k, n).unwrap()).collect();
            for i in 0..50 {
                assert_eq!(shards.iter().filter(|s| s.owns(i)).count(), 1);
            }
            let sizes: Vec<usize> = shards.iter().map(|s| s.len_of(50)).collect();
            assert_eq!(sizes.iter().sum::<usize>(), 50);
            assert!(sizes.iter().max().unwrap() - sizes.iter().min().unwrap() <= 1);
        }
    }

    #[test]
    fn records_with_nan_infinities_and_long_fractions_read_back_as_the_same_bytes() {
        let dir = std::env::temp_dir().join(format!("brisk-shard-f64-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let base = Record {
            experiment: "x".into(),
            variant: "v,\"quoted\"".into(),
            bandwidth_kbps: 2000,
            delay_ms: 0.1 + 0.2,
            replication: 3,
            position: Some(4),
            flow: 0,
            tsn: None,
            metric: "mtt_ms".into(),
            value: 0.0,
            sweep: None,
        };
        let values = [
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            -0.0,
            1e-300,
            5e-324,
            f64::MAX,
            1.0 / 3.0,
            123456.789e10,
        ];
        let mut records: Vec<Record> = values
            .iter()
            .map(|&value| Record {
                value,
                ..base.clone()
            })
            .collect();
        records.push(Record {
            sweep: Some(Box::new(SweepValues {
                message_size: Some(100),
                loss: Some(0.01 + 0.02),
                corrupt: None,
                rate: Some(f64::NAN),
                mtu: None,
            })),
            ..base.clone()
        });
        let (a, b) = (dir.join("a.csv"), dir.join("b.csv"));
        crate::output::write_csv(&a, &records).unwrap();
        let back = read_records(&a).unwrap();
        crate::output::write_csv(&b, &back).unwrap();
        assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
        for (x, y) in records.iter().zip(&back) {
            assert_eq!(x.value.to_bits(), y.value.to_bits(), "{}", x.value);
            assert_eq!(x.delay_ms.to_bits(), y.delay_ms.to_bits());
            assert_eq!(x.loss().map(f64::to_bits), y.loss().map(f64::to_bits));
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
