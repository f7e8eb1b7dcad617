"""brisk.ray driving a cluster over a real network link: the head and the
worker node run inside a network namespace that the test creates, and this
process, outside it, reaches the cluster only through the veth link, at the
head's Ray Client address. Not loopback: the packets cross two network
stacks, as a laptop's to a remote head do. Needs root and `ip`; either
missing fails the test."""

from __future__ import annotations

import pytest

import brisk
import brisk.ray
from ray_cluster import Cluster, Netns, running_cluster


@pytest.fixture(scope="module")
def netns():
    with Netns() as ns:
        yield ns


@pytest.fixture(scope="module")
def remote_cluster(netns):
    yield from running_cluster(Cluster(netns=netns))


def test_the_cluster_runs_inside_the_namespace(remote_cluster, netns):
    pids = remote_cluster.processes()
    assert pids, "no cluster processes"
    outside = [pid for pid in pids if not netns.holds(pid)]
    assert not outside, f"cluster processes outside {netns.name}: {outside}"
    assert remote_cluster.client_address == f"ray://{netns.inside}:{remote_cluster.client_port}"


def test_a_ray_client_over_a_veth_link_gives_the_cli_bytes(remote_cluster, netns, small_file, cli_report):
    exp = brisk.Experiment.load(small_file)
    received = netns.received_bytes()
    shards = brisk.ray.run_shards(exp, address=remote_cluster.client_address, shards=3, progress=False)
    received = netns.received_bytes() - received
    import ray

    assert not ray.is_initialized(), "brisk.ray.run_shards left its client connection open"
    # Every shard's output came back over the link, to this process.
    assert received >= sum(len(s) for s in shards) > 0, received
    result = brisk.merge_shards(exp, shards)
    for name in ("runs.csv", "summary.csv"):
        assert result.csv_text(name) == (cli_report / name).read_text(), name
