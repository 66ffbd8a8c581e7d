// A simulated all-reduce over 1k, 16k and 100k GPUs at flow level: the whole
// path a training simulation takes for one collective (build the fat tree,
// route and choose the algorithm, run the flows to completion). Counters: flows,
// rate solves, flow rate updates per second, the simulated time and the
// process's peak resident memory. Run one size alone to read its own peak:
//   build/release/bench/bench_collective --benchmark_filter=/16384
#include <benchmark/benchmark.h>

#include <fstream>
#include <string>

#include "core/simulator.h"
#include "network/collective_engine.h"
#include "network/topology_builders.h"

namespace trainsim::net {
namespace {

// H100 nodes of 8 GPUs and 8 NDR NICs on a fat tree; 100k GPUs (100k NICs) need
// more than the 65,536 NIC ports of a radix-64 3-tier tree, so they get radix 128.
hw::ClusterSpec cluster(long long gpus) {
  hw::ClusterSpec c;
  c.gpu.name = "H100-SXM5-80GB";
  c.gpus_per_node = 8;
  c.num_nodes = static_cast<int>(gpus / 8);
  c.intra_node.bandwidth = 450e9;
  c.intra_node.latency = 1.83e-6;
  c.intra_node.bandwidth_efficiency = 0.822;
  c.intra_node.nvls_efficiency = 0.684;
  c.inter_node.nic_bandwidth = 50e9;
  c.inter_node.latency = 9.6e-6;
  c.inter_node.bandwidth_efficiency = 0.94;
  c.inter_node.switch_radix = gpus > 65536 ? 128 : 64;
  return c;
}

long long peak_rss_kib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::stoll(line.substr(6));
  return -1;
}

void BM_FlowAllReduce(benchmark::State& state) {
  const long long gpus = state.range(0);
  const double bytes = 1 << 30;
  double simulated = 0.0;
  std::uint64_t flows = 0;
  std::uint64_t solves = 0;
  for (auto _ : state) {
    const Topology t = build_topology(cluster(gpus));
    CollectivePlanner planner(t, static_cast<Algorithm>(state.range(1)));
    FlowBackend flow(planner);
    core::Simulator sim;
    const Collective c{CollectiveKind::kAllReduce, bytes,
                       {static_cast<int>(gpus), t.num_nodes(), t.gpus_per_node(), nullptr}};
    flow.start(c, sim, [] {});
    sim.run();
    simulated = core::to_seconds(sim.now());
    flows = flow.statistics().flows;
    solves = flow.statistics().solves;
    state.SetLabel(std::string(to_string(planner.plan(c).algorithm)) + ", " + t.description);
  }
  state.counters["flows"] = static_cast<double>(flows);
  state.counters["solves"] = static_cast<double>(solves);
  state.counters["simulated_s"] = simulated;
  state.counters["peak_rss_MiB"] = static_cast<double>(peak_rss_kib()) / 1024.0;
}

BENCHMARK(BM_FlowAllReduce)
    ->ArgsProduct({{1024, 16384, 100000}, {static_cast<long long>(Algorithm::kAuto)}})
    ->Iterations(1)
    ->Unit(benchmark::kSecond);

}  // namespace
}  // namespace trainsim::net
