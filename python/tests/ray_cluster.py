"""A real local Ray cluster for the tests: a head and a worker node, each
its own `ray start` with one CPU, as separate processes; optionally inside a
network namespace, reached over a veth link. Shared by test_ray.py and
test_ray_netns.py; not a test module itself."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Iterator, Optional

import pytest

RAY_CLI = Path(sys.executable).parent / "ray"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _pids_mentioning(marker: str) -> list[int]:
    """Processes whose command line names `marker` (our cluster's temp dir)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if marker in cmdline:
            pids.append(int(entry.name))
    return pids


class Cluster:
    """A head and a worker node started with `ray start`, each in its own
    session (process group), and everything they started. With `netns`,
    both run inside that network namespace, on its address (`netns.inside`)."""

    def __init__(self, netns: Optional["Netns"] = None) -> None:
        # Short: Ray's Unix sockets live under it (108-byte path limit).
        self.temp_dir = tempfile.mkdtemp(prefix="brisk-ray-", dir="/tmp")
        self.netns = netns
        host = netns.inside if netns else "127.0.0.1"
        self.port = free_port()
        self.address = f"{host}:{self.port}"
        # The head's Ray Client server: how a driver outside the cluster
        # connects (ray://head:10001 on a real one).
        self.client_port = free_port()
        self.client_address = f"ray://{host}:{self.client_port}"
        self.groups: list[int] = []
        self.env = dict(os.environ, RAY_USAGE_STATS_ENABLED="0")
        self.env.pop("RAY_ADDRESS", None)

    def _start(self, args: list[str]) -> None:
        where = []
        if self.netns:
            where = ["ip", "netns", "exec", self.netns.name]
            args = [*args, f"--node-ip-address={self.netns.inside}"]
        proc = subprocess.Popen(
            [*where, str(RAY_CLI), "start", *args, "--num-cpus=1", "--object-store-memory=100000000",
             "--disable-usage-stats"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            env=self.env, start_new_session=True,
        )
        self.groups.append(proc.pid)
        out, _ = proc.communicate(timeout=120)
        if proc.returncode != 0:
            raise RuntimeError(f"ray start {' '.join(args)} failed:\n{out}")

    def start(self) -> None:
        self._start(["--head", f"--port={self.port}", f"--ray-client-server-port={self.client_port}",
                     "--include-dashboard=false", f"--temp-dir={self.temp_dir}"])
        self._start([f"--address={self.address}"])

    def processes(self) -> list[int]:
        pids = set(_pids_mentioning(self.temp_dir))
        for pgid in self.groups:
            for entry in Path("/proc").iterdir():
                if entry.name.isdigit():
                    try:
                        if os.getpgid(int(entry.name)) == pgid:
                            pids.add(int(entry.name))
                    except OSError:
                        pass
        pids.discard(os.getpid())
        return sorted(pids)

    def stop(self) -> list[int]:
        """Kills every process of the cluster (by its process group and by
        its temp dir, never by name); returns those still alive after."""
        for sig in (signal.SIGTERM, signal.SIGKILL):
            for pid in self.processes():
                try:
                    os.kill(pid, sig)
                except OSError:
                    pass
            deadline = time.monotonic() + (3 if sig == signal.SIGTERM else 10)
            while self.processes() and time.monotonic() < deadline:
                time.sleep(0.2)
        return self.processes()


def running_cluster(cluster: "Cluster") -> Iterator["Cluster"]:
    """Starts `cluster`, yields it, and stops everything it started, also
    when starting fails; Ray missing fails the test, naming the extra."""
    if not RAY_CLI.is_file():
        pytest.fail(f"Ray is not installed ({RAY_CLI} missing): pip install ./python[ray]")
    import ray  # noqa: F401  (fails the test, naming the module, if missing)

    try:
        cluster.start()
        yield cluster
    finally:
        if ray.is_initialized():
            ray.shutdown()
        left = cluster.stop()
        shutil.rmtree(cluster.temp_dir, ignore_errors=True)
        assert not left, f"Ray processes left running: {left}"


def _ip(*args: str) -> None:
    proc = subprocess.run(["ip", *args], capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args)} failed: {proc.stderr.strip()}")


class Netns:
    """A network namespace joined to this one by a veth link: this side
    has `outside`, the namespace `inside` (a /24 of 10.214.0.0/16 chosen
    by this process's PID). Needs root and `ip` (iproute2); either missing
    fails the test, naming it. Removed on exit, veth and all."""

    PREFIX = "brisk-ray-"

    def __init__(self) -> None:
        pid = os.getpid()
        self.name = f"{self.PREFIX}{pid}"
        self.veth = f"brisk{pid}"[:15]  # the kernel's limit on a link name
        subnet = pid % 250 + 1
        self.outside, self.inside = f"10.214.{subnet}.1", f"10.214.{subnet}.2"

    def __enter__(self) -> "Netns":
        if shutil.which("ip") is None:
            pytest.fail("`ip` is missing: install iproute2 (scripts/test does)")
        if os.geteuid() != 0:
            pytest.fail("a network namespace needs root: run the tests as root (CI does)")
        self._remove_leftovers()
        _ip("netns", "add", self.name)
        try:
            _ip("link", "add", self.veth, "type", "veth", "peer", "name", "eth0", "netns", self.name)
            _ip("addr", "add", f"{self.outside}/24", "dev", self.veth)
            _ip("link", "set", self.veth, "up")
            _ip("-n", self.name, "addr", "add", f"{self.inside}/24", "dev", "eth0")
            _ip("-n", self.name, "link", "set", "eth0", "up")
            _ip("-n", self.name, "link", "set", "lo", "up")
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        # Deleting the namespace deletes its end of the veth, and so both.
        subprocess.run(["ip", "netns", "del", self.name], capture_output=True)

    def _remove_leftovers(self) -> None:
        """Namespaces of an earlier run that crashed (its PID is gone)."""
        listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
        for line in listed.splitlines():
            name = line.split()[0] if line.split() else ""
            pid = name[len(self.PREFIX):]
            if name.startswith(self.PREFIX) and pid.isdigit() and not Path(f"/proc/{pid}").exists():
                subprocess.run(["ip", "netns", "del", name], capture_output=True)

    def received_bytes(self) -> int:
        """Bytes this side of the veth link has received from the namespace."""
        return int(Path(f"/sys/class/net/{self.veth}/statistics/rx_bytes").read_text())

    def holds(self, pid: int) -> bool:
        """Whether process `pid` runs in this namespace."""
        ours = os.stat(f"/var/run/netns/{self.name}").st_ino
        return os.stat(f"/proc/{pid}/ns/net").st_ino == ours
