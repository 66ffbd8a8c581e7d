// Whole-scenario simulation speed: read nothing, build the task graph, run it.
#include <benchmark/benchmark.h>
#include <string>

#include "execution/simulate.h"
#include "scenario/reader.h"

namespace {

using namespace trainsim;

config::Scenario make(const std::string& model, int nodes, int global_batch) {
  return scenario::parse_scenario_text(
      R"({"cluster": {"gpu": "H100-SXM5-80GB", "num_nodes": )" + std::to_string(nodes) + R"(}, "model": ")" + model +
          R"(", "training": {"global_batch_size": )" + std::to_string(global_batch) +
          R"(}, "parallelism": {"overlap_grad_reduce": true, "recompute_granularity": "full"}})",
      "bench.json");
}

// llama3-8b data parallel: 64 GPUs (8 micro-batches each) up to 16,384 GPUs.
void BM_SimulateLlama3_8bDataParallel(benchmark::State& state) {
  const auto nodes = static_cast<int>(state.range(0));
  const config::Scenario s = make("llama3-8b", nodes, nodes * 8 * 8);
  std::size_t tasks = 0;
  for (auto _ : state) {
    const exec::SimulationOutput out = exec::simulate(s);
    tasks = out.iteration.graph.size();
    benchmark::DoNotOptimize(out.timeline.makespan);
  }
  state.counters["gpus"] = nodes * 8;
  state.counters["tasks"] = static_cast<double>(tasks);
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(tasks));
}
BENCHMARK(BM_SimulateLlama3_8bDataParallel)->Arg(8)->Arg(128)->Arg(2048)->Unit(benchmark::kMillisecond);

// The scale target (issue #4, DESIGN.md "Scale"): one iteration of Llama 3 405B
// on 16,384 H100, TP 8 x PP 16 (interleaved, 4 chunks) x DP 128, flow network model.
void BM_SimulateLlama3_405b(benchmark::State& state) {
  const config::Scenario s = scenario::parse_scenario_text(
      R"({"cluster": {"gpu": "H100-SXM5-80GB", "num_nodes": 2048, "gpus_per_node": 8,
                      "inter_node": {"topology": "fat_tree", "nics_per_node": 8, "nic_bandwidth": "400Gbps"}},
          "model": "llama3-405b",
          "training": {"global_batch_size": 2048, "micro_batch_size": 1, "precision": "bf16"},
          "parallelism": {"tp": 8, "pp": 16, "dp": 128, "vpp": 2, "sequence_parallel": true, "zero_stage": 1,
                          "overlap_grad_reduce": true, "overlap_param_gather": true,
                          "recompute_granularity": "full"},
          "simulation": {"network_model": "flow", "iterations": 1}})",
      "bench.json");
  std::size_t tasks = 0;
  for (auto _ : state) {
    const exec::SimulationOutput out = exec::simulate(s);
    tasks = out.iteration.graph.size();
    benchmark::DoNotOptimize(out.timeline.makespan);
  }
  state.counters["gpus"] = 16384;
  state.counters["tasks"] = static_cast<double>(tasks);
}
BENCHMARK(BM_SimulateLlama3_405b)->Unit(benchmark::kMillisecond)->Iterations(2);

}  // namespace
