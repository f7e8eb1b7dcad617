"""Experiment.run: the runner's CSV as DataFrames, checks, the report, progress."""

from __future__ import annotations

import io
import json
import threading
import time

import pandas as pd
import pandas.testing as pdt

import brisk
from brisk import _brisk


def test_runs_dataframe_equals_the_clis_runs_csv(py_result, cli_report):
    cli_text = (cli_report / "runs.csv").read_text()
    assert py_result.csv_text("runs.csv") == cli_text
    pdt.assert_frame_equal(py_result.runs, pd.read_csv(cli_report / "runs.csv"))
    assert len(py_result.runs) > 0
    assert list(py_result.runs.columns)[:4] == ["experiment", "variant", "bandwidth_kbps", "delay_ms"]


def test_summary_dataframe_equals_the_clis_summary_csv(py_result, cli_report):
    assert py_result.csv_text("summary.csv") == (cli_report / "summary.csv").read_text()
    pdt.assert_frame_equal(py_result.summary, pd.read_csv(cli_report / "summary.csv"))
    assert set(py_result.summary["variant"]) == {"no-loss", "standard", "early-retransmit", "low-latency"}


def test_checks_list_each_reference_with_the_clis_outcome(py_result, cli_report, small_file):
    cli_checks = json.loads((cli_report / "summary.json").read_text())[0]["checks"]
    checks = py_result.checks
    assert list(checks.columns) == ["experiment", "label", "paper", "ours", "outcome", "check"]
    spec = brisk.Experiment.load(small_file)
    import tomllib
    with open(small_file, "rb") as f:
        refs = tomllib.load(f)["reference"]
    assert list(checks["label"]) == [r["label"] for r in refs]
    assert list(checks["paper"]) == [r["value"] for r in refs]
    checked = checks[checks["outcome"] != ""]
    assert [[l, o] for l, o in zip(checked["label"], checked["outcome"])] == cli_checks
    # Ours is a number the report shows, for every check that has one.
    assert all(checked["ours"].str.len() > 0)
    assert spec.name == "seed000-fig02"
    assert not py_result.failed
    assert list(py_result.experiments["runs"]) == [121]
    assert f"{(checks['outcome'] == 'agrees').sum()} agree" in py_result.text


def test_report_writes_the_directory_the_cli_writes(py_result, cli_report, tmp_path):
    index = py_result.report(tmp_path / "report")
    assert index == tmp_path / "report" / "index.html" and index.is_file()
    ours = sorted(p.relative_to(tmp_path / "report") for p in (tmp_path / "report").rglob("*"))
    theirs = sorted(p.relative_to(cli_report) for p in cli_report.rglob("*"))
    assert ours == theirs
    for name in ("runs.csv", "summary.csv", "summary.json", "index.html"):
        assert (tmp_path / "report" / name).read_bytes() == (cli_report / name).read_bytes(), name


def test_progress_callback_counts_up_to_every_run(small_file, tmp_path):
    exp = brisk.Experiment.load(small_file)
    seen: list[tuple[int, int]] = []
    _brisk.run([exp._inner], str(tmp_path), 1, lambda done, total: seen.append((done, total)))
    assert seen, "the callback was never called"
    assert seen[-1] == (exp.run_count, exp.run_count)
    assert all(t == exp.run_count for _, t in seen)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)


def test_run_releases_the_gil_while_the_runner_works(tmp_path):
    # A Python thread keeps counting while the runner runs on one core
    # (all of Fig. 2: 363 runs).
    from conftest import EXPERIMENTS
    exp = brisk.Experiment.load(EXPERIMENTS / "seed000-fig02.toml")
    stop = threading.Event()
    ticks = [0]

    def count():
        while not stop.is_set():
            ticks[0] += 1
            time.sleep(0.001)

    t = threading.Thread(target=count)
    t.start()
    time.sleep(0.05)
    before, started = ticks[0], time.monotonic()
    _brisk.run([exp._inner], str(tmp_path), 1, None)
    during, elapsed = ticks[0] - before, time.monotonic() - started
    stop.set()
    t.join()
    # At 1 ms a tick the thread could count elapsed * 1000; one that never
    # got the GIL while Rust ran would count nothing.
    assert during >= max(5, 0.1 * elapsed * 1000), (during, elapsed)


def test_run_with_a_tqdm_bar_writes_it_to_stderr(small_file, capsys):
    result = brisk.Experiment.load(small_file).run(jobs=2, progress=True)
    err = capsys.readouterr().err
    assert len(result.runs) > 0
    assert "121/121" in err, err
