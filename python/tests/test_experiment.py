"""Experiment.load and Experiment.from_dict: the lab's parser and its errors."""

from __future__ import annotations

import copy
import tomllib

import pytest

import brisk
from conftest import EXPERIMENTS, small_fig02


def test_load_reads_the_file_with_its_variants_and_runs():
    exp = brisk.Experiment.load(EXPERIMENTS / "seed000-fig02.toml")
    assert exp.name == "seed000-fig02"
    assert exp.variants == ["no-loss", "standard", "early-retransmit", "low-latency"]
    # 3 replications; per replication, one no-loss run and 40 loss positions for
    # each of the three lossy variants.
    assert exp.run_count == 363
    assert exp.file.name == "seed000-fig02.toml"


def test_load_of_every_experiment_file_succeeds():
    for path in sorted(EXPERIMENTS.glob("*.toml")):
        assert brisk.Experiment.load(path).name, path


def test_load_bad_file_raises_value_error_naming_file_key_and_expectation(tmp_path):
    text = (EXPERIMENTS / "seed000-fig02.toml").read_text()
    bad = tmp_path / "bad.toml"
    bad.write_text(text.replace('bandwidth = "2000kbit"', 'bandwidth = "-5kbit"', 1))
    with pytest.raises(ValueError) as e:
        brisk.Experiment.load(bad)
    msg = str(e.value)
    assert "bad.toml" in msg and "topology.bandwidth" in msg and "expected" in msg, msg


def test_load_missing_file_raises_value_error_naming_it(tmp_path):
    with pytest.raises(ValueError, match="nothing-here.toml"):
        brisk.Experiment.load(tmp_path / "nothing-here.toml")


def test_from_dict_equals_load_of_the_same_file():
    with open(EXPERIMENTS / "seed000-fig07.toml", "rb") as f:
        spec = tomllib.load(f)
    a = brisk.Experiment.from_dict(spec)
    b = brisk.Experiment.load(EXPERIMENTS / "seed000-fig07.toml")
    assert (a.name, a.title, a.variants, a.run_count) == (b.name, b.title, b.variants, b.run_count)


def test_from_dict_unknown_key_names_it():
    spec = small_fig02()
    spec["topology"]["bandwith"] = "1mbit"
    with pytest.raises(ValueError) as e:
        brisk.Experiment.from_dict(spec, path="mine.toml")
    msg = str(e.value)
    assert "mine.toml" in msg and "bandwith" in msg, msg


def test_from_dict_bad_value_names_key_and_expectation():
    spec = small_fig02()
    spec["sweep"] = {"delay": []}
    with pytest.raises(ValueError) as e:
        brisk.Experiment.from_dict(spec, path="mine.toml")
    msg = str(e.value)
    assert "mine.toml" in msg and "sweep.delay" in msg and "expected" in msg, msg


def test_from_dict_errors_are_the_parsers_for_the_same_text(tmp_path):
    spec = small_fig02()
    spec["replications"] = "three"
    path = tmp_path / "same.toml"
    path.write_text(brisk._brisk.json_to_toml(__import__("json").dumps(spec)))
    with pytest.raises(ValueError) as from_file:
        brisk.Experiment.load(path)
    with pytest.raises(ValueError) as from_dict:
        brisk.Experiment.from_dict(spec, path=path)
    assert str(from_file.value) == str(from_dict.value)
    assert "replications" in str(from_dict.value)


def test_from_dict_missing_field_and_none_and_non_dict_raise_value_error():
    spec = small_fig02()
    del spec["title"]
    with pytest.raises(ValueError, match="title"):
        brisk.Experiment.from_dict(spec)
    spec = small_fig02()
    spec["paper"] = None
    with pytest.raises(ValueError, match="expected"):
        brisk.Experiment.from_dict(spec)
    with pytest.raises(ValueError, match="expected a dict"):
        brisk.Experiment.from_dict(["not", "a", "dict"])  # type: ignore[arg-type]


def test_from_dict_does_not_change_the_dict():
    spec = small_fig02()
    before = copy.deepcopy(spec)
    brisk.Experiment.from_dict(spec)
    assert spec == before
