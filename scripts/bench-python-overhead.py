#!/usr/bin/env python3
"""What calling trainsim.run from Python costs beyond the C++ call (issue 28: under 1 ms).

The extension times its own C++ work (reading the scenario, simulating, building the
result JSON) with a steady clock and hands the seconds back beside the result; the
Python time is perf_counter around trainsim's run, so the difference is what the
binding adds: the dict turned into JSON text (dict input), the arguments, releasing
and taking the GIL, the result turned into a dict. Prints the median and 90th
percentile of each over REPEATS calls (after a warm-up), for a path and for a dict,
then the speed-up of a thread pool of runs of a longer scenario (THREADED, GPT-3 175B
data parallel on 1024 A100 by default: a quarter of a second each) over the same runs
one after another.

Usage: PYTHONPATH=build/test/python scripts/bench-python-overhead.py [SCENARIO] [REPEATS] [THREADED]
       (or with the package pip-installed: python3 scripts/bench-python-overhead.py)
"""

import concurrent.futures
import json
import os
import pathlib
import statistics
import sys
import time

import trainsim

ROOT = pathlib.Path(__file__).resolve().parents[1]
scenario = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "scenarios/gpt2-124m-1xh100.json"
repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 300
threaded_scenario = pathlib.Path(sys.argv[3]) if len(sys.argv) > 3 else ROOT / "scenarios/gpt3-175b-1024xa100-dp.json"


def quantiles(values):
    values = sorted(values)
    return statistics.median(values), values[int(0.9 * (len(values) - 1))]


def measure(arg):
    for _ in range(10):  # warm-up: presets parsed, pages touched
        trainsim._run(arg, None, None, False)
    python, cpp = [], []
    for _ in range(repeats):
        start = time.perf_counter()
        _, inside = trainsim._run(arg, None, None, False)
        python.append(time.perf_counter() - start)
        cpp.append(inside)
    return python, cpp, [p - c for p, c in zip(python, cpp)]


print(f"trainsim {trainsim.__version__}: {scenario.relative_to(ROOT) if scenario.is_relative_to(ROOT) else scenario}, "
      f"{repeats} calls each (times in ms: median / p90)")
print(f"{'input':<8}{'Python call':>18}{'C++ inside':>18}{'overhead':>18}")
with open(scenario, encoding="utf-8") as f:
    as_dict = json.load(f)
for label, arg in (("path", scenario), ("dict", as_dict)):
    python, cpp, overhead = measure(arg)
    row = [quantiles(v) for v in (python, cpp, overhead)]
    print(f"{label:<8}" + "".join(f"{1e3 * m:>10.3f} /{1e3 * p:>6.3f}" for m, p in row))

cores = os.cpu_count() or 1
runs = [threaded_scenario] * (2 * cores)
start = time.perf_counter()
for s in runs:
    trainsim.run(s)
serial = time.perf_counter() - start
start = time.perf_counter()
with concurrent.futures.ThreadPoolExecutor(max_workers=cores) as pool:
    list(pool.map(trainsim.run, runs))
threaded = time.perf_counter() - start
print(f"{threaded_scenario.name} x {len(runs)}: {serial:.3f} s one after another, {threaded:.3f} s on {cores} threads "
      f"(x{serial / threaded:.2f})")
