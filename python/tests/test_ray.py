"""brisk.ray on a real Ray cluster that the test starts and stops: a head
node and a worker node, each its own `ray start` with one CPU, as separate
processes on this machine. The merged results must be byte for byte the
CLI's unsharded run. Ray missing fails (scripts/test installs it)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import brisk
import brisk.ray
from ray_cluster import Cluster, free_port, running_cluster


@pytest.fixture(scope="module")
def ray_cluster():
    yield from running_cluster(Cluster())


def test_the_cluster_has_two_nodes_of_one_cpu(ray_cluster):
    import ray

    ray.init(address=ray_cluster.address, log_to_driver=False, configure_logging=False)
    try:
        nodes = [n for n in ray.nodes() if n["Alive"]]
        assert len(nodes) == 2
        assert ray.cluster_resources()["CPU"] == 2
    finally:
        ray.shutdown()


def test_sharded_over_ray_is_byte_identical_to_the_cli(ray_cluster, small_file, cli_report):
    exp = brisk.Experiment.load(small_file)
    result = brisk.ray.run(exp, address=ray_cluster.address, shards=4, progress=True)
    for name in ("runs.csv", "summary.csv"):
        assert result.csv_text(name) == (cli_report / name).read_text(), name
    assert list(result.experiments["runs"]) == [exp.run_count]
    assert not result.checks.empty


def test_a_ray_client_address_drives_the_cluster_from_outside(ray_cluster, small_file, cli_report):
    # ray://: this process is a Ray Client, not a driver on the cluster's
    # network; the tasks still run on the cluster's workers.
    exp = brisk.Experiment.load(small_file)
    result = brisk.ray.run(exp, address=ray_cluster.client_address, shards=3, progress=False)
    import ray

    assert not ray.is_initialized(), "brisk.ray.run left its client connection open"
    for name in ("runs.csv", "summary.csv"):
        assert result.csv_text(name) == (cli_report / name).read_text(), name


def test_a_failed_connection_leaves_this_process_able_to_run(ray_cluster, small_file, cli_report):
    # A refused Ray Client address fails ray.init, which leaves Ray's client
    # mode on: without brisk's shutdown, the next ray.init in this process
    # fails too (an AssertionError deep in Ray). A fresh process, so that
    # Ray reads the short client timeouts at import.
    refused = f"ray://127.0.0.1:{free_port()}"
    script = f"""
import sys, brisk, brisk.ray
exp = brisk.Experiment.load({str(small_file)!r})
try:
    brisk.ray.run(exp, address={refused!r}, shards=2, progress=False)
    sys.exit("connected to a refused address")
except ConnectionError as e:
    print("refused:", type(e).__name__)
result = brisk.ray.run(exp, address={ray_cluster.address!r}, shards=2, progress=False)
sys.stdout.write(result.csv_text("runs.csv"))
"""
    env = dict(ray_cluster.env, RAY_CLIENT_INITIAL_CONNECTION_TIMEOUT_S="1", RAY_CLIENT_MAX_CONNECTION_TIMEOUT_S="1")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    first, _, runs = proc.stdout.partition("\n")
    assert first == "refused: ConnectionError"
    assert runs == (cli_report / "runs.csv").read_text()


def test_default_shards_follow_the_cluster_and_a_missing_one_is_named(ray_cluster, small_file, cli_report):
    exp = brisk.Experiment.load(small_file)
    shards = brisk.ray.run_shards(exp, address=ray_cluster.address, progress=False)
    # Two CPUs in the cluster.
    assert len(shards) == 2 * brisk.ray.SHARDS_PER_CPU
    merged = brisk.merge_shards(exp, shards)
    assert merged.csv_text("runs.csv") == (cli_report / "runs.csv").read_text()
    with pytest.raises(ValueError, match=r"missing shard 3 of 8"):
        brisk.merge_shards(exp, shards[:2] + shards[3:])


def test_a_task_whose_worker_dies_is_retried(ray_cluster, small_file, cli_report, monkeypatch):
    marker = Path(ray_cluster.temp_dir) / "shard-2-died"
    real_task = brisk.ray._shard_task

    # A local function, so Ray (cloudpickle) ships it by value: its worker
    # process dies the first time it runs shard 2, as a lost node's would.
    def dies_once(path, text, files, k, n, jobs):
        if k == 2 and not marker.exists():
            marker.touch()
            os._exit(1)
        return real_task(path, text, files, k, n, jobs)

    monkeypatch.setattr(brisk.ray, "_shard_task", dies_once)
    exp = brisk.Experiment.load(small_file)
    result = brisk.ray.run(exp, address=ray_cluster.address, shards=3, progress=False)
    assert marker.exists(), "shard 2's first attempt did not run"
    assert result.csv_text("runs.csv") == (cli_report / "runs.csv").read_text()


class FakeRay:
    """Ray's connection calls, scripted: `init` raises the listed errors in
    turn, then connects."""

    def __init__(self, *errors: BaseException) -> None:
        self.errors = list(errors)
        self.calls: list[str] = []

    def is_initialized(self) -> bool:
        return False

    def init(self, address=None, **_kw) -> None:
        self.calls.append(f"init {address}")
        if self.errors:
            raise self.errors.pop(0)

    def shutdown(self) -> None:
        self.calls.append("shutdown")


def _aborted() -> ConnectionAbortedError:
    return ConnectionAbortedError("Initialization failure from server: SpecificServer startup failed")


def test_an_aborted_client_handshake_is_tried_again_after_a_shutdown():
    ray = FakeRay(_aborted(), _aborted())
    assert brisk.ray._connect(ray, "ray://head:10001") is True
    assert ray.calls == ["init ray://head:10001", "shutdown"] * 2 + ["init ray://head:10001"]


def test_a_client_handshake_aborted_every_time_fails_naming_the_address(monkeypatch):
    attempts = brisk.ray.CLIENT_HANDSHAKE_ATTEMPTS
    assert attempts == 3
    ray = FakeRay(*[_aborted() for _ in range(attempts)])
    with pytest.raises(ConnectionAbortedError, match=r"ray://head:10001: .* 3 times: Initialization failure"):
        brisk.ray._connect(ray, "ray://head:10001")
    assert ray.calls == ["init ray://head:10001", "shutdown"] * attempts
    # RAY_ADDRESS stands for a missing address, as in ray.init.
    monkeypatch.setenv("RAY_ADDRESS", "ray://env-head:10001")
    ray = FakeRay(_aborted(), _aborted(), _aborted())
    with pytest.raises(ConnectionAbortedError, match=r"ray://env-head:10001: "):
        brisk.ray._connect(ray, None)
    assert ray.calls.count("init None") == 3


def test_other_connection_failures_are_not_retried_but_still_shut_down(monkeypatch):
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    # A driver's GCS address: no Ray Client, so no session server to retry.
    ray = FakeRay(_aborted())
    with pytest.raises(ConnectionAbortedError, match="^Initialization failure from server"):
        brisk.ray._connect(ray, "10.0.0.5:6379")
    assert ray.calls == ["init 10.0.0.5:6379", "shutdown"]
    # An unreachable client address: Ray has already waited and retried.
    ray = FakeRay(ConnectionError("ray client connection timeout"))
    with pytest.raises(ConnectionError, match="timeout"):
        brisk.ray._connect(ray, "ray://head:10001")
    assert ray.calls == ["init ray://head:10001", "shutdown"]
    # Interrupted while connecting.
    ray = FakeRay(KeyboardInterrupt())
    with pytest.raises(KeyboardInterrupt):
        brisk.ray._connect(ray, None)
    assert ray.calls == ["init None", "shutdown"]


def test_without_ray_import_error_names_the_extra(small_file, monkeypatch):
    # `import brisk` and `import brisk.ray` need no Ray; running does.
    proc = subprocess.run(
        [sys.executable, "-c", "import sys; sys.modules['ray'] = None; import brisk, brisk.ray"],
        capture_output=True, text=True,
    )
    assert proc.returncode == 0, proc.stderr
    monkeypatch.setitem(sys.modules, "ray", None)
    exp = brisk.Experiment.load(small_file)
    with pytest.raises(ImportError, match=r"pip install \./python\[ray\]"):
        brisk.ray.run(exp)


def test_a_task_needs_no_shared_filesystem_even_with_a_trace_file(tmp_path):
    # hol-idata's traffic is a trace file next to the experiment: the task
    # gets both as text, so it runs where neither is (here: deleted).
    from conftest import EXPERIMENTS
    import shutil

    where = tmp_path / "exp"
    where.mkdir()
    for name in ("hol-idata.toml", "hol-idata.trace"):
        shutil.copy(EXPERIMENTS / name, where / name)
    exp = brisk.Experiment.load(where / "hol-idata.toml")
    path, text, files = brisk.ray._payload(exp)
    assert list(files) == ["hol-idata.trace"]
    shutil.rmtree(where)
    shards = [brisk.ray._shard_task(path, text, files, k, 2, 1) for k in (1, 2)]
    merged = brisk.merge_shards(exp, shards)
    assert merged.csv_text("runs.csv") == exp.run(jobs=1, progress=False).csv_text("runs.csv")
    # Without the trace file, the parser says which file it could not read.
    with pytest.raises(ValueError, match="hol-idata.trace"):
        brisk.ray._shard_task(path, text, {}, 1, 2, 1)
