"""trainsim.run: the result file `trainsim run --out` writes, as a dict."""

import concurrent.futures
import json
import threading
import time

import pytest

import trainsim
from conftest import load

SCENARIO = "scenarios/gpt2-124m-8xh100.json"
LONG_SCENARIO = "scenarios/gpt3-175b-1024xa100-dp.json"  # a quarter of a second


def cli_result(cli, tmp_path, scenario, *extra):
    out = tmp_path / "r.json"
    cli("run", scenario, "--out", out, "-q", *extra)
    result = load(out)
    assert result["timeline"] == "r.timeline.json"
    result["timeline"] = None  # no timeline file from Python
    return result, out


def test_builtin_scenario_gives_the_cli_result_file(source, cli, tmp_path):
    expected, out = cli_result(cli, tmp_path, source / SCENARIO)
    got = trainsim.run(source / SCENARIO)
    assert list(got) == list(expected)  # the same keys in the same order
    assert got == expected
    # Serialized as the CLI serializes (nlohmann's dump(2)), the text is the file's
    # but for the timeline's name.
    text = out.read_text(encoding="utf-8").replace('"r.timeline.json"', "null")
    assert json.dumps(got, indent=2, ensure_ascii=False) + "\n" == text


def test_exact_and_extrapolated_agree(source):
    assert trainsim.run(source / SCENARIO, exact=True) == trainsim.run(source / SCENARIO)


def test_a_dict_scenario_gives_what_its_file_gives(source):
    scenario = load(source / SCENARIO)
    assert trainsim.run(scenario) == trainsim.run(str(source / SCENARIO))
    scenario["parallelism"] = {"data_parallel_size": 4}
    scenario["cluster"]["gpus_per_node"] = 4
    result = trainsim.run(scenario)
    assert result["num_gpus"] == 4
    assert result["scenario"] == scenario["name"]


def test_calibration_and_seed_are_the_cli_options(source, cli, tmp_path):
    scenario = source / "scenarios/validation/gpt2-124m-1xh200.json"
    calibration = source / "scenarios/calibration/h200-sxm-141gb.json"
    expected, _ = cli_result(cli, tmp_path, scenario, "--calibration", calibration)
    assert trainsim.run(scenario, calibration=calibration, seed=1) == expected


def test_failures_are_replayed_as_the_cli_replays_them(source, cli, tmp_path):
    scenario = load(source / SCENARIO)
    scenario["training"]["train_tokens"] = "1B"
    scenario["failures"] = {"gpu_mtbf": "2000h", "trials": 20, "seed": 3, "threads": 2}
    path = tmp_path / "failures.json"
    path.write_text(json.dumps(scenario), encoding="utf-8")
    out = tmp_path / "out.json"
    cli("run", path, "--out", out, "-q")
    expected = load(out)
    expected["timeline"] = None
    expected["reliability"]["run_timeline"] = None
    assert trainsim.run(path) == expected
    assert trainsim.run(path, seed=4)["reliability"] != expected["reliability"]


def test_threads_give_the_serial_results_and_run_beside_python(source):
    scenarios = [SCENARIO, "scenarios/gpt2-124m-1xh100.json", "scenarios/gpt2-350m-8xh100-3d.json",
                 "scenarios/gpt2-350m-8xh100-dp.json"]
    paths = [source / s for s in scenarios] * 2
    serial = [trainsim.run(p) for p in paths]
    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
        threaded = list(pool.map(trainsim.run, paths))
    assert threaded == serial


def test_the_gil_is_released_while_simulating(source):
    # A thread holding the GIL through a simulation would stop this one for all of
    # it; released, this one is held up at most a switch interval (5 ms) at a time.
    scenario = source / LONG_SCENARIO
    start = time.perf_counter()
    trainsim.run(scenario, exact=True)
    alone = time.perf_counter() - start
    done = threading.Event()
    worker = threading.Thread(target=lambda: (trainsim.run(scenario, exact=True), done.set()))
    longest_gap = 0.0
    worker.start()
    last = time.perf_counter()
    while not done.is_set():
        now = time.perf_counter()
        longest_gap = max(longest_gap, now - last)
        last = now
    worker.join()
    assert longest_gap < 0.5 * alone, (longest_gap, alone)


def test_bad_arguments_are_type_and_value_errors(source):
    with pytest.raises(TypeError):
        trainsim.run(42)
    for seed in (-1, 2**63, 1.5, "1"):
        with pytest.raises(ValueError):
            trainsim.run(source / SCENARIO, seed=seed)
