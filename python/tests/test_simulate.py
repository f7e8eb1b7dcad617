"""brisk.simulate: one run through the lab's runner, its records and packet log."""

from __future__ import annotations

import brisk


def test_simulate_without_loss_delivers_every_message_and_drops_nothing():
    sim = brisk.simulate(bandwidth="2000kbit", delay="15ms", config="rfc9260")
    mtt = sim.messages[sim.messages["metric"] == "mtt_ms"]
    assert len(mtt) == 20, sim.messages["metric"].unique()
    # 200-byte messages at 2000 kbit/s, 15 ms one way: at least the delay.
    assert (mtt["value"] >= 15.0).all()
    assert (mtt["value"] < 30.0).all()
    assert not sim.packets["lost"].any()
    assert list(sim.packets.columns) == [
        "entered_us", "src", "dst", "ordinal", "data_ordinal", "size", "tsns", "fate",
        "start_us", "arrival_us", "corrupted", "duplicated", "reordered", "lost",
    ]
    assert list(sim.packets["ordinal"]) == list(range(1, len(sim.packets) + 1))


def test_simulate_drop_pattern_drops_that_packet_and_its_data_is_retransmitted():
    sim = brisk.simulate(pattern="drop 3", config="rfc9260")
    dropped = sim.packets[sim.packets["lost"]]
    assert list(dropped["ordinal"]) == [3]
    assert list(dropped["fate"]) == ["impairment-drop"]
    tsns = dropped["tsns"].iloc[0]
    assert tsns, "packet 3 carried DATA"
    later = sim.packets[(sim.packets["ordinal"] > 3) & (sim.packets["tsns"] == tsns)]
    assert len(later) >= 1, "the lost DATA was sent again"
    # Its message waited for a retransmission: RFC 9260's RTO.Initial of 1 s
    # or fast retransmit, either way longer than the others.
    mtt = sim.messages[sim.messages["metric"] == "mtt_ms"]["value"]
    assert mtt.max() > 2 * mtt.median()
    # The same figures, one row per message and the run's totals.
    assert list(sim.per_message.index.get_level_values("tsn")) == list(range(1, 21))
    assert sim.per_message["mtt_ms"].max() == mtt.max()
    assert sim.totals["lost_chunks"] == 1
    assert sim.totals["packets_sent"] == len(sim.packets)


def test_simulate_takes_a_config_with_overrides_and_set():
    # One message whose only DATA packet is lost: only T3 repairs it, after
    # RTO.Initial (1 s in rfc9260, 200 ms here).
    one = {"kind": "periodic", "interval": "20ms", "messages": 1, "message_size": 200}
    quick = brisk.Config("rfc9260", rto_initial="200ms", rto_min="100ms")
    slow = brisk.simulate(pattern="drop 3", config="rfc9260", traffic=one)
    fast = brisk.simulate(pattern="drop 3", config=quick, set={"sack_delay": "40ms"}, traffic=one)
    worst = lambda s: s.messages[s.messages["metric"] == "mtt_ms"]["value"].max()
    assert worst(slow) > 1000.0, worst(slow)
    assert 200.0 < worst(fast) < 400.0, worst(fast)
    assert fast.experiment.variants == ["simulate"]
    assert fast.experiment.run_count == 1


def test_simulate_bad_knob_raises_value_error_naming_it():
    import pytest
    with pytest.raises(ValueError, match="rto_mni"):
        brisk.simulate(set={"rto_mni": "1s"})
    with pytest.raises(ValueError, match="pattern|impairments|drop"):
        brisk.simulate(pattern="drop banana")
