// The PyTorch eager program under DDP (framework "pytorch_eager" with data
// parallelism; workload/ddp.h, docs/model.md "PyTorch eager under DDP"): its buckets,
// copies and memory against hand counts for GPT-2 124M, and the reader's refusals.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "execution/simulate.h"
#include "scenario/errors.h"
#include "scenario/reader.h"
#include "workload/memory.h"

namespace trainsim {
namespace {

// scenarios/validation/gpt2-124m-1xh100.json's model and program on 8 H100.
std::string ddp_scenario(const std::string& parallelism, long long global_batch = 64,
                         const std::string& gpus_per_node = "8") {
  return R"({"cluster": {"gpu": "H100-SXM5-80GB", "num_nodes": 1, "gpus_per_node": )" + gpus_per_node + R"(},
    "model": {"num_layers": 12, "hidden_size": 768, "ffn_hidden_size": 3072, "num_attention_heads": 12,
              "seq_length": 1024, "max_position_embeddings": 1024, "vocab_size": 50304,
              "hidden_dropout": 0.0, "attention_dropout": 0.0},
    "training": {"global_batch_size": )" +
         std::to_string(global_batch) + R"(, "micro_batch_size": 8, "precision": "bf16", "optimizer": "adamw",
                 "framework": "pytorch_eager"},
    "parallelism": {)" + parallelism + "}}";
}

constexpr double kLayerParams = 7'087'872.0;  // 12 h^2 + 13 h at h = 768
constexpr double kParams = 124'475'904.0;     // 12 layers, wte 50304 x 768, wpe 1024 x 768, ln_f

TEST(PytorchDdp, BucketsFillInGradientOrderUpToDdpsCapsOfWholeParameters) {
  const config::Scenario s =
      scenario::parse_scenario_text(ddp_scenario(R"("dp": "auto", "overlap_grad_reduce": true)"), "ddp.json");
  ASSERT_EQ(s.parallel.data, 8);
  const exec::SimulationOutput out = exec::simulate(s);
  std::vector<double> reduced;  // bytes per bucket, in order
  double copies_in = 0.0;
  double copy_back = 0.0;
  for (workload::TaskId id = 0; id < out.iteration.graph.size(); ++id) {
    const workload::Work& w = out.iteration.graph.work(id);
    if (w.collective && w.collective->kind == net::CollectiveKind::kAllReduce) reduced.push_back(w.collective->bytes);
    if (w.name.ends_with(".ddp_copy_to_bucket")) copies_in += w.compute.bytes;
    if (w.name == "ddp.copy_buckets_to_grads") copy_back += w.compute.bytes;
  }
  // The first bucket (cap 1 MiB = 262,144 fp32 gradients) closes on the first whole
  // parameter that takes it past: ln_f's 1,536, the last MLP projection's bias 768 and
  // weight 2,359,296. The next ones (25 MiB = 6,553,600) close a layer later each: the
  // rest of a layer (7,087,872 - 2,360,064) and the next layer's MLP projection, one
  // layer's parameters; the last holds layer 0's rest, wpe and the tied wte.
  ASSERT_EQ(reduced.size(), 13U);
  EXPECT_DOUBLE_EQ(reduced.front(), 4.0 * (1536.0 + 768.0 + 2'359'296.0));
  for (std::size_t i = 1; i + 1 < reduced.size(); ++i) EXPECT_DOUBLE_EQ(reduced[i], 4.0 * kLayerParams) << i;
  EXPECT_DOUBLE_EQ(reduced.back(), 4.0 * (kLayerParams - 2'360'064.0 + 1024.0 * 768.0 + 50304.0 * 768.0));
  // Each gradient copied into its bucket (x 1/8 on the way) and back: 8 bytes each way.
  EXPECT_DOUBLE_EQ(copies_in, 8.0 * kParams);
  EXPECT_DOUBLE_EQ(copy_back, 8.0 * kParams);
  // The buckets are a second copy of the gradients, all along: 4 P more than one GPU.
  const config::Scenario one = scenario::parse_scenario_text(ddp_scenario(R"("dp": 1)", 8, "1"), "one.json");
  const auto ddp = workload::memory_per_stage(s.model, s.training, s.parallel).front();
  const auto single = workload::memory_per_stage(one.model, one.training, one.parallel).front();
  EXPECT_DOUBLE_EQ(ddp.ddp_buckets, 4.0 * kParams);
  EXPECT_DOUBLE_EQ(ddp.total() - single.total(), 4.0 * kParams);
}

TEST(PytorchDdp, TheReaderAsksForDdpsOverlapAndOneStepPerMicroBatch) {
  const auto error = [](const std::string& text) {
    try {
      (void)scenario::parse_scenario_text(text, "ddp.json");
    } catch (const scenario::ScenarioError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  const std::string overlap = error(ddp_scenario(R"("dp": "auto")"));
  EXPECT_NE(overlap.find("/parallelism/overlap_grad_reduce"), std::string::npos) << overlap;
  EXPECT_NE(overlap.find("DDP"), std::string::npos) << overlap;
  const std::string batch = error(ddp_scenario(R"("dp": "auto", "overlap_grad_reduce": true)", 128));
  EXPECT_NE(batch.find("/training/global_batch_size"), std::string::npos) << batch;
  EXPECT_NE(batch.find("x data_parallel_size (8)"), std::string::npos) << batch;
  const std::string zero = error(ddp_scenario(R"("dp": "auto", "overlap_grad_reduce": true, "zero_stage": 1)"));
  EXPECT_NE(zero.find("/parallelism/zero_stage"), std::string::npos) << zero;
  // What is modeled (DDP, FSDP2), and what to use instead.
  EXPECT_NE(zero.find("FSDP2"), std::string::npos) << zero;
  EXPECT_NE(zero.find("use zero_stage 0 or 3"), std::string::npos) << zero;
}

}  // namespace
}  // namespace trainsim
