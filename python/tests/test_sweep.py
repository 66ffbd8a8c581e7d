"""trainsim.sweep: the points `trainsim sweep` writes to sweep.json."""

import itertools
import json

import pytest

import trainsim
from conftest import load


@pytest.fixture
def spec(source):
    return source / "tests/integration/sweep_small.json"


def test_the_points_are_the_clis(spec, cli, tmp_path):
    cli("sweep", spec, "--out", tmp_path / "sweep", "-q", "-j", "2")
    written = load(tmp_path / "sweep" / "sweep.json")
    run = trainsim.sweep(spec, jobs=2)
    points = list(run)
    assert points == written["points"]
    assert [p["id"] for p in points] == sorted(p["id"] for p in points)
    assert run.summary() == written


def test_a_dict_spec_streams_the_same_points(spec):
    from_file = list(trainsim.sweep(spec, jobs=2))
    first = list(itertools.islice(trainsim.sweep(load(spec), jobs=1), 3))
    assert first == from_file[:3]


def test_failures_replay_the_best_points(source, cli, tmp_path):
    spec = source / "tests/integration/sweep_small_failures.json"
    cli("sweep", spec, "--out", tmp_path / "sweep", "-q", "-j", "2")
    written = load(tmp_path / "sweep" / "sweep.json")
    assert list(trainsim.sweep(spec, jobs=2)) == written["points"]


def test_rank_by_and_errors(spec):
    assert trainsim.sweep(spec, rank_by="cost").summary()["objective"] == "cost"
    with pytest.raises(ValueError):
        trainsim.sweep(spec, rank_by="speed")
    bad = load(spec)
    bad["space"]["tp"] = "some"
    with pytest.raises(trainsim.ScenarioError) as info:
        trainsim.sweep(bad)
    assert info.value.pointer == "/space/tensor_model_parallel_size"  # the alias, by its own name
    assert info.value.found == '"some"'
    assert json.dumps(info.value.file) == '"<dict>"'
