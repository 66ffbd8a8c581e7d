// A data-parallel iteration against closed forms built from the cost models.
#include <cmath>
#include <gtest/gtest.h>

#include "execution/simulate.h"
#include "hardware/compute_model.h"
#include "network/collective_engine.h"
#include "network/topology_builders.h"
#include "report/metrics.h"
#include "test_scenarios.h"
#include "workload/parameters.h"
#include "workload/transformer_ops.h"

namespace trainsim {
namespace {

const std::string kModel = R"({"num_layers": 4, "hidden_size": 1024, "num_attention_heads": 8,
                                "seq_length": 512, "vocab_size": 32000})";

// Sum of the compute model's times for every compute task of one micro-batch.
double microbatch_seconds(const config::Scenario& s) {
  const hw::RooflineComputeModel model(s.cluster.gpu);
  const workload::TransformerOps ops(s.model, s.training, s.training.micro_batch_size);
  double t = 0;
  auto add = [&](const std::vector<workload::Op>& v) {
    for (const auto& op : v) t += core::to_seconds(core::from_seconds(model.seconds(op.work, s.training.precision)));
  };
  add(ops.embedding_forward());
  for (long long l = 0; l < s.model.num_layers; ++l) add(ops.layer_forward(l));
  add(ops.head_forward());
  add(ops.head_backward());
  for (long long l = s.model.num_layers - 1; l >= 0; --l) add(ops.layer_backward(l));
  add(ops.embedding_backward());
  return t;
}

// No ZeRO: every rank updates all parameters and zeroes (and, with dp > 1,
// pre-scales) its whole gradient buffer.
double optimizer_seconds(const config::Scenario& s) {
  const hw::RooflineComputeModel model(s.cluster.gpu);
  const workload::TransformerOps ops(s.model, s.training, s.training.micro_batch_size);
  const double params = workload::count_parameters(s.model).total;
  const workload::OptimizerScope scope{params, params, s.parallel.data > 1, false};
  return core::to_seconds(core::from_seconds(model.seconds(ops.optimizer_step(scope).work, s.training.precision)));
}

TEST(Iteration, SingleGpuIsMicroBatchesTimesOnePlusOptimizer) {
  // 64 sequences in micro-batches of 8 on 1 GPU: 8 micro-batches.
  const auto s = testing::make_scenario(kModel, R"("micro_batch_size": 8)", R"("dp": 1)", 1,
                                        R"({"preset": "H100-SXM5-80GB", "platform": {"gpus_per_node": 1}})");
  const auto out = exec::simulate(s);
  EXPECT_EQ(out.iteration.num_microbatches, 8);
  EXPECT_NEAR(core::to_seconds(out.timeline.makespan), 8 * microbatch_seconds(s) + optimizer_seconds(s), 1e-8);
}

TEST(Iteration, WithoutOverlapOneAllReduceFollowsTheLastBackward) {
  // 8 GPUs, micro-batch 8: one micro-batch each, then one bucket all-reduced.
  const auto s = testing::make_scenario(kModel, R"("micro_batch_size": 8)", R"("overlap_grad_reduce": false)");
  const auto out = exec::simulate(s);
  EXPECT_EQ(out.iteration.gradient_buckets, 1);
  const double grads = workload::count_parameters(s.model).total * 4.0;  // fp32 main gradients
  // One node: the all-reduce the network model plans for the 8 GPUs (its own
  // closed forms are tested in collective_engine_test.cpp).
  const net::Topology topology = net::build_topology(s.cluster);
  net::CollectivePlanner planner(topology);
  const net::Collective c{net::CollectiveKind::kAllReduce, grads, {8, 1, 8, nullptr}};
  const double ar = core::to_seconds(planner.plan(c).duration(grads));
  EXPECT_NEAR(core::to_seconds(out.timeline.makespan), microbatch_seconds(s) + ar + optimizer_seconds(s), 1e-8);
  const auto m = report::compute_metrics(s, out);
  EXPECT_NEAR(m.breakdown_s.exposed_communication, ar, 1e-8);
  EXPECT_NEAR(m.breakdown_s.compute + m.breakdown_s.optimizer + m.breakdown_s.exposed_communication +
                  m.breakdown_s.other, m.iteration_time_s, 1e-9);
}

TEST(Iteration, OverlappedBucketsHideCommunicationBehindBackward) {
  const auto base = testing::make_scenario(kModel, R"("micro_batch_size": 8)", R"("overlap_grad_reduce": false)");
  const auto over = testing::make_scenario(kModel, R"("micro_batch_size": 8)",
                                           R"("overlap_grad_reduce": true, "ddp_bucket_size": 2000000)");
  const auto a = exec::simulate(base);
  const auto b = exec::simulate(over);
  EXPECT_GT(b.iteration.gradient_buckets, 1);
  EXPECT_LT(b.timeline.makespan, a.timeline.makespan);
  // Never faster than the computation alone.
  EXPECT_GE(core::to_seconds(b.timeline.makespan), microbatch_seconds(over) + optimizer_seconds(over) - 1e-9);
}

TEST(Iteration, MetricsFollowTheirDefinitions) {
  const auto s = testing::make_scenario(kModel, R"("micro_batch_size": 4, "train_tokens": 1e9)");
  const auto out = exec::simulate(s);
  const auto m = report::compute_metrics(s, out);
  const double T = core::to_seconds(out.timeline.makespan);
  EXPECT_DOUBLE_EQ(m.iteration_time_s, T);
  EXPECT_DOUBLE_EQ(m.tokens_per_s, 64.0 * 512 / T);
  EXPECT_DOUBLE_EQ(m.mfu, m.model_flops_per_iteration / (T * 8 * 989e12));
  EXPECT_DOUBLE_EQ(*m.iterations_to_train, std::ceil(1e9 / (64.0 * 512)));
  EXPECT_DOUBLE_EQ(*m.time_to_train_s, *m.iterations_to_train * T);
  // Energy (docs/model.md, "Energy"): the GPUs between the H100 preset's 140 W
  // idle and 700 W TDP by their compute-stream busy fraction u, 4600 W for the
  // node besides them, PUE 1.58, over the whole time to train.
  core::Time busy = 0;
  for (const exec::Span& span : out.timeline.spans)
    if (out.iteration.graph[span.task].stream == workload::Stream::kCompute) busy += span.end - span.start;
  ASSERT_EQ(out.iteration.simulated_ranks.size(), 1u);  // data parallel only: one representative
  const double u = core::to_seconds(busy) / T;
  EXPECT_GT(u, 0.5);
  EXPECT_LT(u, 1.0);
  EXPECT_DOUBLE_EQ(m.gpu_utilization, u);
  const double watts = 8 * (140.0 + (700.0 - 140.0) * u) + 4600.0;
  EXPECT_NEAR(*m.energy_kwh, 1.58 * watts * *m.time_to_train_s / 3.6e6, 1e-12 * *m.energy_kwh);
  EXPECT_NEAR(*m.average_power_w, 1.58 * watts, 1e-9 * watts);  // the facility's mean draw
}

TEST(Iteration, NotFittingSaysWhy) {
  const auto s = testing::make_scenario("\"llama3-70b\"", R"("micro_batch_size": 1)", "", 8);
  const auto m = report::compute_metrics(s, exec::simulate(s));
  EXPECT_FALSE(m.memory.fits);
  EXPECT_NE(m.memory.reason.find("model states alone exceed"), std::string::npos);
}

}  // namespace
}  // namespace trainsim
