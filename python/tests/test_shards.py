"""Shards from Python: Experiment.run_shard and brisk.merge_shards, in this
process (no Ray), against the CLI's unsharded run."""

from __future__ import annotations

import pytest

import brisk
from conftest import small_fig02


@pytest.fixture(scope="module")
def small_exp(small_file):
    return brisk.Experiment.load(small_file)


@pytest.fixture(scope="module")
def three_shards(small_exp):
    return [small_exp.run_shard(k, 3, jobs=2) for k in (1, 2, 3)]


def test_merged_shards_are_byte_identical_to_the_cli(small_exp, three_shards, cli_report):
    # Given out of order: the merge puts them back in the sweep's order.
    result = brisk.merge_shards(small_exp, [three_shards[2], three_shards[0], three_shards[1]])
    for name in ("runs.csv", "summary.csv"):
        assert result.csv_text(name) == (cli_report / name).read_text(), name
    assert len(result.runs) > 0
    assert list(result.experiments["runs"]) == [small_exp.run_count]
    assert not result.checks.empty


def test_a_shard_holds_its_share_of_the_runs(small_exp, three_shards):
    assert all(isinstance(b, bytes) for b in three_shards)
    assert three_shards[0].startswith(b"brisk-shard 1\n")
    assert len(set(three_shards)) == 3


def test_missing_shard_is_named(small_exp, three_shards):
    with pytest.raises(ValueError, match=r"missing shard 2 of 3"):
        brisk.merge_shards(small_exp, [three_shards[0], three_shards[2]])


def test_duplicate_shard_is_named(small_exp, three_shards):
    with pytest.raises(ValueError, match=r"shard 3/3 is there twice"):
        brisk.merge_shards(small_exp, [three_shards[0], three_shards[1], three_shards[2], three_shards[2]])


def test_shard_of_another_experiment_is_named(small_exp, three_shards):
    spec = small_fig02()
    spec["seed"] = spec.get("seed", 0) + 1
    foreign = brisk.Experiment.from_dict(spec, path=small_exp.file).run_shard(2, 3)
    with pytest.raises(ValueError, match=r"shards\[1\]: shard of another experiment"):
        brisk.merge_shards(small_exp, [three_shards[0], foreign, three_shards[2]])


def test_corrupt_shard_is_named(small_exp, three_shards):
    with pytest.raises(ValueError, match=r"shards\[0\]"):
        brisk.merge_shards(small_exp, [b"not a shard", three_shards[1], three_shards[2]])


def test_bad_shard_spec_raises_value_error(small_exp):
    with pytest.raises(ValueError, match="K must be from 1 to N"):
        small_exp.run_shard(4, 3)
    with pytest.raises(ValueError, match="N must be at least 1"):
        small_exp.run_shard(1, 0)
