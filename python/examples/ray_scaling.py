"""Runs per second of a sweep with the CLI (`brisk run --jobs J`) and with
brisk.ray on a local Ray cluster of W one-CPU worker nodes, for the scaling
figures of issue 16. Not a test: the figures depend on the machine and its
load.

    python python/examples/ray_scaling.py [EXPERIMENT] [--cli PATH] [--workers 1 2] [--jobs 1 2] [--repeat 3]

The cluster: a head node with no CPUs (it runs Ray's control plane, the GCS,
and no tasks) and W worker nodes with one CPU each, every one its own
`ray start` (separate processes), so W workers run W shards at once. This
process is the driver: it connects to the head's GCS address, sends the
shards, gathers and merges them. The cluster is started and this process
connected to it (ray.init, timed apart) before the clock starts; a run's time
is brisk.ray.run's, from sending the shards to the merged report (printed
also in its two phases: the shards on the cluster, the merge here). Each runs.csv is checked against the CLI's.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import brisk
import brisk.ray

REPO = Path(__file__).resolve().parents[2]
RAY_CLI = Path(sys.executable).parent / "ray"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LocalCluster:
    """A head (num-cpus=0) and `workers` worker nodes of one CPU, each its
    own `ray start` in its own process group; stopped by group and temp dir."""

    def __init__(self, workers: int, client_server: bool = False) -> None:
        self.temp_dir = tempfile.mkdtemp(prefix="brisk-ray-", dir="/tmp")
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        # With client_server, the head also serves Ray Client here.
        self.client_port = free_port() if client_server else None
        self.client_address = f"ray://127.0.0.1:{self.client_port}" if client_server else None
        self.workers = workers
        self.groups: list[int] = []
        self.env = dict(os.environ, RAY_USAGE_STATS_ENABLED="0")
        self.env.pop("RAY_ADDRESS", None)

    def _start(self, args: list[str]) -> None:
        cmd = [str(RAY_CLI), "start", *args, "--object-store-memory=100000000", "--disable-usage-stats"]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                env=self.env, start_new_session=True)
        self.groups.append(proc.pid)
        out, _ = proc.communicate(timeout=120)
        if proc.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed:\n{out}")

    def __enter__(self) -> "LocalCluster":
        client = [f"--ray-client-server-port={self.client_port}"] if self.client_port else []
        self._start(["--head", f"--port={self.port}", "--num-cpus=0", "--include-dashboard=false",
                     f"--temp-dir={self.temp_dir}", *client])
        for _ in range(self.workers):
            self._start([f"--address={self.address}", "--num-cpus=1"])
        return self

    def _pids(self) -> set[int]:
        pids = set()
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit() or int(entry.name) == os.getpid():
                continue
            try:
                cmdline = (entry / "cmdline").read_bytes()
                if self.temp_dir.encode() in cmdline or os.getpgid(int(entry.name)) in self.groups:
                    pids.add(int(entry.name))
            except OSError:
                pass
        return pids

    def __exit__(self, *exc) -> None:
        for sig, wait in ((signal.SIGTERM, 3), (signal.SIGKILL, 10)):
            for pid in self._pids():
                try:
                    os.kill(pid, sig)
                except OSError:
                    pass
            deadline = time.monotonic() + wait
            while self._pids() and time.monotonic() < deadline:
                time.sleep(0.2)
        import shutil

        shutil.rmtree(self.temp_dir, ignore_errors=True)


def time_cli(cli: Path, exp_file: Path, jobs: int, out: Path) -> float:
    t0 = time.monotonic()
    subprocess.run([str(cli), "run", str(exp_file), "--jobs", str(jobs), "--out", str(out)],
                   check=True, stdout=subprocess.DEVNULL)
    return time.monotonic() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("experiment", nargs="?", default=str(REPO / "experiments/seed000-fig07.toml"))
    ap.add_argument("--cli", default=None, help="the brisk binary [default: $CARGO_TARGET_DIR/release/brisk]")
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--jobs", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--shards", type=int, default=None, help="[default: brisk.ray's, 4 per CPU]")
    ap.add_argument("--repeat", type=int, default=3, help="runs of each setting; the best and the median are reported")
    args = ap.parse_args()
    cli = Path(args.cli or Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target")) / "release/brisk")
    exp = brisk.Experiment.load(args.experiment)
    n = exp.run_count
    rows = []
    with tempfile.TemporaryDirectory(prefix="brisk-scaling-") as tmp:
        reference = None
        for jobs in args.jobs:
            out = Path(tmp) / f"cli-{jobs}"
            times = [time_cli(cli, Path(args.experiment), jobs, out) for _ in range(args.repeat)]
            reference = reference or (out / "runs.csv").read_text()
            rows.append((f"brisk run --jobs {jobs}", times))
        for workers in args.workers:
            import ray

            with LocalCluster(workers) as cluster:
                # Connected once (as a notebook is), outside the clock;
                # brisk.ray.run uses the connection.
                t0 = time.monotonic()
                ray.init(address=cluster.address, log_to_driver=False, configure_logging=False)
                connect = time.monotonic() - t0
                try:
                    times, phases = [], []
                    for _ in range(args.repeat):
                        # brisk.ray.run, in its two phases: the shards on
                        # the cluster, then the merge in this process.
                        t0 = time.monotonic()
                        shards = brisk.ray.run_shards(exp, shards=args.shards, progress=False)
                        t1 = time.monotonic()
                        result = brisk.merge_shards(exp, shards, wall_seconds=t1 - t0)
                        t2 = time.monotonic()
                        times.append(t2 - t0)
                        phases.append(f"{t2 - t0:.2f} ({t1 - t0:.2f} + merge {t2 - t1:.2f})")
                        assert result.csv_text("runs.csv") == reference, "runs.csv differs from the CLI's"
                finally:
                    ray.shutdown()
                rows.append((f"brisk.ray.run, {workers} worker node(s)", times))
                print(f"({workers} worker node(s), {len(shards)} shards: ray.init took {connect:.2f} s; "
                      f"runs {', '.join(phases)} s)")
    print(f"{exp.name}: {n} runs, {args.repeat} times each; best (median)")
    for label, times in rows:
        best, med = min(times), statistics.median(times)
        print(f"  {label:36} {best:6.2f} s ({med:5.2f})  {n / best:7.0f} runs/s ({n / med:5.0f})")
    ray_rows = {label: times for label, times in rows if label.startswith("brisk.ray")}
    if len(ray_rows) >= 2:
        (l1, t1), (l2, t2) = list(ray_rows.items())[:2]
        print(f"  speed-up, {l2.split(', ')[1]} over {l1.split(', ')[1]}: "
              f"{min(t1) / min(t2):.2f}x best, {statistics.median(t1) / statistics.median(t2):.2f}x median")


if __name__ == "__main__":
    main()
