// CPU optimizer offload (Megatron-Core's optimizer_cpu_offload; docs/model.md,
// "CPU optimizer offload"): a dense model on one H100 node under the distributed
// optimizer (ZeRO-1 over 8 ranks), half of each rank's shard S offloaded, a host
// that updates 8e8 parameters a second for its 8 GPUs (1e8 each).
#include <gtest/gtest.h>

#include <string>

#include "execution/simulate.h"
#include "scenario/reader.h"
#include "test_scenarios.h"
#include "workload/memory.h"

namespace trainsim {
namespace {

config::Scenario offloaded(const std::string& extra) {
  return scenario::parse_scenario_text(
      R"({"cluster": {"gpu": "H100-SXM5-80GB", "num_nodes": 1, "host": {"cpu_adam_rate": 8e8}},
          "model": )" + testing::kDense + R"(,
          "training": {"global_batch_size": 64, "micro_batch_size": 8, "optimizer_cpu_offload": true,
                       "optimizer_offload_fraction": 0.5)" + extra + R"(},
          "parallelism": {"zero_stage": 1}})",
      "offload.json");
}

double span_seconds(const exec::SimulationOutput& out, const std::string& name) {
  for (const exec::Span& s : out.timeline.spans)
    if (s.rank == 0 && out.iteration.graph.work(s.task).name == name) return core::to_seconds(s.end - s.start);
  return -1.0;
}

// The offloaded half of the shard, f S = 0.5 P / 8: its fp32 main gradients to the
// host at 55.12 GB/s, the update at 1e8 parameters a second, the fp32 weights back
// at 55.05 GB/s.
TEST(OptimizerOffload, CopiesAtTheHostLinkAndTheUpdateAtTheHostsRatePerGpu) {
  const exec::SimulationOutput out = exec::simulate(offloaded(""));
  const double fs = 0.5 * out.iteration.parameters_per_gpu / 8.0;
  EXPECT_NEAR(span_seconds(out, "optimizer.grads_to_host"), fs * 4.0 / 55.12e9, 1e-9);
  EXPECT_NEAR(span_seconds(out, "optimizer.cpu_adam"), fs / 1e8, 1e-9);
  EXPECT_NEAR(span_seconds(out, "optimizer.params_to_device"), fs * 4.0 / 55.05e9, 1e-9);
}

// overlap_cpu_optimizer_d2h_h2d runs both copies beside the update, which here is
// the longest: the step is shorter by both copies.
TEST(OptimizerOffload, OverlapHidesBothCopiesBehindALongerUpdate) {
  const exec::SimulationOutput serial = exec::simulate(offloaded(""));
  const exec::SimulationOutput overlapped = exec::simulate(offloaded(R"(, "overlap_cpu_optimizer_d2h_h2d": true)"));
  const double copies =
      span_seconds(serial, "optimizer.grads_to_host") + span_seconds(serial, "optimizer.params_to_device");
  EXPECT_NEAR(core::to_seconds(serial.timeline.makespan - overlapped.timeline.makespan), copies, 2e-9);
}

// GPU memory keeps (1 - f) of the shard's 12 bytes of master weights and moments;
// the host holds f of them and a copy of the main gradients (fp32 here: 4 bytes).
TEST(OptimizerOffload, StatesMoveToHostMemoryWithAGradientCopy) {
  const config::Scenario s = offloaded("");
  config::Scenario kept = s;
  kept.training.optimizer_offload_fraction = 0.0;
  const workload::MemoryEstimate with = workload::estimate_memory(s.model, s.training, s.parallel);
  const workload::MemoryEstimate without = workload::estimate_memory(kept.model, kept.training, kept.parallel);
  const double shard = without.parameters / 8.0;
  EXPECT_DOUBLE_EQ(without.optimizer_states, 12.0 * shard);
  EXPECT_DOUBLE_EQ(with.optimizer_states, 0.5 * 12.0 * shard);
  EXPECT_DOUBLE_EQ(with.host_bytes, 0.5 * 16.0 * shard);
}

}  // namespace
}  // namespace trainsim

namespace trainsim {
namespace {

// bf16 main gradients: the copy to the host and its pinned copy there take 2 bytes.
TEST(OptimizerOffload, TheGradientCopyTakesTheGradientsType) {
  const config::Scenario s = offloaded(R"(, "grad_reduce_dtype": "bf16")");
  const exec::SimulationOutput out = exec::simulate(s);
  const double fs = 0.5 * out.iteration.parameters_per_gpu / 8.0;
  EXPECT_NEAR(span_seconds(out, "optimizer.grads_to_host"), fs * 2.0 / 55.12e9, 1e-9);
  const workload::MemoryEstimate m = workload::estimate_memory(s.model, s.training, s.parallel);
  EXPECT_DOUBLE_EQ(m.host_bytes, 0.5 * (12.0 + 2.0) * m.parameters / 8.0);
}

}  // namespace
}  // namespace trainsim

namespace trainsim {
namespace {

// DeepSpeed's ZeRO-Offload (parallelism.offload_optimizer "cpu", ZeRO-2), one
// micro-batch per rank: each bucket's fp32 partition goes to the host after its
// reduce-scatter, 4 S bytes in all; DeepSpeedCPUAdam over S at 1e8 a second per
// GPU; 2 S bytes of bf16 parameters back. States: none on the GPU, 12 + 4 + 2
// bytes of the partition on the host.
TEST(ZeroOffload, PartitionsCopiedPerBucketTheWholeShardUpdatedOnTheHost) {
  const config::Scenario s = scenario::parse_scenario_text(
      R"({"cluster": {"gpu": "H100-SXM5-80GB", "num_nodes": 1, "host": {"cpu_adam_rate": 8e8}},
          "model": )" + testing::kDense + R"(,
          "training": {"global_batch_size": 64, "micro_batch_size": 8},
          "parallelism": {"zero_stage": 2, "offload_optimizer": "cpu", "overlap_grad_reduce": true,
                          "ddp_bucket_size": 5000000}})",
      "zero-offload.json");
  const exec::SimulationOutput out = exec::simulate(s);
  const double shard = out.iteration.parameters_per_gpu / 8.0;
  double copied = 0.0;
  int buckets = 0;
  for (const exec::Span& span : out.timeline.spans) {
    const workload::Work& w = out.iteration.graph.work(span.task);
    if (span.rank != 0 || !w.host || w.host->kind != workload::HostWork::Kind::kToHost) continue;
    copied += core::to_seconds(span.end - span.start);
    ++buckets;
  }
  EXPECT_EQ(buckets, out.iteration.gradient_buckets);
  EXPECT_GT(buckets, 1);
  EXPECT_NEAR(copied, 4.0 * shard / 55.12e9, 1e-9 * buckets);
  EXPECT_NEAR(span_seconds(out, "optimizer.cpu_adam"), shard / 1e8, 1e-9);
  EXPECT_NEAR(span_seconds(out, "optimizer.params_to_device"), 2.0 * shard / 55.05e9, 1e-9);
  const workload::MemoryEstimate m = workload::estimate_memory(s.model, s.training, s.parallel);
  EXPECT_DOUBLE_EQ(m.optimizer_states, 0.0);
  EXPECT_DOUBLE_EQ(m.host_bytes, (12.0 + 4.0 + 2.0) * m.parameters / 8.0);
}

}  // namespace
}  // namespace trainsim
