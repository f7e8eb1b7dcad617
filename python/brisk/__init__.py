"""Brisk's network lab from Python.

The Rust lab does the work: experiments are parsed by its parser, run by its
runner in the deterministic simulator (the GIL released meanwhile), and its
outputs come back as pandas DataFrames.

    >>> import brisk
    >>> exp = brisk.Experiment.load("experiments/seed000-fig02.toml")
    >>> result = exp.run(jobs=2)
    >>> result.summary.head()
    >>> result.report("report-dir")
"""

from __future__ import annotations

import functools
import io
import json
import os
import shutil
import tempfile
import weakref
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence, Union

import pandas as pd

from . import _brisk
from ._brisk import Config

__all__ = [
    "Config", "Experiment", "Result", "Simulation", "knobs", "merge_shards", "presets", "simulate",
]
__version__: str = _brisk.__version__

PathLike = Union[str, "os.PathLike[str]"]


class Experiment:
    """An experiment, validated by the lab's parser: what `brisk run FILE` runs.

    Make one with :meth:`load` (a TOML file) or :meth:`from_dict` (the same
    schema as a dict). Invalid input raises ``ValueError`` naming the file or
    key and what was expected, with the Rust parser's own message.
    """

    def __init__(self, inner: "_brisk._Experiment", text: Optional[str] = None) -> None:
        self._inner = inner
        # The TOML text it was parsed from: what travels to other machines
        # (brisk.ray), which need not share this one's filesystem.
        self._text = text

    @classmethod
    def load(cls, path: PathLike) -> "Experiment":
        """Reads and validates an experiment file (TOML)."""
        path = os.fspath(path)
        inner = _brisk._Experiment.load(path)
        return cls(inner, Path(path).read_text())

    @classmethod
    def from_dict(cls, spec: Mapping[str, Any], path: Optional[PathLike] = None) -> "Experiment":
        """Validates an experiment given as a dict with the TOML file's schema.

        The dict is written as TOML and read by the same parser as the files,
        so the same errors come back. ``path`` names the experiment in errors
        and anchors relative paths (such as trace files); by default
        ``<dict>.toml`` in the working directory.
        """
        if not isinstance(spec, Mapping):
            raise ValueError(f"an experiment: expected a dict, found {type(spec).__name__}")
        try:
            text = json.dumps(spec, allow_nan=False)
        except (TypeError, ValueError) as e:
            raise ValueError(f"an experiment: expected values TOML can hold: {e}") from None
        toml_text = _brisk.json_to_toml(text)
        where = os.fspath(path) if path is not None else os.path.join(os.getcwd(), "<dict>.toml")
        return cls(_brisk._Experiment.parse(where, toml_text), toml_text)

    @classmethod
    def parse(cls, path: PathLike, text: str) -> "Experiment":
        """Validates the text of an experiment file; ``path`` names it in
        errors and anchors relative paths (trace files). What a Ray worker
        does with :attr:`toml_text` and :attr:`file`."""
        return cls(_brisk._Experiment.parse(os.fspath(path), text), text)

    @property
    def toml_text(self) -> str:
        """The experiment file's text (for a dict, the TOML it was written as)."""
        if self._text is None:
            self._text = self.file.read_text()
        return self._text

    @property
    def name(self) -> str:
        """The experiment's `name`."""
        return self._inner.name

    @property
    def title(self) -> str:
        """The experiment's `title`."""
        return self._inner.title

    @property
    def file(self) -> Path:
        """The file it was read from (or the `path` given to from_dict)."""
        return Path(self._inner.file)

    @property
    def variants(self) -> list[str]:
        """The variants' names, in file order."""
        return list(self._inner.variants)

    @property
    def run_count(self) -> int:
        """How many simulator runs the sweep expands to."""
        return self._inner.run_count

    def run(self, jobs: Optional[int] = None, progress: bool = True) -> "Result":
        """Runs every run of the sweep with the lab's runner.

        ``jobs`` parallel runs (default: every core). ``progress`` shows a
        tqdm bar (a widget in Jupyter, text in a terminal), updated from the
        runner's counter. Returns a :class:`Result`.
        """
        return _run([self], jobs=jobs, progress=progress)

    def run_shard(self, k: int, n: int, jobs: Optional[int] = None) -> bytes:
        """Runs shard ``k`` of ``n`` (``1 <= k <= n``), as ``brisk run --shard
        K/N``: every n-th run of the sweep from the k-th, on ``jobs`` threads
        (default 1), the GIL released. Returns the shard's output encoded,
        for :func:`merge_shards`. A bad ``k``/``n`` raises ``ValueError``.
        """
        return self._inner.run_shard(k, n, jobs)

    def __repr__(self) -> str:
        return f"Experiment({self.name!r}, {self.run_count} runs, variants={self.variants})"


def _progress_bar(total: int, desc: str):
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit="run")


def _run(experiments: Sequence[Experiment], jobs: Optional[int], progress: bool) -> "Result":
    out = tempfile.mkdtemp(prefix="brisk-report-")
    bar = None
    callback = None
    if progress:
        total = sum(e.run_count for e in experiments)
        bar = _progress_bar(total, ", ".join(e.name for e in experiments))

        def callback(done: int, total: int) -> None:
            if done > bar.n:
                bar.update(done - bar.n)

    try:
        text = _brisk.run([e._inner for e in experiments], out, jobs, callback)
    except BaseException:
        shutil.rmtree(out, ignore_errors=True)
        raise
    finally:
        if bar is not None:
            bar.close()
    return Result(out, json.loads(text))


def merge_shards(
    experiment: Experiment,
    shards: Sequence[bytes],
    wall_seconds: float = 0.0,
) -> "Result":
    """Merges the outputs of :meth:`Experiment.run_shard` (all ``n`` of one
    split, in any order) into the :class:`Result` :meth:`Experiment.run`
    returns: the report is written by the same code, and ``runs.csv`` and
    ``summary.csv`` are byte for byte those of an unsharded run.

    A missing shard, one given twice, one of another split or of another
    experiment (or brisk version) raises ``ValueError`` naming it (``missing
    shard 2 of 4``; a shard in the list is ``shards[i]``). ``wall_seconds``
    (the time the sharded run took) goes into the summary's wall time.
    """
    out = tempfile.mkdtemp(prefix="brisk-report-")
    try:
        text = _brisk.merge_shards(experiment._inner, [bytes(s) for s in shards], out, wall_seconds)
    except BaseException:
        shutil.rmtree(out, ignore_errors=True)
        raise
    return Result(out, json.loads(text))


class Result:
    """What a run came to: the report directory's tables as DataFrames.

    ``runs`` and ``summary`` are ``runs.csv`` and ``summary.csv`` as the CLI
    writes them (read with ``pandas.read_csv`` when first asked for);
    ``checks`` has one row per ``[[reference]]``; :meth:`report` writes the
    report directory.
    """

    def __init__(self, out_dir: str, suite: dict) -> None:
        self._dir = Path(out_dir)
        self._suite = suite
        self._cleanup = weakref.finalize(self, shutil.rmtree, out_dir, True)
        self.checks: pd.DataFrame = _checks(suite)

    # Read when first asked for: Fig. 7's runs.csv is 34 MB, a fifth of a
    # second of pandas that a caller who wants only the checks or the report
    # need not wait for.
    @functools.cached_property
    def runs(self) -> pd.DataFrame:
        """``runs.csv``: one row per record (per message and metric, and per
        run's totals), as the CLI writes it."""
        return self._csv("runs.csv")

    @functools.cached_property
    def summary(self) -> pd.DataFrame:
        """``summary.csv``: the statistics per variant, point and metric."""
        return self._csv("summary.csv")

    def _csv(self, name: str) -> pd.DataFrame:
        return pd.read_csv(io.StringIO(self.csv_text(name)))

    def csv_text(self, name: str) -> str:
        """The text of one of the report's CSV files (``runs.csv``, ``summary.csv``)."""
        return (self._dir / name).read_text()

    @property
    def experiments(self) -> pd.DataFrame:
        """Per experiment: name, file, runs, simulated events, virtual and wall seconds."""
        cols = ["name", "file", "runs", "sim_events", "virtual_seconds", "wall_seconds"]
        return pd.DataFrame([{c: e[c] for c in cols} for e in self._suite["experiments"]], columns=cols)

    @property
    def text(self) -> str:
        """The summary `brisk run` prints."""
        return self._suite["text"]

    @property
    def failed(self) -> bool:
        """Whether a check differs from the paper or could not be computed
        (`brisk run` exits non-zero then)."""
        return bool(((self.checks["outcome"] == "differs") |
                     self.checks["outcome"].str.startswith("not available")).any())

    def report(self, path: PathLike) -> Path:
        """Writes the report directory `brisk run --out PATH` writes (runs.csv,
        summary.csv, summary.json, charts, index.html); returns ``PATH/index.html``."""
        dest = Path(path)
        shutil.copytree(self._dir, dest, dirs_exist_ok=True)
        return dest / "index.html"

    def __repr__(self) -> str:
        return f"Result({len(self.runs)} records, {len(self.summary)} summary rows, {len(self.checks)} checks)"


def _checks(suite: dict) -> pd.DataFrame:
    rows = []
    for e in suite["experiments"]:
        outcome = dict(e["checks"])
        for r in e["comparison"]["rows"]:
            r = list(r) + [""] * (4 - len(r))
            label, paper, ours, verdict = r[:4]
            rows.append({
                "experiment": e["name"],
                "label": label,
                "paper": paper,
                "ours": ours,
                "outcome": outcome.get(label, ""),
                "check": verdict,
            })
    return pd.DataFrame(rows, columns=["experiment", "label", "paper", "ours", "outcome", "check"])


class Simulation:
    """One ad-hoc run: ``messages`` (the runner's per-message records, as in
    runs.csv) and ``packets`` (the sender's packet log on its first hop: when
    each packet entered, its size, the TSNs it carried, and its fate)."""

    def __init__(self, experiment: Experiment, result: Result, packets: pd.DataFrame) -> None:
        self.experiment = experiment
        self.result = result
        self.messages: pd.DataFrame = result.runs
        self.packets: pd.DataFrame = packets

    @property
    def per_message(self) -> pd.DataFrame:
        """One row per message (index: flow, message number from 1), one
        column per per-message metric (``mtt_ms``, ...)."""
        m = self.messages[self.messages["tsn"].notna()]
        wide = m.pivot_table(index=["flow", "tsn"], columns="metric", values="value", aggfunc="first")
        wide.index = wide.index.set_levels(wide.index.levels[1].astype(int), level=1)
        wide.columns.name = None
        return wide

    @property
    def totals(self) -> pd.Series:
        """The run's per-flow figures (retransmissions by cause, packets sent,
        goodput, ...) of the first flow, by metric name."""
        m = self.messages[self.messages["tsn"].isna() & (self.messages["flow"] == 0)]
        return pd.Series(m["value"].to_numpy(), index=m["metric"].to_numpy(), name="value")

    def __repr__(self) -> str:
        return f"Simulation({len(self.messages)} records, {len(self.packets)} packets)"


def simulate(
    *,
    topology: str = "point-to-point",
    bandwidth: str = "2000kbit",
    delay: str = "15ms",
    config: Union[str, Config] = "rfc9260",
    set: Optional[Mapping[str, Any]] = None,
    traffic: Optional[Mapping[str, Any]] = None,
    pattern: Union[str, Sequence[str], None] = None,
    seed: int = 1,
    topology_options: Optional[Mapping[str, Any]] = None,
    variant_options: Optional[Mapping[str, Any]] = None,
) -> Simulation:
    """One ad-hoc run through the lab's runner, for a quick what-if.

    ``topology``: the kind (``point-to-point``; other kinds take their keys in
    ``topology_options``); ``bandwidth`` and ``delay`` of the link (one way).
    ``config``: a preset name or a :class:`Config`; ``set``: knobs on top.
    ``traffic``: the ``[traffic]`` table (default: 20 messages of 200 bytes
    every 20 ms). ``pattern``: impairment pattern lines on the forward link
    (e.g. ``"drop 3"``, ``["loss 0.01"]``, as `[impairments]` in a file).
    It builds an experiment with one variant and one replication and runs it
    with the same runner as :meth:`Experiment.run`.
    """
    if isinstance(config, Config):
        preset = config.preset
        knobs = dict(config.overrides())
    else:
        preset = str(config)
        knobs = {}
    for k, v in (set or {}).items():
        knobs[k] = v
    variant: dict[str, Any] = {"name": "simulate", "preset": preset}
    if knobs:
        variant["set"] = {k: _toml_knob(v) for k, v in knobs.items()}
    variant.update(variant_options or {})
    topo: dict[str, Any] = {"kind": topology, "bandwidth": bandwidth, "delay": delay}
    topo.update(topology_options or {})
    if isinstance(pattern, str):
        pattern = [pattern]
    spec: dict[str, Any] = {
        "name": "simulate",
        "title": "brisk.simulate",
        "source": "brisk.simulate (Python)",
        "method": "flow",
        "seed": seed,
        "replications": 1,
        "statistic": "median",
        "figure": "latency-table",
        "topology": topo,
        "traffic": dict(traffic) if traffic is not None else {
            "kind": "periodic", "interval": "20ms", "messages": 20, "message_size": 200,
        },
        "variants": [variant],
    }
    if pattern:
        spec["impairments"] = list(pattern)
    exp = Experiment.from_dict(spec)
    result = exp.run(jobs=1, progress=False)
    log = json.loads(exp._inner.packet_log())
    packets = pd.DataFrame(log["rows"], columns=log["columns"])
    for col in ("data_ordinal", "start_us", "arrival_us"):
        packets[col] = packets[col].astype("Int64")
    return Simulation(exp, result, packets)


def _toml_knob(value: Any) -> Any:
    # Knob values as experiment files write them: booleans and numbers as
    # such, everything else as text ("200ms", "packets", "none").
    if value is None:
        return "none"
    if isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


def knobs() -> pd.DataFrame:
    """Every protocol knob, from the declaration the Rust code uses
    (``brisk_proto::config::KNOB_TABLE``): name, unit, default, its value in
    each preset, summary and doc (what `brisk knobs` prints)."""
    rows = json.loads(_brisk.knob_rows())
    table = []
    for r in rows:
        row = {"name": r["name"], "unit": r["unit"], "default": r["default"]}
        row.update(r["presets"])
        row["summary"] = r["summary"]
        row["doc"] = r["doc"]
        table.append(row)
    return pd.DataFrame(table)


def presets() -> pd.DataFrame:
    """The presets (``brisk_proto::config::PRESET_TABLE`` and the lab's own): name and summary."""
    return pd.DataFrame(_brisk.preset_rows(), columns=["name", "summary"])
