"""trainsim.ScenarioError: the reader's errors with their file, pointer, expected and found."""

import copy

import pytest

import trainsim
from conftest import load


@pytest.fixture
def scenario(source):
    return load(source / "scenarios/gpt2-124m-8xh100.json")


def refused(scenario, *args, **kwargs):
    with pytest.raises(trainsim.ScenarioError) as info:
        trainsim.run(scenario, *args, **kwargs)
    return info.value


def test_a_wrong_type_names_the_key_and_what_was_expected(scenario):
    scenario["training"]["global_batch_size"] = "many"
    e = refused(scenario)
    assert e.file == "<dict>"
    assert e.pointer == e.json_path == "/training/global_batch_size"
    assert e.expected is not None and "integer" in e.expected
    assert e.found == '"many"'
    assert str(e) == f"<dict>: /training/global_batch_size: expected {e.expected}, found {e.found}"
    assert isinstance(e, ValueError)


def test_a_negative_size(scenario):
    scenario["training"]["micro_batch_size"] = -2
    e = refused(scenario)
    assert e.pointer == "/training/micro_batch_size"
    assert e.found == "-2"
    scenario = copy.deepcopy(scenario)
    scenario["training"]["micro_batch_size"] = 1
    scenario["cluster"]["inter_node"] = {"nic_bandwidth": "-400Gbps"}
    e = refused(scenario)
    assert e.pointer == "/cluster/inter_node/nic_bandwidth"
    assert "-400Gbps" in e.found


def test_an_unknown_preset(scenario):
    scenario["cluster"]["gpu"] = "H1000"
    e = refused(scenario)
    assert e.pointer == "/cluster/gpu"
    assert "H100-SXM5-80GB" in e.expected or "H100-SXM5-80GB" in str(e)
    assert "H1000" in e.found


def test_an_unknown_key_says_did_you_mean(scenario):
    scenario["parallelism"] = {"tensor_model_paralel_size": 2}
    e = refused(scenario)
    assert e.pointer == "/parallelism/tensor_model_paralel_size"
    assert 'did you mean "tensor_model_parallel_size"' in e.expected


def test_a_file_names_itself(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('{"name": "x", ', encoding="utf-8")
    e = refused(path)
    assert e.file == str(path)
    missing = refused(tmp_path / "missing.json")
    assert missing.file == str(tmp_path / "missing.json")


def test_values_json_cannot_hold(scenario):
    scenario["training"]["global_batch_size"] = float("nan")
    e = refused(scenario)
    assert e.file == "<dict>"
    scenario["training"]["global_batch_size"] = object()
    refused(scenario)


def test_a_calibration_that_is_not_there(scenario, tmp_path):
    e = refused(scenario, calibration=tmp_path / "none.json")
    assert "none.json" in str(e)
