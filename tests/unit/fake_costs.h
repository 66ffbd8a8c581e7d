#pragma once
// Fake cost models for executor tests on hand-built graphs: a kernel takes its
// `flops` in seconds, a collective its `bytes` in seconds.
#include <memory>
#include <string_view>

#include "core/simulator.h"
#include "execution/executor.h"
#include "hardware/compute_model.h"
#include "network/collective_model.h"
#include "workload/task_graph.h"

namespace trainsim::testing {

class FlopsAreSeconds final : public hw::ComputeModel {
 public:
  [[nodiscard]] double seconds(const hw::KernelWork& w, hw::Precision) const override { return w.flops; }
  [[nodiscard]] std::string_view name() const override { return "test"; }
  // Host-dispatched kernels take `host_s` of the host thread each (docs/model.md, "Host dispatch").
  [[nodiscard]] double host_seconds(const hw::KernelWork& w) const override {
    return w.host_pass != hw::HostPass::kNone ? host_s : 0.0;
  }
  double host_s = 0.0;
};

class BytesAreSeconds final : public net::CollectiveModel {
 public:
  [[nodiscard]] double seconds(const net::Collective& c) const override { return c.bytes; }
  [[nodiscard]] std::string_view name() const override { return "test"; }
};

// A kernel takes its FLOPs at 1 TFLOP/s (memory-bound ones nothing); a collective its
// bytes at 1 GB/s: times of a real iteration graph that a test counts by hand.
class Teraflop final : public hw::ComputeModel {
 public:
  [[nodiscard]] double seconds(const hw::KernelWork& w, hw::Precision) const override { return w.flops * 1e-12; }
  [[nodiscard]] std::string_view name() const override { return "1 TFLOP/s"; }
};
class Gigabyte final : public net::CollectiveModel {
 public:
  [[nodiscard]] double seconds(const net::Collective& c) const override { return c.bytes * 1e-9; }
  [[nodiscard]] std::string_view name() const override { return "1 GB/s"; }
};

// The makespan of `g` at those rates, in seconds.
inline double seconds_at_unit_rates(const workload::TaskGraph& g) {
  const Teraflop compute;
  net::AnalyticBackend backend{std::make_unique<Gigabyte>()};
  core::Simulator sim;
  exec::Executor e(compute, backend, hw::Precision::kBf16);
  return core::to_seconds(e.run(g, sim).makespan);
}

}  // namespace trainsim::testing
