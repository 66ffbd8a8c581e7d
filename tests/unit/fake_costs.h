#pragma once
// Fake cost models for executor tests on hand-built graphs: a kernel takes its
// `flops` in seconds, a collective its `bytes` in seconds.
#include <string_view>

#include "hardware/compute_model.h"
#include "network/collective_model.h"

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

}  // namespace trainsim::testing
