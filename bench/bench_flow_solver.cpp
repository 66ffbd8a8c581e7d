// Throughput of the max-min flow solver: rate updates per second, where one
// update is a flow starting or finishing followed by solve(), with N flows in
// flight on a two-level fat tree. Items are updates.
//
// Topology: 64 leaves of 32 hosts and 16 spines (2048 hosts). Every host has an
// uplink and a downlink to its leaf at 50 GB/s (400 Gb/s NIC); every leaf has
// one link up to and one down from each spine at 100 GB/s, so the tree is
// non-blocking (32 x 50 = 16 x 100). 6144 links in all. A flow between hosts
// of one leaf crosses 2 links; otherwise 4, through a spine picked at random
// (ECMP). Paths come from a fixed seed.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "core/rng.h"
#include "network/flow_solver.h"

namespace trainsim::net {
namespace {

constexpr std::uint64_t kHostsPerLeaf = 32;
constexpr std::uint64_t kLeaves = 64;
constexpr std::uint64_t kSpines = 16;
constexpr std::uint64_t kHosts = kHostsPerLeaf * kLeaves;
constexpr double kHostLink = 50e9;
constexpr double kSpineLink = 100e9;

struct FatTree {
  FlowSolver solver;
  std::vector<LinkId> host_up, host_down;    // [host]
  std::vector<LinkId> leaf_up, spine_down;  // [leaf * kSpines + spine]

  FatTree() {
    for (std::uint64_t h = 0; h < kHosts; ++h) {
      host_up.push_back(solver.add_link(kHostLink));
      host_down.push_back(solver.add_link(kHostLink));
    }
    for (std::uint64_t i = 0; i < kLeaves * kSpines; ++i) {
      leaf_up.push_back(solver.add_link(kSpineLink));
      spine_down.push_back(solver.add_link(kSpineLink));
    }
  }

  // A random flow; `local` keeps source and destination under one leaf.
  std::vector<LinkId> path(core::Rng& rng, bool local) const {
    const std::uint64_t src = rng.below(kHosts);
    std::uint64_t dst = 0;
    do {
      dst = local ? src / kHostsPerLeaf * kHostsPerLeaf + rng.below(kHostsPerLeaf) : rng.below(kHosts);
    } while (dst == src);
    const std::uint64_t src_leaf = src / kHostsPerLeaf;
    const std::uint64_t dst_leaf = dst / kHostsPerLeaf;
    if (src_leaf == dst_leaf) return {host_up[src], host_down[dst]};
    const std::uint64_t spine = rng.below(kSpines);
    return {host_up[src], leaf_up[src_leaf * kSpines + spine], spine_down[dst_leaf * kSpines + spine],
            host_down[dst]};
  }
};

// Fills the tree with `n` flows, solves once, then per iteration finishes
// `batch` random flows and starts `batch` new ones. batch == 1 solves after
// every single change (the worst case: each start and each finish is its own
// event); larger batches solve once per batch (a collective step starting or
// ending many flows at one instant).
void run_churn(benchmark::State& state, bool local, std::int64_t batch) {
  const auto n = static_cast<std::uint64_t>(state.range(0));
  FatTree tree;
  core::Rng rng(42);
  std::vector<FlowId> live;
  live.reserve(n);
  for (std::uint64_t i = 0; i < n; ++i) live.push_back(tree.solver.add_flow(tree.path(rng, local), 1e9));
  tree.solver.solve();

  double solved_flows = 0.0;
  std::int64_t solves = 0;
  for (auto _ : state) {
    for (std::int64_t b = 0; b < batch; ++b) {
      const auto k = static_cast<std::size_t>(rng.below(live.size()));
      tree.solver.remove_flow(live[k]);
      live[k] = live.back();
      live.pop_back();
      if (batch == 1) {
        tree.solver.solve();
        solved_flows += static_cast<double>(tree.solver.last_solve().flows);
        ++solves;
      }
    }
    for (std::int64_t b = 0; b < batch; ++b) live.push_back(tree.solver.add_flow(tree.path(rng, local), 1e9));
    tree.solver.solve();
    solved_flows += static_cast<double>(tree.solver.last_solve().flows);
    ++solves;
    benchmark::DoNotOptimize(tree.solver.time_to_next_completion());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * 2 * batch);
  // How much of the network one solve touched, on average.
  state.counters["flows_per_solve"] = solves > 0 ? solved_flows / static_cast<double>(solves) : 0.0;
}

// Random pairs over the whole tree: one connected component, so every solve
// is a full re-solve.
void BM_FlowChurnFatTree(benchmark::State& state) { run_churn(state, false, 1); }
BENCHMARK(BM_FlowChurnFatTree)->Arg(1'000)->Arg(10'000)->Arg(100'000)->Unit(benchmark::kMillisecond);

// Same, 100 finishes and 100 starts per solve.
void BM_FlowChurnFatTreeBatch100(benchmark::State& state) { run_churn(state, false, 100); }
BENCHMARK(BM_FlowChurnFatTreeBatch100)->Arg(1'000)->Arg(10'000)->Arg(100'000)->Unit(benchmark::kMillisecond);

// Pairs inside one leaf: 64 independent components, so an incremental solve
// touches about 1/64 of the flows.
void BM_FlowChurnLeafLocal(benchmark::State& state) { run_churn(state, true, 1); }
BENCHMARK(BM_FlowChurnLeafLocal)->Arg(1'000)->Arg(10'000)->Arg(100'000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace trainsim::net
