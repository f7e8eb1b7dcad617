//! `brisk._brisk`: the Rust side of the Python package. It parses experiments
//! with the lab's own parser, runs them with the lab's own runner (the GIL
//! released while it works) and hands back what the CLI writes; the Python
//! side (`brisk/__init__.py`) turns it into pandas DataFrames.

use std::path::PathBuf;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use brisk_lab::experiment::{Experiment, LAB_PRESETS, preset as lab_preset};
use brisk_lab::shard::{self, Shard};
use brisk_lab::{reproduce, runner};
use brisk_proto::config::{KNOB_TABLE, PRESET_TABLE};
use indicatif::ProgressBar;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedBytes;
use pyo3::types::{PyBytes, PyDict};
use serde_json::json;

/// A parsed, validated experiment (`brisk_lab::experiment::Experiment`).
#[pyclass(name = "_Experiment", module = "brisk._brisk", frozen)]
struct PyExperiment {
    inner: Experiment,
}

fn value_error(e: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(e.to_string())
}

#[pymethods]
impl PyExperiment {
    /// Reads and validates an experiment file.
    #[staticmethod]
    fn load(path: PathBuf) -> PyResult<Self> {
        Experiment::load(&path)
            .map(|inner| Self { inner })
            .map_err(value_error)
    }

    /// Validates the text of an experiment file; `path` names it in errors
    /// and anchors relative paths (trace files).
    #[staticmethod]
    fn parse(path: PathBuf, text: &str) -> PyResult<Self> {
        Experiment::parse(&path, text)
            .map(|inner| Self { inner })
            .map_err(value_error)
    }

    #[getter]
    fn name(&self) -> &str {
        &self.inner.name
    }

    #[getter]
    fn title(&self) -> &str {
        &self.inner.title
    }

    #[getter]
    fn file(&self) -> PathBuf {
        self.inner.file.clone()
    }

    /// The number of simulator runs the sweep expands to.
    #[getter]
    fn run_count(&self) -> usize {
        runner::expand(&self.inner).len()
    }

    /// The variants' names, in file order.
    #[getter]
    fn variants(&self) -> Vec<String> {
        self.inner.variants.iter().map(|v| v.name.clone()).collect()
    }

    /// Runs shard `k` of `n` (1 <= k <= n: every n-th run of the sweep,
    /// starting at the k-th; `brisk run --shard K/N`) on `jobs` threads
    /// (default 1) with the GIL released, and returns the shard's output
    /// encoded (`ShardOutput::encode`), for `merge_shards`.
    #[pyo3(signature = (k, n, jobs=None))]
    fn run_shard<'py>(
        &self,
        py: Python<'py>,
        k: u32,
        n: u32,
        jobs: Option<usize>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let shard = Shard::new(k, n).map_err(value_error)?;
        let jobs = jobs.filter(|&j| j > 0).unwrap_or(1);
        let exp = &self.inner;
        let bytes = py
            .allow_threads(|| runner::run_shard(exp, shard, jobs, &ProgressBar::hidden()).encode())
            .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// The packet log of the sweep's first run, traced again: every packet
    /// the first flow's sender put on its first hop, with its fate; as JSON
    /// columns.
    fn packet_log(&self, py: Python<'_>) -> PyResult<String> {
        let exp = &self.inner;
        py.allow_threads(|| {
            let key = runner::expand(exp)
                .into_iter()
                .next()
                .ok_or_else(|| "the experiment has no runs".to_owned())?;
            runner::trace_run(exp, &key).map(|t| packet_columns(&t.packets))
        })
        .map_err(PyRuntimeError::new_err)
    }
}

/// The packet log's columns, in order.
const PACKET_COLUMNS: [&str; 14] = [
    "entered_us",
    "src",
    "dst",
    "ordinal",
    "data_ordinal",
    "size",
    "tsns",
    "fate",
    "start_us",
    "arrival_us",
    "corrupted",
    "duplicated",
    "reordered",
    "lost",
];

/// A packet log as JSON `{"columns": [...], "rows": [[...], ...]}`; times in
/// microseconds of virtual time, hosts by index, TSNs separated by spaces.
fn packet_columns(packets: &[brisk_sim::PacketRecord]) -> String {
    use brisk_sim::Fate;
    let rows: Vec<serde_json::Value> = packets
        .iter()
        .map(|p| {
            let (fate, start, arrival, corrupted, duplicated, reordered) = match p.fate {
                Fate::ImpairmentDrop => ("impairment-drop", None, None, false, false, false),
                Fate::QueueDrop => ("queue-drop", None, None, false, false, false),
                Fate::Sent {
                    start,
                    arrival,
                    corrupted,
                    duplicated,
                    reordered,
                } => (
                    "sent",
                    Some(start.0),
                    Some(arrival.0),
                    corrupted,
                    duplicated,
                    reordered,
                ),
            };
            let tsns: Vec<String> = p.data_tsns.iter().map(u32::to_string).collect();
            json!([
                p.entered.0,
                p.src.index(),
                p.dst.index(),
                p.ordinal,
                p.data_ordinal,
                p.size,
                tsns.join(" "),
                fate,
                start,
                arrival,
                corrupted,
                duplicated,
                reordered,
                p.lost(),
            ])
        })
        .collect();
    json!({ "columns": PACKET_COLUMNS, "rows": rows }).to_string()
}

/// JSON (the dict `Experiment.from_dict` was given) to the text of a TOML
/// experiment file, which the lab's parser then validates.
#[pyfunction]
fn json_to_toml(json: &str) -> PyResult<String> {
    let value: serde_json::Value = serde_json::from_str(json).map_err(value_error)?;
    if !value.is_object() {
        return Err(PyValueError::new_err(
            "an experiment: expected a dict of the experiment file's keys",
        ));
    }
    let value: toml::Value = serde_json::from_value(value).map_err(|e| {
        PyValueError::new_err(format!(
            "an experiment: expected values TOML can hold (no None): {e}"
        ))
    })?;
    toml::to_string(&value).map_err(value_error)
}

/// The text of a TOML file as JSON (a bad file raises `ValueError`), for
/// the Python side to read an experiment's keys on any Python version.
#[pyfunction]
fn toml_to_json(text: &str) -> PyResult<String> {
    let value: toml::Value = toml::from_str(text).map_err(value_error)?;
    serde_json::to_string(&value).map_err(value_error)
}

/// Runs `experiments` with the lab's runner on `jobs` threads (default: every
/// core) and writes the report `brisk run --out` writes into `out`. Calls
/// `progress(done, total)` about ten times a second from the calling thread;
/// the GIL is released in between. Returns the suite summary as JSON.
#[pyfunction]
#[pyo3(signature = (experiments, out, jobs=None, progress=None))]
fn run(
    py: Python<'_>,
    experiments: Vec<PyRef<'_, PyExperiment>>,
    out: PathBuf,
    jobs: Option<usize>,
    progress: Option<PyObject>,
) -> PyResult<String> {
    let owned: Vec<Experiment> = experiments.iter().map(|e| e.inner.clone()).collect();
    let total: u64 = owned.iter().map(|e| runner::expand(e).len() as u64).sum();
    let jobs = jobs
        .filter(|&j| j > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let bar = ProgressBar::hidden();
    let worker_bar = bar.clone();
    let (tx, rx) = mpsc::channel();
    // Polled with the GIL released, from the calling thread only.
    let rx = std::sync::Mutex::new(rx);
    std::thread::spawn(move || {
        let result = reproduce::run_experiments(&owned, &out, jobs, &worker_bar, Instant::now());
        let _ = tx.send(result.map(|suite| summary_json(&suite)));
    });
    loop {
        let got = py.allow_threads(|| match rx.lock() {
            Ok(rx) => rx.recv_timeout(Duration::from_millis(100)),
            Err(_) => Err(mpsc::RecvTimeoutError::Disconnected),
        });
        if let Some(cb) = &progress {
            cb.call1(py, (bar.position().min(total), total))?;
        }
        match got {
            Ok(Ok(json)) => return Ok(json),
            Ok(Err(e)) => return Err(PyRuntimeError::new_err(format!("{e:#}"))),
            Err(mpsc::RecvTimeoutError::Timeout) => py.check_signals()?,
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Err(PyRuntimeError::new_err(
                    "the lab's runner stopped (panicked)",
                ));
            }
        }
    }
}

/// Decodes the encoded shards (`_Experiment.run_shard`'s bytes; errors name
/// one as `shards[i]`, its place in the list), merges them into the records
/// of an unsharded run, and writes the report `brisk run --out` writes into
/// `out`, with the GIL released. A missing, duplicate or foreign shard raises
/// `ValueError` with the merge's own message. `wall_seconds`, the time the
/// sharded run took, is the experiment's wall time in the summary. Returns
/// the suite summary as JSON, as `run` does.
#[pyfunction]
#[pyo3(signature = (experiment, shards, out, wall_seconds=0.0))]
fn merge_shards(
    py: Python<'_>,
    experiment: PyRef<'_, PyExperiment>,
    // Borrowed, not copied: a `Vec<u8>` would be read from each `bytes`
    // one item at a time, which for Fig. 7's 37 MB took 0.4 s.
    shards: Vec<PyBackedBytes>,
    out: PathBuf,
    wall_seconds: f64,
) -> PyResult<String> {
    let exp = &experiment.inner;
    let started = Instant::now()
        .checked_sub(Duration::from_secs_f64(wall_seconds.max(0.0)))
        .unwrap_or_else(Instant::now);
    py.allow_threads(|| {
        let decoded = shard::decode_all(&shards).map_err(value_error)?;
        let (records, totals) = shard::merge(exp, decoded).map_err(value_error)?;
        let runtime = |e: anyhow::Error| PyRuntimeError::new_err(format!("{e:#}"));
        let out = reproduce::prepare_out(Some(&out)).map_err(runtime)?;
        let experiments = std::slice::from_ref(exp);
        let accuracy =
            reproduce::emulator_accuracy(experiments, &ProgressBar::hidden()).map_err(runtime)?;
        let result = reproduce::ExperimentResult {
            exp,
            records,
            totals,
            wall_seconds: started.elapsed().as_secs_f64(),
        };
        reproduce::write_results(&out, accuracy, vec![result], started)
            .map(|suite| summary_json(&suite))
            .map_err(runtime)
    })
}

fn summary_json(suite: &reproduce::SuiteSummary) -> String {
    let experiments: Vec<_> = suite
        .experiments
        .iter()
        .map(|e| {
            json!({
                "name": e.name, "file": e.file, "runs": e.runs, "sim_events": e.sim_events,
                "virtual_seconds": e.virtual_seconds, "wall_seconds": e.wall_seconds,
                "checks": e.checks,
                "comparison": { "headers": e.comparison.headers, "rows": e.comparison.rows },
            })
        })
        .collect();
    json!({
        "experiments": experiments, "runs": suite.runs, "sim_events": suite.sim_events,
        "wall_seconds": suite.wall_seconds, "out_dir": suite.out_dir,
        "text": suite.to_string(),
    })
    .to_string()
}

/// A protocol configuration (`brisk_proto::Config`): a preset, then knobs set
/// by name, as `brisk knobs` lists them and experiment files set them.
#[pyclass(name = "Config", module = "brisk")]
#[derive(Clone)]
struct PyConfig {
    preset: String,
    inner: brisk_proto::Config,
}

/// A knob's value from Python: `True`/`False` as `true`/`false`, anything
/// else as its `str()` (`"200ms"`, `4`, `"none"`).
fn knob_text(value: &Bound<'_, PyAny>) -> PyResult<String> {
    if let Ok(b) = value.downcast::<pyo3::types::PyBool>() {
        return Ok(if b.is_true() { "true" } else { "false" }.to_owned());
    }
    if value.is_none() {
        return Ok("none".to_owned());
    }
    Ok(value.str()?.to_string())
}

#[pymethods]
impl PyConfig {
    /// `Config("low-latency", rto_min="100ms")`: the preset, then each knob.
    #[new]
    #[pyo3(signature = (preset = "rfc9260", **knobs))]
    fn new(preset: &str, knobs: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        let inner = lab_preset(preset).ok_or_else(|| {
            PyValueError::new_err(format!(
                "preset `{preset}`: expected one of {}",
                LAB_PRESETS.join(", ")
            ))
        })?;
        let mut config = Self {
            preset: preset.to_owned(),
            inner,
        };
        if let Some(knobs) = knobs {
            for (k, v) in knobs.iter() {
                config.set(&k.str()?.to_string(), &v)?;
            }
        }
        Ok(config)
    }

    /// The preset this configuration started from.
    #[getter]
    fn preset(&self) -> &str {
        &self.preset
    }

    /// One knob's value, as text `set` accepts (`"200ms"`, `"none"`, `"true"`).
    fn get(&self, name: &str) -> PyResult<String> {
        self.inner.get(name).ok_or_else(|| {
            PyValueError::new_err(format!("unknown knob `{name}` (brisk.knobs() lists them)"))
        })
    }

    /// Sets one knob by name; a bad name or value raises `ValueError` saying
    /// what was expected.
    fn set(&mut self, name: &str, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let text = knob_text(value)?;
        self.inner.set(name, &text).map_err(value_error)
    }

    fn __getitem__(&self, name: &str) -> PyResult<String> {
        self.get(name)
    }

    fn __setitem__(&mut self, name: &str, value: &Bound<'_, PyAny>) -> PyResult<()> {
        self.set(name, value)
    }

    /// Checks the knobs against each other (`ValueError` if they conflict).
    fn validate(&self) -> PyResult<()> {
        self.inner.validate().map_err(value_error)
    }

    /// Every knob and its value, in declaration order.
    fn to_dict(&self) -> Vec<(String, String)> {
        KNOB_TABLE
            .iter()
            .map(|k| (k.name.to_owned(), k.get(&self.inner)))
            .collect()
    }

    /// The knobs whose value differs from the preset's: what an experiment's
    /// variant `set` holds.
    fn overrides(&self) -> Vec<(String, String)> {
        let base = lab_preset(&self.preset).unwrap_or_default();
        KNOB_TABLE
            .iter()
            .filter(|k| k.get(&self.inner) != k.get(&base))
            .map(|k| (k.name.to_owned(), k.get(&self.inner)))
            .collect()
    }

    /// The preset names a configuration (and an experiment) may start from.
    #[staticmethod]
    fn presets() -> Vec<&'static str> {
        LAB_PRESETS.to_vec()
    }

    fn copy(&self) -> Self {
        self.clone()
    }

    fn __eq__(&self, other: &Self) -> bool {
        self.to_dict() == other.to_dict()
    }

    fn __repr__(&self) -> String {
        let changes: Vec<String> = self
            .overrides()
            .into_iter()
            .map(|(k, v)| format!("{k}={v:?}"))
            .collect();
        if changes.is_empty() {
            format!("Config({:?})", self.preset)
        } else {
            format!("Config({:?}, {})", self.preset, changes.join(", "))
        }
    }
}

/// Every knob as JSON rows: name, unit, default, each lab preset's value,
/// summary and doc, from `brisk_proto::config::KNOB_TABLE`.
#[pyfunction]
fn knob_rows() -> String {
    let presets: Vec<(&str, brisk_proto::Config)> = LAB_PRESETS
        .iter()
        .filter_map(|&name| lab_preset(name).map(|c| (name, c)))
        .collect();
    let rows: Vec<_> = KNOB_TABLE
        .iter()
        .map(|k| {
            let values: serde_json::Map<String, serde_json::Value> = presets
                .iter()
                .map(|(n, c)| ((*n).to_owned(), json!(k.get(c))))
                .collect();
            json!({
                "name": k.name, "unit": k.unit, "default": k.default_value(),
                "presets": values, "summary": k.summary(), "doc": k.doc,
            })
        })
        .collect();
    serde_json::Value::Array(rows).to_string()
}

/// The presets: name and the first sentence of its doc
/// (`brisk_proto::config::PRESET_TABLE`, and the lab's own).
#[pyfunction]
fn preset_rows() -> Vec<(String, String)> {
    PRESET_TABLE
        .iter()
        .map(|p| (p.name.to_owned(), p.summary()))
        .chain(
            brisk_lab::experiment::LAB_ONLY_PRESETS
                .iter()
                .map(|(n, d)| ((*n).to_owned(), (*d).to_owned())),
        )
        .collect()
}

#[pymodule]
fn _brisk(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyExperiment>()?;
    m.add_class::<PyConfig>()?;
    m.add_function(wrap_pyfunction!(json_to_toml, m)?)?;
    m.add_function(wrap_pyfunction!(toml_to_json, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(merge_shards, m)?)?;
    m.add_function(wrap_pyfunction!(knob_rows, m)?)?;
    m.add_function(wrap_pyfunction!(preset_rows, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
