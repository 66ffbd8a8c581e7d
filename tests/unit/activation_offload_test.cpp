// CPU activation offload (workload/activation_offload.h; docs/model.md, "CPU
// activation offload") on a hand-built stage: four layers, the first two (or
// three) offloaded, forward 1 s and backward 2 s a layer, 3 bytes of activations
// a layer; the executor prices a copy at bytes / the host link's rate.
#include <gtest/gtest.h>

#include <map>
#include <utility>
#include <vector>

#include "core/simulator.h"
#include "execution/executor.h"
#include "fake_costs.h"
#include "network/collective_model.h"
#include "workload/activation_offload.h"
#include "workload/memory.h"

namespace trainsim {
namespace {

using workload::Category;
using workload::Op;
using workload::Role;

using testing::BytesAreSeconds;
using testing::FlopsAreSeconds;

std::vector<Op> one_op(double seconds, long long layer) {
  Op op;
  op.name = "k";
  op.work.flops = seconds;
  op.layer = layer;
  return {op};
}

// One micro-batch of a stage of 4 layers with the first `offloaded` offloaded over
// a link of `rate` B/s each way: the iteration's makespan.
double makespan(int offloaded, double rate) {
  constexpr long long kLayers = 4;
  workload::TaskGraph graph;
  workload::StageEmitter emit(graph, 0, {});
  workload::ActivationOffload offload(graph, std::vector<double>(kLayers, 3.0), offloaded);
  std::vector<std::vector<Op>> forward, backward;
  for (long long l = 0; l < kLayers; ++l) {
    forward.push_back(one_op(1.0, l));
    backward.push_back(one_op(2.0, l));
  }
  emit.set_context(0, 0);
  for (long long l = 0; l < kLayers; ++l) {
    offload.before_forward(emit, l);
    emit.add(forward[static_cast<std::size_t>(l)], Category::kForward, Role::kLayer);
    offload.after_forward(emit, l);
  }
  for (long long l = kLayers - 1; l >= 0; --l) {
    offload.before_backward(emit, l);
    emit.add(backward[static_cast<std::size_t>(l)], Category::kBackward, Role::kLayer);
  }
  FlopsAreSeconds compute;
  net::AnalyticBackend backend{std::make_unique<BytesAreSeconds>()};
  core::Simulator sim;
  exec::Executor executor(compute, backend, hw::Precision::kBf16);
  executor.set_host(hw::HostSpec{rate, rate, 1, 0.0, 0.0}, 1);
  return core::to_seconds(executor.run(graph, sim).makespan);
}

// A slow link (3 s a copy): layer 2's forward waits for layer 0's copy (1 + 3 = 4 s),
// layer 3's for layer 1's (queued behind it: 7 s), so the forward ends at 8 s; the
// backward of layer 3 (8-10 s) issues nothing, layer 2's issues layer 1's reload
// (10-13 s), layer 1's layer 0's (13-16 s), each backward waiting for its own:
// B2 10-12, B1 13-15, B0 16-18.
TEST(ActivationOffload, ASlowLinkStallsTheForwardAtEachReleaseAndTheBackwardAtEachReload) {
  EXPECT_DOUBLE_EQ(makespan(2, 1.0), 18.0);
}

// A fast link (0.03 s a copy) with N = L - 2: every copy hides behind compute, as
// Transformer Engine's documentation promises ("for full overlap, use model_layers
// - 2 or less"): 4 x 1 + 4 x 2 = 12 s.
TEST(ActivationOffload, TwoLayersLessThanTheModelHideEveryCopy) {
  EXPECT_DOUBLE_EQ(makespan(2, 100.0), 12.0);
}

// N = L - 1: each release is the next layer (it waits for the copy just issued)
// and each reload is issued by the backward of its own layer: all six copies are
// exposed, 12 + 6 x 0.03 s.
TEST(ActivationOffload, OneLayerLessThanTheModelExposesEveryCopy) {
  EXPECT_NEAR(makespan(3, 100.0), 12.0 + 6 * 0.03, 1e-9);
}

// Memory with N of L layers offloaded (one stage, one micro-batch alive): the
// layers alive at the peak drop from L to L - N, and the N wait in host memory.
TEST(ActivationOffload, PeakHoldsLMinusNLayersAndTheHostTheOtherN) {
  workload::ModelConfig m;
  m.num_layers = 12;
  m.hidden_size = 768;
  m.num_attention_heads = 12;
  m.ffn_hidden_size = 3072;
  m.vocab_size = 50257;
  m.seq_length = 1024;
  workload::TrainingConfig t;
  t.global_batch_size = 8;
  t.micro_batch_size = 8;
  workload::ParallelConfig p;
  const workload::MemoryEstimate kept = workload::estimate_memory(m, t, p);
  p.offloaded_layers = 5;
  const workload::MemoryEstimate offloaded = workload::estimate_memory(m, t, p);
  const double layer = workload::layer_activation_bytes(m, t, workload::Recompute::kNone, 8);
  EXPECT_DOUBLE_EQ(kept.activations - offloaded.activations, 5 * layer);
  EXPECT_DOUBLE_EQ(offloaded.host_bytes, 5 * layer);
  EXPECT_DOUBLE_EQ(kept.host_bytes, 0.0);
  EXPECT_DOUBLE_EQ(offloaded.in_flight_microbatches, 7.0 / 12.0);
}

}  // namespace
}  // namespace trainsim

#include "execution/simulate.h"
#include "scenario/reader.h"
#include "test_scenarios.h"

namespace trainsim {
namespace {

// Through the iteration builder: a 2-layer model, layer 0 offloaded, two
// micro-batches per rank over two iterations: a copy out and back per micro-batch,
// each backward of layer 0 after its reload, and the memory timeline's peak (layer
// 0 freed at layer 1's forward, back at its reload) equal to the estimate.
TEST(ActivationOffload, EveryMicroBatchOfEveryIterationCopiesOutAndBack) {
  const config::Scenario s = testing::make_scenario(
      testing::kDense, R"("micro_batch_size": 4)", R"("cpu_offloading": true, "cpu_offloading_num_layers": 1)");
  config::Scenario two = s;
  two.simulation.iterations = 2;
  const exec::SimulationOutput out = exec::simulate(two);
  int offloads = 0;
  int reloads = 0;
  std::map<std::pair<int, int>, core::Time> reload_end;
  for (const exec::Span& span : out.timeline.spans) {
    if (span.rank != 0) continue;
    const workload::Task& t = out.iteration.graph[span.task];
    if (t.category == Category::kOffload) ++offloads;
    if (t.category == Category::kReload) {
      ++reloads;
      reload_end[{t.iteration, t.microbatch}] = span.end;
    }
  }
  EXPECT_EQ(offloads, 2 * 2);
  EXPECT_EQ(reloads, 2 * 2);
  for (const exec::Span& span : out.timeline.spans) {
    const workload::Task& t = out.iteration.graph[span.task];
    if (span.rank == 0 && t.layer == 0 && t.category == Category::kBackward) {
      EXPECT_GE(span.start, reload_end.at({t.iteration, t.microbatch}));
    }
  }
  const exec::SimulationOutput one = exec::simulate(s);
  EXPECT_DOUBLE_EQ(one.memory_over_time.peak_bytes, one.memory.total());
  EXPECT_LT(one.memory.total(), exec::simulate(testing::make_scenario(testing::kDense, R"("micro_batch_size": 4)"))
                                    .memory.total());
}

}  // namespace
}  // namespace trainsim
