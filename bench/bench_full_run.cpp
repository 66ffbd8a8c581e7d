// Full-run replay speed (docs/reliability.md, "Run time"): the worked example,
// Llama 3 405B on 16,384 H100 with failures, under hot spares (as shipped) and
// under elastic shrink with 48 h repairs, where every trial visits dozens of
// shrink levels. CPU time is the figure the docs quote; "states" counts the
// iteration simulations the replay asked for beyond the healthy one.
#include <benchmark/benchmark.h>
#include <string>

#include "execution/full_run.h"
#include "execution/simulate.h"
#include "scenario/reader.h"

namespace {

using namespace trainsim;

// scenarios/llama3-405b-16384xh100-failures.json with its failures section replaced.
config::Scenario llama405b(const std::string& failures) {
  return scenario::parse_scenario_text(
      R"({"cluster": {"gpu": "H100-SXM5-80GB", "num_nodes": 2048, "gpus_per_node": 8, "price_per_gpu_hour": 2.99},
          "model": "llama3-405b",
          "training": {"global_batch_size": 2048, "micro_batch_size": 1, "precision": "bf16", "train_tokens": "15T"},
          "parallelism": {"tp": 8, "pp": 16, "dp": "auto", "sequence_parallel": true, "zero_stage": 1,
                          "recompute_granularity": "full", "overlap_grad_reduce": true, "overlap_param_gather": true},
          "simulation": {"network_model": "analytic", "iterations": 1},
          "failures": )" + failures + "}",
      "bench.json");
}

const std::string kShipped = R"({"failures_per_1000_node_days": 6.50, "straggler_fraction": 0.005,
  "straggler_slowdown": 0.10, "detection_time": "10min", "restart_overhead": "10min",
  "checkpoint_write_bandwidth": "57.5GB/s", "policy": "hot_spare", "seed": 1, "threads": 1, "trials": )";
const std::string kElastic = R"({"failures_per_1000_node_days": 6.50, "straggler_fraction": 0.005,
  "straggler_slowdown": 0.10, "detection_time": "10min", "restart_overhead": "10min",
  "checkpoint_write_bandwidth": "57.5GB/s", "policy": "elastic_shrink", "repair_time": "48h", "seed": 1,
  "threads": 1, "trials": )";

void run_full(benchmark::State& state, const std::string& failures) {
  const config::Scenario s = llama405b(failures + std::to_string(state.range(0)) + "}");
  const exec::SimulationOutput healthy = exec::simulate(s);
  int states = 0;
  double days = 0.0;
  for (auto _ : state) {
    const exec::FullRunReport r = exec::simulate_full_run(s, healthy);
    states = r.states_simulated;
    days = r.monte_carlo.time_to_train_s.mean / 86400.0;
    benchmark::DoNotOptimize(days);
  }
  state.counters["trials"] = static_cast<double>(state.range(0));
  state.counters["states"] = states;
  state.counters["mean_days"] = days;
}

void BM_FullRunLlama405bHotSpare(benchmark::State& state) { run_full(state, kShipped); }
BENCHMARK(BM_FullRunLlama405bHotSpare)->Arg(100)->Unit(benchmark::kSecond)->Iterations(1);

void BM_FullRunLlama405bElasticShrink48h(benchmark::State& state) { run_full(state, kElastic); }
BENCHMARK(BM_FullRunLlama405bElasticShrink48h)->Arg(10)->Arg(100)->Unit(benchmark::kSecond)->Iterations(1);

// One iteration of a shrunk state: 127 of 128 replicas, a straggler in every stage.
void BM_SimulateShrunkStateWithStragglers(benchmark::State& state) {
  config::Scenario s = llama405b("null");
  s.parallel.data = 127;
  s.training.global_batch_size = 127 * 16;
  s.cluster.num_nodes = 127 * 16;
  exec::SimulateOptions options;
  for (int k = 0; k < 16; ++k) options.slow_ranks.emplace_back(k * (s.cluster.num_gpus() / 16), 0.1);
  for (auto _ : state) benchmark::DoNotOptimize(exec::simulate(s, options).timeline.makespan);
}
BENCHMARK(BM_SimulateShrunkStateWithStragglers)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace
