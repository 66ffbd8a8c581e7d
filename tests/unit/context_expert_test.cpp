// Context parallelism (ring attention) and expert parallelism (MoE all-to-all)
// against hand-derived volumes and work (docs/model.md, "Context and expert
// parallelism"; the MoE volume after MODEL_NOTES: dispatch and combine each move
// k b s h elements per layer in forward, the same again backward).
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "hardware/compute_model.h"
#include "network/algorithms.h"
#include "network/topology_builders.h"
#include "network_fixtures.h"
#include "scenario/errors.h"
#include "test_scenarios.h"
#include "workload/iteration_builder.h"
#include "workload/memory.h"

namespace trainsim {
namespace {

using workload::Stream;

using testing::kDense;
using testing::kMoe;

struct Traffic {
  int forward = 0;
  int backward = 0;
  double forward_bytes = 0.0;
  double backward_bytes = 0.0;
  int group_size = 0;
};

// What rank 0 sends on `stream` for layer 0 of micro-batch 0.
Traffic layer_traffic(const config::Scenario& s, Stream stream) {
  const auto g = workload::build_iteration_graph(s.model, s.training, s.parallel, s.cluster, 1);
  Traffic out;
  for (const workload::Task& t : g.graph.tasks()) {
    const workload::Work& w = g.graph.work(t);
    if (t.rank != 0 || t.stream != stream || t.microbatch != 0 || t.layer != 0) continue;
    const bool backward = w.name.ends_with(".backward");
    (backward ? out.backward : out.forward) += 1;
    (backward ? out.backward_bytes : out.forward_bytes) += w.collective->bytes;
    out.group_size = w.collective->group.size;
  }
  return out;
}

double layer_attention_flops(const config::Scenario& s) {
  const auto g = workload::build_iteration_graph(s.model, s.training, s.parallel, s.cluster, 1);
  double flops = 0.0;
  for (const workload::Task& t : g.graph.tasks()) {
    const workload::Work& w = g.graph.work(t);
    if (t.rank == 0 && t.microbatch == 0 && t.layer == 0 && t.category == workload::Category::kForward &&
        w.compute.kind == hw::KernelClass::kAttention)
      flops += w.compute.flops;
  }
  return flops;
}

// b = 2, s = 512, s/c = 128 tokens per rank, K and V of 1024 channels in bf16.
constexpr double kKvChunk = 2.0 * (2 * 128) * 1024 * 2;

TEST(ContextParallel, RingPassesTheKvChunkCMinusOneTimesEachWay) {
  const auto s = testing::make_scenario(kDense, R"("micro_batch_size": 2)", R"("cp": 4)");
  const Traffic t = layer_traffic(s, Stream::kCpComm);
  EXPECT_EQ(t.forward, 3);
  EXPECT_DOUBLE_EQ(t.forward_bytes, 3 * kKvChunk);
  // Backward: 3 steps carrying K, V and dK, dV, then dK, dV home: (3c - 2) chunks in all.
  EXPECT_EQ(t.backward, 4);
  EXPECT_DOUBLE_EQ(t.forward_bytes + t.backward_bytes, (3 * 4 - 2) * kKvChunk);
  EXPECT_EQ(t.group_size, 2);  // send_recv to the ring neighbour
}

// torchtitan's context parallelism (context_parallel_rotate_method): PyTorch's ring
// attention, docs/model.md "PyTorch's ring attention". kDense at cp 4: 256 local tokens,
// Q and the output 256 x 1024 = 262,144 elements, K and V 2 x 262,144 = 524,288 (one
// ring step's kKvChunk bytes in bf16).
TEST(ContextParallel, TorchRingConcatenatesMergesInFp32AndSendsFp32Gradients) {
  const auto s = testing::make_scenario(kDense, R"("micro_batch_size": 2)",
                                        R"("cp": 4, "context_parallel_rotate_method": "allgather")");
  EXPECT_EQ(s.parallel.context_comm, workload::ContextComm::kTorchRing);
  const auto g = workload::build_iteration_graph(s.model, s.training, s.parallel, s.cluster, 1);
  std::map<std::string, double> bytes;
  for (const workload::Task& t : g.graph.tasks())
    if (t.rank == 0 && t.microbatch == 0 && t.layer == 0) {
      const workload::Work& w = g.graph.work(t);
      bytes[w.name] = w.collective ? w.collective->bytes : w.compute.bytes;
    }
  constexpr double kOut = 262144.0;
  constexpr double kKv = 524288.0;
  // Forward: block 0's output cast to fp32 (2 + 4 bytes an element); each later block's
  // too and the merge, out - block_out (12), times the sigmoid (8), out minus that (12);
  // K and V concatenated (read and write) before each of the 3 sends; the output back to bf16.
  EXPECT_DOUBLE_EQ(bytes.at("layer0.attention.merge0"), 6.0 * kOut);
  EXPECT_DOUBLE_EQ(bytes.at("layer0.attention.merge3"), (6.0 + 32.0) * kOut);
  EXPECT_DOUBLE_EQ(bytes.at("layer0.attention.kv_cat2"), 2.0 * kKvChunk);
  EXPECT_EQ(bytes.count("layer0.attention.kv_cat3"), 0U);
  EXPECT_DOUBLE_EQ(bytes.at("layer0.attention.out_cast"), 6.0 * kOut);
  EXPECT_DOUBLE_EQ(bytes.at("layer0.attention.kv_contiguous"), 2.0 * kKvChunk);  // K and V made contiguous
  // Backward: fp32 zeros for dQ, dK, dV; per step dK, dV += (4 + 2 + 4), concatenated in
  // fp32 (4 + 4) and sent in fp32 (twice a bf16 step), dQ += (10); casts back (4 + 2).
  EXPECT_DOUBLE_EQ(bytes.at("layer0.attention.grad_zero.backward"), 4.0 * (kOut + kKv));
  EXPECT_DOUBLE_EQ(bytes.at("layer0.attention.dkv_accumulate1.backward"), 10.0 * kKv);
  EXPECT_DOUBLE_EQ(bytes.at("layer0.attention.dkv_cat1.backward"), 8.0 * kKv);
  EXPECT_DOUBLE_EQ(bytes.at("layer0.attention.ring_dkv3.backward"), 2.0 * kKvChunk);
  EXPECT_DOUBLE_EQ(bytes.at("layer0.attention.dq_accumulate2.backward"), 10.0 * kOut);
  EXPECT_DOUBLE_EQ(bytes.at("layer0.attention.dkv_cast.backward"), 6.0 * kKv);
  // Transfers: 3 K, V steps forward; backward 3 K, V steps and 4 dK, dV steps in fp32.
  const Traffic t = layer_traffic(s, Stream::kCpComm);
  EXPECT_EQ(t.forward, 3);
  EXPECT_EQ(t.backward, 7);
  EXPECT_DOUBLE_EQ(t.backward_bytes, 3 * kKvChunk + 4 * 2 * kKvChunk);
  EXPECT_EQ(t.group_size, 2);
  // The blocks' work is the ring's.
  const auto ring = testing::make_scenario(kDense, R"("micro_batch_size": 2)", R"("cp": 4)");
  EXPECT_DOUBLE_EQ(layer_attention_flops(s), layer_attention_flops(ring));
  // GQA (2 key-value groups of the 8 heads): torchtitan repeats K and V to the query
  // heads before SDPA, so the ring moves and copies them at the query width (1024), not
  // the groups' 256: the same bytes as with MHA.
  const std::string gqa = kDense.substr(0, kDense.size() - 1) + R"(, "num_query_groups": 2})";
  const auto grouped = testing::make_scenario(gqa, R"("micro_batch_size": 2)",
                                              R"("cp": 4, "context_parallel_rotate_method": "alltoall")");
  EXPECT_DOUBLE_EQ(layer_traffic(grouped, Stream::kCpComm).forward_bytes, 3 * kKvChunk);
  const std::string both = testing::scenario_error(
      kDense, R"("micro_batch_size": 2)", R"("cp": 4, "cp_comm_type": "p2p", "context_parallel_rotate_method": "alltoall")");
  EXPECT_NE(both.find("/parallelism/context_parallel_rotate_method"), std::string::npos) << both;
}

TEST(ContextParallel, EachRankComputesACthOfTheAttention) {
  const auto one = testing::make_scenario(kDense, R"("micro_batch_size": 2)", R"("cp": 1)");
  const auto four = testing::make_scenario(kDense, R"("micro_batch_size": 2)", R"("cp": 4)");
  // Causal: half of 4 b s^2 h = 2 x 2 x 512^2 x 1024.
  EXPECT_DOUBLE_EQ(layer_attention_flops(one), 2.0 * 2 * 512.0 * 512 * 1024);
  EXPECT_DOUBLE_EQ(layer_attention_flops(four), layer_attention_flops(one) / 4);
}

// cp_comm_type "a2a" (Ulysses): per layer, an all-to-all of Q, K, V (b s/c = 2 x 128 =
// 256 tokens x (1024 + 2 x 1024) x 2 bytes) and one of the output (256 x 1024 x 2)
// forward, the same two backward, over the 4 context ranks; no ring; one attention
// kernel with the ring's total work.
TEST(ContextParallel, AllToAllExchangesQkvAndTheOutputInsteadOfTheRing) {
  const auto s = testing::make_scenario(kDense, R"("micro_batch_size": 2)", R"("cp": 4, "cp_comm_type": "a2a")");
  EXPECT_EQ(s.parallel.context_comm, workload::ContextComm::kAllToAll);
  const Traffic t = layer_traffic(s, Stream::kCpComm);
  EXPECT_EQ(t.forward, 2);
  EXPECT_EQ(t.backward, 2);
  EXPECT_DOUBLE_EQ(t.forward_bytes, 256.0 * 3072 * 2 + 256.0 * 1024 * 2);
  EXPECT_DOUBLE_EQ(t.backward_bytes, t.forward_bytes);
  EXPECT_EQ(t.group_size, 4);
  const auto ring = testing::make_scenario(kDense, R"("micro_batch_size": 2)", R"("cp": 4)");
  EXPECT_DOUBLE_EQ(layer_attention_flops(s), layer_attention_flops(ring));
}

// cp_comm_type "all_gather" (Transformer Engine's AttnFuncWithCPAndKVAllGather):
// b s/c = 2 x 128 = 256 local tokens; K and V of 1024 channels in bf16 gathered
// from the 4 context ranks, one all-gather each (S = 4 x 256 x 1024 x 2 bytes),
// forward and again backward, then dK and dV reduce-scattered (the same S): 2
// collectives forward, 4 backward, over the whole group; the ring's attention work.
TEST(ContextParallel, AllGatherGathersKAndVAndReduceScattersTheirGradients) {
  const auto s = testing::make_scenario(kDense, R"("micro_batch_size": 2)", R"("cp": 4, "cp_comm_type": "all_gather")");
  EXPECT_EQ(s.parallel.context_comm, workload::ContextComm::kAllGather);
  constexpr double kGathered = 4.0 * 256 * 1024 * 2;
  const Traffic t = layer_traffic(s, Stream::kCpComm);
  EXPECT_EQ(t.forward, 2);
  EXPECT_EQ(t.backward, 4);
  EXPECT_DOUBLE_EQ(t.forward_bytes, 2 * kGathered);
  EXPECT_DOUBLE_EQ(t.backward_bytes, 4 * kGathered);
  EXPECT_EQ(t.group_size, 4);
  const auto ring = testing::make_scenario(kDense, R"("micro_batch_size": 2)", R"("cp": 4)");
  EXPECT_DOUBLE_EQ(layer_attention_flops(s), layer_attention_flops(ring));

  // The memory-bound work around the kernels, in bytes (docs/model.md): the
  // reorder reads and writes both gathered tensors, 2 x 4 x 256 x 2048 x 2; the
  // attention reads Q, writes O (256 x 1024 x 2 each), reads the keys and values
  // of (2c + 1)/2 = 4.5 chunks of 256 tokens (x 2048 x 2) and writes the fp32
  // log-sum-exp of 2 x 8 heads x 128 rows; each output chunk is copied into place
  // (2 x 256 x 1024 x 2). Backward: dQ copied the same way; dK, dV zeroed over
  // the gathered length (4 x 256 x 2048 x 2) and accumulated over 4.5 chunks
  // (3 x 4.5 x 256 x 2048 x 2).
  const auto g = workload::build_iteration_graph(s.model, s.training, s.parallel, s.cluster, 1);
  std::map<std::string, double> bytes;
  for (const workload::Task& task : g.graph.tasks()) {
    const workload::Work& w = g.graph.work(task);
    if (task.rank == 0 && task.microbatch == 0 && task.layer == 0 && !w.collective)
      bytes[w.name] = w.compute.bytes;
  }
  EXPECT_DOUBLE_EQ(bytes.at("layer0.attention.kv_reorder"), 2.0 * 4 * 256 * 2048 * 2);
  EXPECT_DOUBLE_EQ(bytes.at("layer0.attention"), 256.0 * (1024 + 1024 + 4.5 * 2048) * 2 + 2.0 * 8 * 128 * 4);
  EXPECT_DOUBLE_EQ(bytes.at("layer0.attention.out_copy"), 2.0 * 256 * 1024 * 2);
  EXPECT_DOUBLE_EQ(bytes.at("layer0.attention.kv_reorder.backward"), 2.0 * 4 * 256 * 2048 * 2);
  EXPECT_DOUBLE_EQ(bytes.at("layer0.attention.backward"), 2 * bytes.at("layer0.attention"));
  EXPECT_DOUBLE_EQ(bytes.at("layer0.attention.dq_copy.backward"), 2.0 * 256 * 1024 * 2);
  EXPECT_DOUBLE_EQ(bytes.at("layer0.attention.dkv_accumulate.backward"),
                   4.0 * 256 * 2048 * 2 + 3 * 4.5 * 256 * 2048 * 2);
  EXPECT_DOUBLE_EQ(bytes.at("layer0.attention.dkv_reorder.backward"), 2.0 * 4 * 256 * 2048 * 2);
  EXPECT_EQ(bytes.count("layer0.attention.out_copy.backward"), 0u);
}

TEST(ContextParallel, CommTypesNotModeledAreRefusedByName) {
  const auto refused = [](const std::string& model, const std::string& parallelism, const std::string& text) {
    try {
      testing::make_scenario(model, R"("micro_batch_size": 2)", parallelism);
      ADD_FAILURE() << parallelism << " was accepted";
    } catch (const scenario::ScenarioError& e) {
      EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
    }
  };
  refused(kDense, R"("cp": 4, "cp_comm_type": "a2a+p2p")", "\"a2a+p2p\" (hierarchical");
  // 6 heads cannot split over 4 context ranks.
  refused(R"({"num_layers": 2, "hidden_size": 768, "num_attention_heads": 6, "seq_length": 512, "vocab_size": 32000})",
          R"("cp": 4, "cp_comm_type": "a2a")", "splits the 6 heads of each tensor-parallel rank");
}

TEST(ContextParallel, GradientsAreReducedOverDataTimesContextRanks) {
  const auto s = testing::make_scenario(kDense, R"("micro_batch_size": 2)", R"("cp": 4)");
  EXPECT_EQ(s.parallel.data, 2);
  const auto g = workload::build_iteration_graph(s.model, s.training, s.parallel, s.cluster, 1);
  int reductions = 0;
  for (const workload::Task& t : g.graph.tasks())
    if (t.stream == Stream::kDpComm) {
      ++reductions;
      EXPECT_EQ(g.graph.work(t).collective->group.size, 8);
    }
  EXPECT_GT(reductions, 0);
}

TEST(ContextParallel, ActivationsSplitCWays) {
  const auto s = testing::make_scenario(kDense, R"("micro_batch_size": 2)");
  const double whole = workload::layer_activation_bytes(s.model, s.training, workload::Recompute::kNone, 2);
  const double split = workload::layer_activation_bytes(s.model, s.training, workload::Recompute::kNone, 2,
                                                        {.tensor = 1, .sequence_parallel = false, .context = 4});
  EXPECT_DOUBLE_EQ(split, whole / 4);
}

// k b s h bf16 bytes: 2 x 2 x 512 x 1024 x 2.
constexpr double kMoeCopies = 2.0 * 2 * 512 * 1024 * 2;

TEST(ExpertParallel, DispatchAndCombineEachMoveKCopiesOfEveryToken) {
  const auto s = testing::make_scenario(kMoe, R"("micro_batch_size": 2)", R"("ep": 8)");
  const Traffic t = layer_traffic(s, Stream::kEpComm);
  EXPECT_EQ(t.forward, 2);
  EXPECT_EQ(t.backward, 2);
  EXPECT_DOUBLE_EQ(t.forward_bytes, 2 * kMoeCopies);
  EXPECT_DOUBLE_EQ(t.backward_bytes, 2 * kMoeCopies);
  EXPECT_EQ(t.group_size, 8);
}

TEST(ExpertParallel, PermutationsMoveKCopiesEachWayAndTheirBackwardIsTheInverse) {
  // docs/model.md, "Mixture of experts": moe_permute and moe_unpermute read and write
  // the k copies of the rank's b s tokens (2 k b s h e bytes), and so does each one's
  // backward, which runs the other's kernel.
  const auto s = testing::make_scenario(kMoe, R"("micro_batch_size": 2)", R"("ep": 8)");
  const auto g = workload::build_iteration_graph(s.model, s.training, s.parallel, s.cluster, 1);
  std::map<std::string, const workload::Work*> ops;
  for (const workload::Task& t : g.graph.tasks())
    if (t.rank == 0 && t.microbatch == 0 && t.layer == 0) ops[g.graph.work(t).name] = &g.graph.work(t);
  constexpr double kBytes = 2.0 * 2 * (2 * 512) * 1024 * 2;  // 2 x k x b s x h x 2 bytes
  for (const char* name : {"layer0.moe_permute", "layer0.moe_unpermute", "layer0.moe_permute.backward",
                           "layer0.moe_unpermute.backward"})
    EXPECT_DOUBLE_EQ(ops.at(name)->compute.bytes, kBytes) << name;
  EXPECT_EQ(ops.at("layer0.moe_permute")->compute.kernel, hw::KernelId::kMoePermute);
  EXPECT_EQ(ops.at("layer0.moe_permute.backward")->compute.kernel, hw::KernelId::kMoeUnpermute);
  EXPECT_EQ(ops.at("layer0.moe_unpermute.backward")->compute.kernel, hw::KernelId::kMoePermute);
  // A GPU that measured the kernels prices them at their own rate: on the B200
  // preset 0.281 of 8 TB/s, against 0.835 for other memory-bound kernels.
  const hw::GpuSpec b200 = testing::make_scenario(kMoe, "", "", 1, "\"B200\"").cluster.gpu;
  const hw::RooflineComputeModel model(b200);
  EXPECT_DOUBLE_EQ(model.seconds(ops.at("layer0.moe_unpermute.backward")->compute, hw::Precision::kBf16),
                   kBytes / (8e12 * 0.281));
  hw::KernelWork copy = ops.at("layer0.moe_permute")->compute;
  copy.kernel = hw::KernelId::kNone;
  EXPECT_DOUBLE_EQ(model.seconds(copy, hw::Precision::kBf16), kBytes / (8e12 * 0.835));
}

TEST(ExpertParallel, TheAllToAllDispatcherSortsWhatARankReceivesByLocalExpert) {
  // docs/model.md, "The token dispatcher": EP 2 on one node of 8 (DP 8, so each EP pair
  // holds 4 of the 8 experts): each local expert computes k b s e_p / E = 2 x 1024 x 2 /
  // 8 = 512 tokens, the rank 2048 in all; sort and unsort read and write them once,
  // 2 x 2048 x h x e bytes each, and each's backward the same.
  const auto ops_of = [](const std::string& model, const std::string& parallelism) {
    const auto s = testing::make_scenario(model, R"("micro_batch_size": 2)", parallelism);
    const auto g = workload::build_iteration_graph(s.model, s.training, s.parallel, s.cluster, 1);
    std::map<std::string, double> ops;
    for (const workload::Task& t : g.graph.tasks())
      if (t.rank == 0 && t.microbatch == 0 && t.layer == 0) ops[g.graph.work(t).name] = g.graph.work(t).compute.bytes;
    return ops;
  };
  constexpr double kSort = 2.0 * 2048 * 1024 * 2;
  const auto alltoall = ops_of(kMoe, R"("ep": 2)");
  for (const char* name : {"layer0.moe_sort_chunks", "layer0.moe_unsort_chunks", "layer0.moe_sort_chunks.backward",
                           "layer0.moe_unsort_chunks.backward"})
    EXPECT_DOUBLE_EQ(alltoall.at(name), kSort) << name;
  // One expert per rank (EP 8): nothing to sort. "flex" (DeepEP, HybridEP) permutes inside
  // its kernels: no sort at any EP.
  EXPECT_EQ(ops_of(kMoe, R"("ep": 8)").count("layer0.moe_sort_chunks"), 0U);
  const std::string flex = kMoe.substr(0, kMoe.size() - 1) + R"(, "moe_token_dispatcher_type": "flex"})";
  const auto flexed = ops_of(flex, R"("ep": 2)");
  EXPECT_EQ(flexed.count("layer0.moe_sort_chunks"), 0U);
  EXPECT_EQ(flexed.count("layer0.moe_permute"), 1U);
  const std::string gather = kMoe.substr(0, kMoe.size() - 1) + R"(, "moe_token_dispatcher_type": "allgather"})";
  const std::string refused = testing::scenario_error(gather, "", R"("ep": 2)");
  EXPECT_NE(refused.find("/model/moe_token_dispatcher_type"), std::string::npos) << refused;
  EXPECT_NE(refused.find("not modeled yet"), std::string::npos) << refused;
}

TEST(ExpertParallel, AllToAllSendsAllButTheOwnShareAway) {
  // Of S bytes, S/e stay on the rank and (e - 1)/e leave it.
  const net::Topology topo = net::build_topology(testing::round_cluster(1, 8, 8));
  std::vector<long long> members{0, 1, 2, 3, 4, 5, 6, 7};
  const net::Schedule sched =
      net::build_schedule(net::CollectiveKind::kAllToAll, net::Algorithm::kDirect, members, kMoeCopies, topo);
  double sent = 0.0;
  for (const net::Phase& p : sched.phases)
    for (const net::Transfer& x : p.transfers)
      if (x.src == 0) sent += x.bytes;
  EXPECT_DOUBLE_EQ(sent, kMoeCopies * 7 / 8);
}

TEST(ExpertParallel, EachRankComputesKCopiesOfItsTokensOverItsExperts) {
  const auto s = testing::make_scenario(kMoe, R"("micro_batch_size": 2)", R"("ep": 8)");
  const auto g = workload::build_iteration_graph(s.model, s.training, s.parallel, s.cluster, 1);
  for (const workload::Task& t : g.graph.tasks()) {
    const workload::Work& w = g.graph.work(t);
    if (t.rank != 0 || t.microbatch != 0 || t.layer != 0 || w.name != "layer0.experts_up") continue;
    // One local expert of 8 / 8; 2 x k b s x 2f x h.
    EXPECT_EQ(w.compute.count, 1);
    EXPECT_DOUBLE_EQ(w.compute.flops, 2.0 * (2 * 2 * 512) * (2 * 2048) * 1024);
    EXPECT_DOUBLE_EQ(w.model_flops, w.compute.flops);
  }
}

TEST(ExpertParallel, CapacityFactorPadsExpertWorkNotModelFlops) {
  const std::string padded = kMoe.substr(0, kMoe.size() - 1) + R"(, "moe_expert_capacity_factor": 1.25})";
  const auto s = testing::make_scenario(padded, R"("micro_batch_size": 2)", R"("ep": 8)");
  const auto g = workload::build_iteration_graph(s.model, s.training, s.parallel, s.cluster, 1);
  bool seen = false;
  for (const workload::Task& t : g.graph.tasks()) {
    const workload::Work& w = g.graph.work(t);
    if (t.rank != 0 || t.microbatch != 0 || w.name != "layer0.experts_up") continue;
    seen = true;
    EXPECT_DOUBLE_EQ(w.compute.flops, 1.25 * 2.0 * (2 * 2 * 512) * (2 * 2048) * 1024);
    EXPECT_DOUBLE_EQ(w.model_flops, 2.0 * (2 * 2 * 512) * (2 * 2048) * 1024);
  }
  EXPECT_TRUE(seen);
  EXPECT_DOUBLE_EQ(layer_traffic(s, Stream::kEpComm).forward_bytes, 1.25 * 2 * kMoeCopies);
}

TEST(ExpertParallel, ExpertWeightsSplitEpWays) {
  const auto s = testing::make_scenario(kMoe, R"("micro_batch_size": 2)", R"("ep": 4)");
  // 2 layers x 8/4 experts x 3 matrices of h x f.
  EXPECT_DOUBLE_EQ(workload::stage_expert_parameters(s.model, s.parallel, 0), 2.0 * 2 * 3 * 1024 * 2048);
}

TEST(ExpertParallel, ExpertGradientsReduceOverTheRanksHoldingTheSameExperts) {
  // 8 GPUs, dp 8, ep 4: dense gradients over 8 ranks, expert gradients over 2.
  const auto s = testing::make_scenario(kMoe, R"("micro_batch_size": 2)", R"("ep": 4)");
  const auto g = workload::build_iteration_graph(s.model, s.training, s.parallel, s.cluster, 1);
  int dense = 0;
  int expert = 0;
  for (const workload::Task& t : g.graph.tasks()) {
    const workload::Work& w = g.graph.work(t);
    if (t.stream != Stream::kDpComm) continue;
    const bool is_expert = w.name.starts_with("expert_");
    (is_expert ? expert : dense) += 1;
    EXPECT_EQ(w.collective->group.size, is_expert ? 2 : 8) << w.name;
  }
  EXPECT_EQ(dense, 1);
  EXPECT_EQ(expert, 1);
  // With ep = dp each rank holds its experts alone: nothing to reduce.
  const auto alone = testing::make_scenario(kMoe, R"("micro_batch_size": 2)", R"("ep": 8)");
  const auto g8 = workload::build_iteration_graph(alone.model, alone.training, alone.parallel, alone.cluster, 1);
  for (const workload::Task& t : g8.graph.tasks()) {
    const workload::Work& w = g8.graph.work(t);
    EXPECT_FALSE(w.name.starts_with("expert_grad")) << w.name;
  }
}

TEST(ExpertParallel, FoldedExpertsSpanTheTensorRanksWhole) {
  // Megatron-Core's MoE parallel folding: tp 2 x dp 4 = 8 ranks, ep 8,
  // expert_tensor_parallel_size 1. Each rank dispatches its sequence shard
  // (b s / t = 512 tokens) k = 2 ways over the 8 adjacent ranks; its one whole
  // expert (f = 2048, not split) computes k x 512 x 8 / 8 = 1024 tokens; no TP
  // gather around the experts; the experts are held alone (tp dp / ep = 1).
  const auto s = testing::make_scenario(kMoe, R"("micro_batch_size": 2)",
                                        R"("tp": 2, "sequence_parallel": true, "ep": 8, "etp": 1)");
  EXPECT_TRUE(s.parallel.folded_experts());
  const Traffic ep = layer_traffic(s, Stream::kEpComm);
  EXPECT_EQ(ep.group_size, 8);
  EXPECT_DOUBLE_EQ(ep.forward_bytes, 2 * kMoeCopies / 2);  // dispatch + combine of 512 tokens
  const auto g = workload::build_iteration_graph(s.model, s.training, s.parallel, s.cluster, 1);
  bool seen = false;
  for (const workload::Task& t : g.graph.tasks()) {
    const workload::Work& w = g.graph.work(t);
    if (t.rank != 0 || t.microbatch != 0) continue;
    EXPECT_FALSE(w.name.starts_with("layer0.moe_f") || w.name.starts_with("layer0.moe_g")) << w.name;
    EXPECT_FALSE(w.name.starts_with("expert_grad")) << w.name;
    if (w.name != "layer0.experts_up") continue;
    seen = true;
    EXPECT_DOUBLE_EQ(w.compute.flops, 2.0 * 1024 * (2 * 2048) * 1024);
  }
  EXPECT_TRUE(seen);
  // 2 layers x 1 whole expert x 3 matrices of h x f.
  EXPECT_DOUBLE_EQ(workload::stage_expert_parameters(s.model, s.parallel, 0), 2.0 * 3 * 1024 * 2048);
  EXPECT_EQ(s.parallel.expert_data_parallel_size(), 1);
}

TEST(ContextExpertErrors, ImpossibleLayoutsNameTheField) {
  const auto fails = [](const std::string& model, const std::string& training, const std::string& parallelism,
                        const std::string& path) {
    try {
      testing::make_scenario(model, training, parallelism);
      ADD_FAILURE() << parallelism << " was accepted";
    } catch (const scenario::ScenarioError& e) {
      EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    }
  };
  fails(kMoe, "", R"("ep": 4, "dp": 2, "tp": 4, "sequence_parallel": true)", "/parallelism/ep");
  fails(kMoe, "", R"("tp": 2)", "/parallelism/sequence_parallel");
  fails(kDense, R"("attention_backend": "unfused")", R"("cp": 2)", "/parallelism/cp");
  fails(R"({"num_layers": 2, "hidden_size": 1024, "num_attention_heads": 8, "seq_length": 500,
             "vocab_size": 32000})",
        "", R"("context_parallel_size": 4, "dp": 2)", "/parallelism/context_parallel_size");
}

}  // namespace
}  // namespace trainsim
