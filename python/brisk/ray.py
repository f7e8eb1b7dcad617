"""Sweeps sharded over a Ray cluster.

    >>> import brisk, brisk.ray
    >>> exp = brisk.Experiment.load("experiments/seed000-fig07.toml")
    >>> result = brisk.ray.run(exp, address="ray://head:10001")

The sweep is cut into N shards (``brisk run --shard K/N``: every N-th run
from the K-th). Each shard is one Ray task: a worker process parses the
experiment from its TOML text (sent with the task, with the trace file a
``kind = "trace"`` traffic names, so the nodes need not share a filesystem;
but each needs this ``brisk`` package installed, the same version) and runs its shard with the Rust runner in-process, through the
bindings, returning the shard's output as bytes. This process (the driver)
gathers them as they finish, then merges them and writes the report with
the same code as ``brisk merge``: ``runs.csv`` and ``summary.csv`` are byte
for byte those of ``brisk run``. Ray retries a task whose worker died or
whose node was lost (``max_retries``); a shard still missing at the merge
raises ``ValueError`` naming it.

Ray is an optional extra: ``pip install ./python[ray]``.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

from . import _brisk

if TYPE_CHECKING:  # pragma: no cover
    from . import Experiment, Result

__all__ = ["run", "run_shards", "default_shards", "SHARDS_PER_CPU", "CLIENT_HANDSHAKE_ATTEMPTS"]

#: Shards per CPU of the cluster by default: a few, so that a slow or retried
#: shard does not hold the others up, while each shard's fixed cost (a task,
#: parsing the experiment, expanding the sweep) stays small beside its runs.
SHARDS_PER_CPU = 4

#: Ray Client handshakes tried before giving up when the head aborts one (see
#: ``_connect``). On a 2-core machine Ray aborted the first handshake to 7 of
#: 20 fresh clusters and none of the later ones; every second try got
#: through. An aborted one costs Ray's own timeouts, 30 to 41 s there.
CLIENT_HANDSHAKE_ATTEMPTS = 3

_INSTALL_HINT = "brisk.ray needs Ray, an optional extra: pip install ./python[ray] (or pip install 'ray>=2.9')"


def _ray() -> Any:
    try:
        import ray
    except ImportError as e:
        raise ImportError(f"{_INSTALL_HINT} ({e})") from e
    return ray


def _client_address(address: Optional[str]) -> Optional[str]:
    """The Ray Client address ``ray.init(address)`` connects to, if it is one
    (``None`` follows ``RAY_ADDRESS``, as in ``ray.init``)."""
    target = address if address is not None else os.environ.get("RAY_ADDRESS", "")
    return target if target.startswith("ray://") else None


def _connect(ray: Any, address: Optional[str]) -> bool:
    """Connects this process to a cluster unless it is already; whether it
    connected (and so should disconnect).

    A Ray Client handshake the server aborts (``ConnectionAbortedError``:
    the head could not start this client's session server) is tried again,
    up to ``CLIENT_HANDSHAKE_ATTEMPTS`` times. Ray forks that server from a
    process with gRPC threads, and the child now and then dies at birth
    (ray-project/ray#63202, open in Ray 2.60); a fresh handshake starts a
    fresh one. Any other failure is raised as it is. Either way Ray is shut
    down first: a failed ``ray.init`` leaves Ray's client mode on, and the
    next ``ray.init`` in this process would fail."""
    if ray.is_initialized():
        return False
    client = _client_address(address)
    for _ in range(CLIENT_HANDSHAKE_ATTEMPTS):
        try:
            ray.init(address=address, log_to_driver=False, configure_logging=False)
            return True
        except ConnectionAbortedError as e:
            ray.shutdown()
            if not client:
                raise
            aborted = e
        except BaseException:
            ray.shutdown()
            raise
    raise ConnectionAbortedError(
        f"{client}: the Ray Client server could not start a session for this client, "
        f"{CLIENT_HANDSHAKE_ATTEMPTS} times: {aborted}"
    ) from aborted


def _payload(exp: "Experiment") -> tuple[str, str, dict[str, str]]:
    """What a task needs to parse the experiment anywhere: its path (which
    names it in errors), its text, and the files the parser reads next to
    it (a `kind = "trace"` traffic's file), by their name in the file."""
    text = exp.toml_text
    traffic = json.loads(_brisk.toml_to_json(text)).get("traffic")
    files = {}
    if isinstance(traffic, dict) and traffic.get("kind") == "trace":
        name = traffic.get("file")
        # An absolute path is read where it is, on every node.
        if isinstance(name, str) and not os.path.isabs(name):
            files[name] = (exp.file.parent / name).read_text()
    return str(exp.file), text, files


def _shard_task(path: str, text: str, files: dict[str, str], k: int, n: int, jobs: int) -> bytes:
    # In a Ray worker process: the lab's parser and runner, in-process.
    if not files:
        return _brisk._Experiment.parse(path, text).run_shard(k, n, jobs)
    # The experiment's files as they lay beside it, in a directory of
    # this worker's own (its filesystem need not be the driver's).
    tmp = tempfile.mkdtemp(prefix="brisk-shard-")
    try:
        for name, content in files.items():
            dest = Path(tmp, name)
            if os.path.commonpath([tmp, os.path.normpath(dest)]) != tmp:
                raise ValueError(f"{path}: {name}: a file outside the experiment's directory")
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_text(content)
        here = os.path.join(tmp, os.path.basename(path))
        return _brisk._Experiment.parse(here, text).run_shard(k, n, jobs)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def default_shards(cpus: float, run_count: int) -> int:
    """The default number of shards: ``SHARDS_PER_CPU`` per CPU of the
    cluster, at least 1 and at most one per run."""
    return max(1, min(run_count, int(cpus) * SHARDS_PER_CPU))


def _shard_runs(run_count: int, k: int, n: int) -> int:
    # Shard k of n owns the runs i (0-based) with i % n == k - 1.
    return len(range(k - 1, run_count, n))


def run_shards(
    exp: "Experiment",
    address: Optional[str] = None,
    shards: Optional[int] = None,
    progress: bool = True,
    jobs_per_shard: int = 1,
    max_retries: int = 3,
) -> list[bytes]:
    """Runs the ``shards`` shards of ``exp`` as Ray tasks and returns their
    outputs (``Experiment.run_shard``'s bytes), shard 1 first; what
    :func:`run` merges. The arguments are :func:`run`'s."""
    ray = _ray()
    connected = _connect(ray, address)
    try:
        if shards is None:
            shards = default_shards(ray.cluster_resources().get("CPU", 1), exp.run_count)
        if shards < 1:
            raise ValueError(f"shards={shards}: expected at least 1")
        if jobs_per_shard < 1:
            raise ValueError(f"jobs_per_shard={jobs_per_shard}: expected at least 1")
        task = ray.remote(_shard_task).options(
            num_cpus=jobs_per_shard, max_retries=max_retries, name="brisk-shard"
        )
        path, text, files = _payload(exp)
        text_ref, files_ref = ray.put(text), ray.put(files)
        refs = {
            task.remote(path, text_ref, files_ref, k, shards, jobs_per_shard): k
            for k in range(1, shards + 1)
        }
        bar = None
        if progress:
            from tqdm.auto import tqdm

            bar = tqdm(total=exp.run_count, desc=f"{exp.name} ({shards} shards)", unit="run")
        out: dict[int, bytes] = {}
        try:
            pending = list(refs)
            while pending:
                ready, pending = ray.wait(pending, num_returns=1)
                for ref in ready:
                    k = refs[ref]
                    out[k] = ray.get(ref)
                    if bar is not None:
                        bar.update(_shard_runs(exp.run_count, k, shards))
        except BaseException:
            # Interrupted, or a shard failed for good: stop the others.
            for ref in refs:
                try:
                    ray.cancel(ref, force=True)
                except Exception:  # already finished, or its node is gone
                    pass
            raise
        finally:
            if bar is not None:
                bar.close()
        return [out[k] for k in sorted(out)]
    finally:
        if connected:
            ray.shutdown()


def run(
    exp: "Experiment",
    address: Optional[str] = None,
    shards: Optional[int] = None,
    progress: bool = True,
    jobs_per_shard: int = 1,
    max_retries: int = 3,
) -> "Result":
    """Runs ``exp``'s sweep on a Ray cluster and returns what
    :meth:`Experiment.run` returns (byte-identical ``runs.csv`` and
    ``summary.csv``).

    ``address``: passed to ``ray.init``. ``None`` follows Ray's rules: the
    cluster in ``RAY_ADDRESS`` if set, else one started with ``ray start`` on
    this machine, else a new local one-off cluster for the call. A cluster's
    GCS address (``"10.0.0.5:6379"``) connects this process to it as a
    driver, which needs this machine on the cluster's network; a Ray Client
    address (``"ray://head:10001"``) drives it from outside. If this process
    is already connected (``ray.init`` called), that connection is used and
    kept; otherwise it is closed at the end, and also when connecting
    fails. A Ray Client handshake that the head aborts is tried up to
    ``CLIENT_HANDSHAKE_ATTEMPTS`` times (a Ray bug, ray-project/ray#63202).

    ``shards``: how many tasks (default: ``SHARDS_PER_CPU`` per CPU of the
    cluster). Each asks for ``jobs_per_shard`` CPUs and runs as many runs at
    once. Ray retries a task whose worker or node died, up to ``max_retries``
    times. ``progress`` shows a tqdm bar counting runs as shards finish.
    Raises ``ImportError`` if Ray is not installed.
    """
    from . import merge_shards

    started = time.monotonic()
    outputs = run_shards(exp, address, shards, progress, jobs_per_shard, max_retries)
    return merge_shards(exp, outputs, wall_seconds=time.monotonic() - started)
