#pragma once
// Runs a task graph on the discrete-event simulator. Each (rank, stream) lane runs
// its tasks one at a time in program order, like a CUDA stream; a task starts when
// it reaches the head of its lane and its dependencies have finished. Lanes run
// concurrently, so communication overlaps computation. Collectives start once all
// their simulated participants are ready and finish when the backend says so.
#include <map>
#include <stdexcept>
#include <utility>
#include <vector>

#include "core/progress.h"
#include "core/simulator.h"
#include "execution/timeline.h"
#include "hardware/cluster.h"
#include "hardware/compute_model.h"
#include "network/collective_model.h"
#include "workload/task_graph.h"

namespace trainsim::exec {

class Executor {
 public:
  Executor(const hw::ComputeModel& compute, net::CommunicationBackend& network, hw::Precision precision)
      : compute_(compute), network_(network), precision_(precision) {}

  // Throws std::logic_error naming a stuck task if the graph cannot finish.
  // `progress`, when given, advances by one unit per finished task (graph.size() units).
  Timeline run(const workload::TaskGraph& graph, core::Simulator& sim, core::Progress* progress = nullptr);

  // Compute kernels of simulated rank r take (1 + slowdown[r]) times as long: a
  // straggler (docs/model.md, "Reliability").
  void set_compute_slowdown(std::map<int, double> slowdown) { slowdown_ = std::move(slowdown); }

  // Compute kernels take (1 + s) times as long while a collective of their rank is
  // in flight (docs/model.md, "Compute beside communication"): s = tensor_core for
  // matmul and attention kernels, memory_bound for the others; 0: no slowdown.
  // Throws std::invalid_argument for a negative s (a kernel beside a collective is
  // never faster than alone).
  void set_overlap_slowdown(double tensor_core, double memory_bound) {
    if (!(tensor_core >= 0.0) || !(memory_bound >= 0.0))
      throw std::invalid_argument("overlap slowdown must be >= 0");
    overlap_ = {1.0 + tensor_core, 1.0 + memory_bound};
  }

  // The GPU's link to host memory and the host's CPU Adam rate, shared by the
  // node's `gpus_per_node` GPUs, which price host work (workload::HostWork).
  void set_host(const hw::HostSpec& host, int gpus_per_node) {
    host_ = host;
    gpus_per_node_ = gpus_per_node;
  }

  // The factors (1 + s) of kernels beside a collective, by kernel class.
  struct OverlapFactors {
    double tensor_core = 1.0;   // hw::KernelClass::kMatmul and kAttention
    double memory_bound = 1.0;  // hw::KernelClass::kMemoryBound
    [[nodiscard]] bool any() const { return tensor_core != 1.0 || memory_bound != 1.0; }
  };

  // One GPU type's hardware in a mixed cluster (docs/model.md, "Heterogeneous jobs").
  struct PoolHardware {
    const hw::ComputeModel* compute = nullptr;
    OverlapFactors overlap;
    hw::HostSpec host;
  };
  // Ranks run on pools of different hardware: simulated rank r on pools[rank_pool[r]]
  // (ranks not listed: pool 0). Replaces the compute model, overlap factors and
  // host given before; the models must outlive run().
  void set_pools(std::vector<PoolHardware> pools, std::map<int, int> rank_pool) {
    pools_ = std::move(pools);
    rank_pool_ = std::move(rank_pool);
  }

 private:
  std::map<int, double> slowdown_;
  OverlapFactors overlap_;
  std::vector<PoolHardware> pools_;  // empty: one, compute_ with overlap_ and host_
  std::map<int, int> rank_pool_;
  hw::HostSpec host_;
  int gpus_per_node_ = 1;
  const hw::ComputeModel& compute_;
  net::CommunicationBackend& network_;
  hw::Precision precision_;
};

}  // namespace trainsim::exec
