"""How often a Ray Client handshake is aborted by the head, and whether
brisk.ray.run gets through anyway: for each of C fresh local clusters (a head
serving Ray Client, one one-CPU worker node), one small sweep through the
``ray://`` address, counting the handshakes it took (ray.init calls). Ray's
session server for a client sometimes dies as the head forks it
(ray-project/ray#63202); brisk.ray retries such a handshake up to
``brisk.ray.CLIENT_HANDSHAKE_ATTEMPTS`` times. Not a test: the rate depends
on the machine.

    python python/examples/ray_client_handshakes.py [--clusters 20] [--per-cluster 1]
"""

from __future__ import annotations

import argparse
import time
import tomllib
from pathlib import Path

import ray

import brisk
import brisk.ray
from ray_scaling import REPO, LocalCluster


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--clusters", type=int, default=20)
    ap.add_argument("--per-cluster", type=int, default=1, help="sweeps through each cluster, one after another")
    args = ap.parse_args()
    with open(REPO / "experiments/seed000-fig02.toml", "rb") as f:
        spec = tomllib.load(f)
    spec["replications"] = 1  # 121 runs: the handshake is what is timed
    exp = brisk.Experiment.from_dict(spec)
    reference = exp.run(jobs=1, progress=False).csv_text("runs.csv")

    handshakes: list[float] = []
    real_init = ray.init

    def counting_init(*a, **kw):
        handshakes.append(time.monotonic())
        return real_init(*a, **kw)

    ray.init = counting_init
    sweeps = failed = retried = 0
    retry_cost = []
    for c in range(args.clusters):
        with LocalCluster(workers=1, client_server=True) as cluster:
            for i in range(args.per_cluster):
                handshakes.clear()
                t0 = time.monotonic()
                sweeps += 1
                try:
                    result = brisk.ray.run(exp, address=cluster.client_address, shards=2, progress=False)
                    assert result.csv_text("runs.csv") == reference, "runs.csv differs from a local run"
                    outcome = "ok"
                except ConnectionError as e:
                    failed += 1
                    outcome = f"failed: {e}".splitlines()[0][:160]
                if len(handshakes) > 1:
                    retried += 1
                    retry_cost.append(handshakes[-1] - handshakes[0])
                print(f"cluster {c + 1} sweep {i + 1}: {len(handshakes)} handshake(s), "
                      f"{time.monotonic() - t0:.1f} s, {outcome}", flush=True)
    print(f"{sweeps} sweeps on {args.clusters} fresh clusters: {retried} needed a second handshake, "
          f"{failed} failed")
    if retry_cost:
        print(f"time lost to an aborted handshake: {min(retry_cost):.1f} to {max(retry_cost):.1f} s")


if __name__ == "__main__":
    main()
