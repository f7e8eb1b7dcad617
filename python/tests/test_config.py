"""brisk.Config and brisk.knobs: the declaration brisk-proto uses."""

from __future__ import annotations

import subprocess

import pytest

import brisk


def test_config_starts_from_a_preset_and_sets_knobs_by_name():
    c = brisk.Config("rfc9260")
    assert c.preset == "rfc9260"
    assert c.get("rto_min") == "1s"
    c.set("rto_min", "100ms")
    assert c["rto_min"] == "100ms"
    c["early_retransmit"] = "packets"
    assert c.get("early_retransmit") == "packets"
    assert dict(c.overrides()) == {"rto_min": "100ms", "early_retransmit": "packets"}
    c2 = brisk.Config("rfc9260", rto_min="100ms", early_retransmit="packets")
    assert c2 == c
    assert "rto_min" in repr(c2)


def test_config_booleans_and_none():
    c = brisk.Config()
    c.set("partial_reliability", True)
    assert c.get("partial_reliability") == "true"
    c.set("partial_reliability", False)
    assert c.get("partial_reliability") == "false"


def test_presets_differ_from_the_defaults():
    assert "low-latency" in brisk.Config.presets()
    assert "signaling-lksctp" in brisk.Config.presets()
    low = brisk.Config("low-latency")
    assert low.to_dict() != brisk.Config("rfc9260").to_dict()
    assert low.overrides() == []
    assert set(brisk.presets()["name"]) == set(brisk.Config.presets())


def test_config_errors_are_value_errors_saying_what_was_expected():
    with pytest.raises(ValueError, match="preset `nope`: expected one of"):
        brisk.Config("nope")
    c = brisk.Config()
    with pytest.raises(ValueError, match="rto_mni.*rto_min"):
        c.set("rto_mni", "1s")
    with pytest.raises(ValueError, match="rto_min.*duration"):
        c.set("rto_min", "banana")
    with pytest.raises(ValueError, match="unknown knob"):
        c.get("banana")
    with pytest.raises(ValueError):
        brisk.Config(rto_min="banana")


def test_validate_rejects_conflicting_knobs():
    c = brisk.Config(rto_min="10s", rto_max="1s")
    with pytest.raises(ValueError):
        c.validate()
    brisk.Config().validate()


def test_knobs_are_the_clis_knobs(cli):
    table = brisk.knobs()
    out = subprocess.run([str(cli), "knobs"], capture_output=True, text=True, check=True).stdout
    lines = out.splitlines()
    cli_names = []
    for line in lines[1:]:
        if not line.strip():
            break
        cli_names.append(line.split()[0])
    assert list(table["name"]) == cli_names
    assert {"name", "unit", "default", "rfc9260", "low-latency", "summary", "doc"} <= set(table.columns)
    row = table[table["name"] == "rto_min"].iloc[0]
    assert row["default"] == brisk.Config().get("rto_min")
    assert row["low-latency"] == brisk.Config("low-latency").get("rto_min")
