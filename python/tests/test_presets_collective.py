"""trainsim.presets and trainsim.collective, against the CLI and docs/model.md's closed form."""

import pytest

import trainsim
from conftest import load


def test_presets_are_the_clis(cli):
    p = trainsim.presets()
    assert {"A100-SXM4-80GB", "H100-SXM5-80GB", "H200-SXM-141GB", "B200"} <= set(p["gpu"])
    assert {"gpt2-124m", "gpt2-350m", "gpt3-175b", "llama3-8b", "llama3-70b", "llama3-405b",
            "mixtral-8x7b"} <= set(p["model"])
    listed = cli("presets")
    assert listed == ("GPU presets (cluster.gpu):\n" + "".join(f"  {n}\n" for n in p["gpu"]) +
                      "model presets (model):\n" + "".join(f"  {n}\n" for n in p["model"]))


# One H100 node (the preset: NVSwitch, 450 GB/s per GPU at bandwidth_efficiency 0.822,
# latency 1.83 us per step), the ring pipeline term off (ring_buffer 0).
NODE = {"gpu": "H100-SXM5-80GB", "num_nodes": 1, "gpus_per_node": 8, "intra_node": {"ring_buffer": 0}}


@pytest.mark.parametrize("model", ["analytic", "flow"])
def test_ring_all_reduce_is_the_closed_form(model):
    # docs/model.md, "Ring": T = 2 (n-1) alpha + 2 (n-1)/n S/B, n = 8, alpha = 1.83 us,
    # B = 450e9 x 0.822 B/s: for S = 1 GiB, 14 x 1.83 us + 1.75 x 2^30 / 369.9e9 s
    # = 25.62 us + 5079.88 us = 5105.50 us.
    n, alpha, bandwidth, size = 8, 1.83e-6, 450e9 * 0.822, 2**30
    expected = 2 * (n - 1) * alpha + 2 * (n - 1) / n * size / bandwidth
    assert expected == pytest.approx(5105.50e-6, abs=0.01e-6)
    table = trainsim.collective(NODE, op="all_reduce", minbytes="1G", maxbytes="1G", algo="ring", model=model)
    (row,) = table["rows"]
    assert row["bytes"] == size
    assert row["algorithm"] == "ring"
    assert row["time_s"] == pytest.approx(expected, abs=2e-9)  # whole nanoseconds
    assert row["algbw_gb_per_s"] == pytest.approx(size / row["time_s"] / 1e9)
    assert row["busbw_gb_per_s"] == pytest.approx(row["algbw_gb_per_s"] * 2 * (n - 1) / n)
    assert table["group"] == {"size": 8, "nodes": 1, "ranks_per_node": 8}


def test_collective_is_the_clis_table(source, cli, tmp_path):
    scenario = source / "scenarios/gpt2-124m-8xh100.json"
    table = trainsim.collective(scenario, op="allgather", minbytes=1024, maxbytes="1M", stepfactor=4, ngpus=4)
    assert [r["bytes"] for r in table["rows"]] == [1024, 4096, 16384, 65536, 262144, 1048576]
    printed = cli("collective", "--cluster", scenario, "--op", "allgather", "-b", "1024", "-e", "1M", "-f", "4",
                  "-g", "4")
    assert table["table"] == printed
    assert trainsim.collective(load(scenario))["table"] == cli("collective", "--cluster", scenario)


@pytest.mark.parametrize("kwargs", [{"op": "allreduse"}, {"minbytes": "1X"}, {"minbytes": "2G", "maxbytes": "1G"},
                                    {"stepfactor": 1}, {"ngpus": 0}, {"algo": "rings"}, {"model": "packet"},
                                    {"ngpus": 9}])
def test_bad_options_are_value_errors(kwargs):
    with pytest.raises(ValueError):
        trainsim.collective(NODE, **kwargs)


def test_a_bad_cluster_is_a_scenario_error():
    with pytest.raises(trainsim.ScenarioError) as info:
        trainsim.collective({**NODE, "num_nodes": 0})
    assert info.value.pointer == "/num_nodes"
