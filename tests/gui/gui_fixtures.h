#pragma once
// Small hand-made timelines for the GUI tests: every time and pixel the tests
// assert follows from these by hand.
#include <string>

namespace trainsim::gui::testing {

// Two nodes of one GPU each. Times in seconds:
//   rank 0 compute: "fwd" forward [0, 1], "bwd" backward [1, 2]
//   rank 0 dp_comm: "ar" all_reduce [1.5, 2]
//   rank 1 compute: "fwd1" forward [0, 0.5], "bwd1" backward [1.5, 2]
// and one counter, "utilization gpu0->node0.switch": 0.5 from 1.5 s to 2 s.
inline std::string two_node_timeline() {
  return R"({
"format": "trainsim-timeline", "version": 1, "scenario": "two nodes", "num_gpus": 2, "gpus_per_node": 1,
"time_unit": "s", "node_of_rank": [0, 1], "replicas": [],
"lanes": [
{"rank": 0, "stream": "compute", "spans": [
{"rank": 0, "stream": "compute", "category": "forward", "name": "fwd", "start": 0.000000000, "end": 1.000000000, "flops": 4e12, "bytes": 1e9, "iteration": 0, "microbatch": 0, "layer": 0},
{"rank": 0, "stream": "compute", "category": "backward", "name": "bwd", "start": 1.000000000, "end": 2.000000000, "flops": 8e12, "bytes": 2e9, "iteration": 0, "microbatch": 0, "layer": 0}]},
{"rank": 0, "stream": "dp_comm", "spans": [
{"rank": 0, "stream": "dp_comm", "category": "all_reduce", "name": "ar", "start": 1.500000000, "end": 2.000000000, "flops": 0, "bytes": 5e8, "iteration": 0, "microbatch": -1, "layer": -1}]},
{"rank": 1, "stream": "compute", "spans": [
{"rank": 1, "stream": "compute", "category": "forward", "name": "fwd1", "start": 0.000000000, "end": 0.500000000, "flops": 1e12, "bytes": 1e9, "iteration": 0, "microbatch": 0, "layer": 0},
{"rank": 1, "stream": "compute", "category": "backward", "name": "bwd1", "start": 1.500000000, "end": 2.000000000, "flops": 1e12, "bytes": 1e9, "iteration": 0, "microbatch": 0, "layer": 0}]}
],
"counters": [
{"name": "utilization gpu0->node0.switch", "unit": "fraction", "points": [[1.500000000,0.5],[2.000000000,0]]}
]
})";
}

// A run timeline (docs/results.md, "Run timeline") of one day on the job lane,
// rank -1: train [0, 10 h], failure [10 h, 10 h 10 min], restart [10 h 10 min,
// 12 h], train [12 h, 24 h].
inline std::string one_day_run_timeline() {
  return R"({
"format": "trainsim-timeline", "version": 1, "scenario": "two nodes", "num_gpus": 2, "gpus_per_node": 1,
"time_unit": "s", "full_run": {"trial": 0, "seed": 1}, "node_of_rank": [], "replicas": [],
"lanes": [
{"rank": -1, "stream": "job", "spans": [
{"rank": -1, "stream": "job", "category": "train", "name": "train", "start": 0, "end": 36000},
{"rank": -1, "stream": "job", "category": "failure", "name": "gpu failure", "start": 36000, "end": 36600},
{"rank": -1, "stream": "job", "category": "restart", "name": "restart", "start": 36600, "end": 43200},
{"rank": -1, "stream": "job", "category": "train", "name": "train", "start": 43200, "end": 86400}]}
],
"counters": []
})";
}

}  // namespace trainsim::gui::testing
