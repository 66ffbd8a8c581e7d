// Good scenario files: the shipped scenarios and every preset parse, and units,
// defaults, aliases and overrides land where DESIGN.md ("Scenario file") says.
#include "scenario/reader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "scenario/errors.h"
#include "scenario/presets.h"
#include "scenario/units.h"

namespace trainsim::scenario {
namespace {

using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

const std::filesystem::path kSourceDir{TRAINSIM_SOURCE_DIR};

// The smallest valid scenario: 8 H100 in one node, GPT-2 small.
constexpr std::string_view kBase = R"({
  "cluster": {"gpu": "H100-SXM5-80GB", "num_nodes": 1},
  "model": "gpt2-124m",
  "training": {"global_batch_size": 8}
})";

// kBase with an RFC 7396 merge patch applied (null removes a key).
std::string patched(std::string_view patch) {
  nlohmann::json doc = nlohmann::json::parse(kBase);
  doc.merge_patch(nlohmann::json::parse(patch));
  return doc.dump();
}

config::Scenario parse(const std::string& text) { return parse_scenario_text(text, "good.json"); }

// Parses or fails the test with the reader's message (rather than an uncaught exception).
config::Scenario parse_ok(const std::string& text) {
  try {
    return parse(text);
  } catch (const ScenarioError& e) {
    ADD_FAILURE() << e.what() << "\nin:\n" << text;
    return {};
  }
}

std::vector<std::filesystem::path> json_files(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    if (entry.is_regular_file() && entry.path().extension() == ".json") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<std::string> stems(const std::vector<std::filesystem::path>& files) {
  std::vector<std::string> out;
  for (const auto& f : files) out.push_back(f.stem().string());
  std::sort(out.begin(), out.end());
  return out;
}

// A value of a GPU preset file (a quantity string or a plain number) in SI units,
// so that tests follow the preset files when their data are refined.
double preset_value(const char* gpu, const char* pointer, Dimension d) {
  const std::optional<nlohmann::json> preset = find_preset(PresetKind::kHardware, gpu);
  if (!preset) {
    ADD_FAILURE() << "no GPU preset " << gpu;
    return 0.0;
  }
  const nlohmann::json& v = preset->at(nlohmann::json::json_pointer(pointer));
  return v.is_number() ? v.get<double>() : parse_quantity(v.get<std::string>(), d);
}

// --- Shipped files and presets.

TEST(ScenarioReader, EveryShippedScenarioParses) {
  const std::vector<std::filesystem::path> files = json_files(kSourceDir / "scenarios");
  ASSERT_GE(files.size(), 4u) << "no scenarios found under " << (kSourceDir / "scenarios");
  for (const auto& file : files) {
    SCOPED_TRACE(file.string());
    try {
      const config::Scenario s = read_scenario_file(file);
      EXPECT_FALSE(s.name.empty());
      EXPECT_EQ(s.source_file, file.string());
      EXPECT_GE(s.cluster.num_gpus(), 1);
      EXPECT_EQ(s.parallel.model_parallel_size() * s.parallel.data, s.cluster.num_gpus());
      EXPECT_EQ(s.training.global_batch_size % (s.training.micro_batch_size * s.parallel.data), 0);
      EXPECT_TRUE(s.cluster.gpu.supports(s.training.precision));
      EXPECT_GT(s.model.num_layers, 0);
    } catch (const ScenarioError& e) {
      ADD_FAILURE() << e.what();
    }
  }
}

TEST(ScenarioReader, ShippedScenariosSayWhatTheyAre) {
  const config::Scenario s = read_scenario_file(kSourceDir / "scenarios" / "gpt3-175b-1024xa100-dp.json");
  EXPECT_EQ(s.cluster.gpu.name, "A100-SXM4-80GB");
  EXPECT_EQ(s.cluster.num_gpus(), 1024);
  EXPECT_EQ(s.parallel.data, 1024);
  EXPECT_EQ(s.cluster.inter_node.nic_bandwidth, 200e9 / 8);
  EXPECT_EQ(s.cluster.intra_node.bandwidth, 300e9);
  EXPECT_EQ(s.model.name, "gpt3-175b");
  EXPECT_EQ(s.training.train_tokens, 3.0e11);
  EXPECT_EQ(s.training.attention_backend, workload::AttentionBackend::kUnfused);
  EXPECT_EQ(s.parallel.recompute, workload::Recompute::kFull);
  EXPECT_TRUE(s.parallel.overlap_grad_reduce);
  EXPECT_EQ(s.cluster.price_per_gpu_hour, 1.99);
}

TEST(ScenarioReader, PresetFilesAndEmbeddedPresetsAgree) {
  EXPECT_THAT(preset_names(PresetKind::kHardware),
              ElementsAreArray(stems(json_files(kSourceDir / "scenarios" / "hardware"))));
  EXPECT_THAT(preset_names(PresetKind::kModel),
              ElementsAreArray(stems(json_files(kSourceDir / "scenarios" / "models"))));
  // DESIGN.md names these presets.
  for (const char* gpu : {"A100-SXM4-80GB", "H100-SXM5-80GB", "H200-SXM-141GB", "B200"})
    EXPECT_TRUE(find_preset(PresetKind::kHardware, gpu).has_value()) << gpu;
  for (const char* model :
       {"gpt2-124m", "gpt2-350m", "gpt3-175b", "llama3-8b", "llama3-70b", "llama3-405b", "mixtral-8x7b"})
    EXPECT_TRUE(find_preset(PresetKind::kModel, model).has_value()) << model;
}

TEST(ScenarioReader, EveryGpuPresetParses) {
  const std::vector<std::string> names = preset_names(PresetKind::kHardware);
  ASSERT_FALSE(names.empty());
  for (const std::string& name : names) {
    SCOPED_TRACE(name);
    const config::Scenario s = parse_ok(patched(R"({"cluster": {"gpu": ")" + name + R"(", "num_nodes": 2},
                                                    "training": {"global_batch_size": 16}})"));
    EXPECT_EQ(s.cluster.gpu.name, name);
    EXPECT_TRUE(s.cluster.gpu.supports(hw::Precision::kBf16));
    EXPECT_GT(s.cluster.gpu.peak(hw::Precision::kBf16), 1e14);
    EXPECT_GT(s.cluster.gpu.memory_capacity_bytes, 1e10);
    EXPECT_GT(s.cluster.gpu.memory_bandwidth, 1e12);
    EXPECT_GT(s.cluster.gpu.tdp_watts, 0.0);
    EXPECT_FALSE(s.cluster.gpu.matmul_efficiency.empty());
    // The platform defaults (DESIGN.md: NVSwitch and one NIC per GPU of the matching
    // generation): 8-GPU servers, or the 4-GPU compute trays of a 72-GPU NVL72 rack.
    const bool nvl72 = name.starts_with("GB");
    EXPECT_EQ(s.cluster.gpus_per_node, nvl72 ? 4 : 8);
    EXPECT_EQ(s.cluster.nodes_per_domain, nvl72 ? 2 : 1);  // 2 trays of a rack: one domain
    // NVIDIA's GPUs on NVSwitch; AMD's 8 on an Infinity Fabric mesh of 7 links each.
    const bool amd = name.starts_with("MI");
    EXPECT_EQ(s.cluster.intra_node.fabric, amd ? "mesh" : "nvswitch");
    EXPECT_GT(s.cluster.intra_node.bandwidth * (amd ? 7 : 1), 1e11);
    EXPECT_GT(s.cluster.intra_node.latency, 0.0);
    EXPECT_EQ(s.cluster.inter_node.topology, "fat_tree");
    EXPECT_EQ(s.cluster.inter_node.nics_per_node, s.cluster.gpus_per_node);
    EXPECT_GT(s.cluster.inter_node.nic_bandwidth, 1e10);
    EXPECT_GT(s.cluster.inter_node.latency, 0.0);
    EXPECT_EQ(s.parallel.data, 2 * s.cluster.gpus_per_node);
  }
}

TEST(ScenarioReader, EveryModelPresetParses) {
  const std::vector<std::string> names = preset_names(PresetKind::kModel);
  ASSERT_FALSE(names.empty());
  for (const std::string& name : names) {
    SCOPED_TRACE(name);
    const config::Scenario s = parse_ok(patched(R"({"model": ")" + name + R"("})"));
    EXPECT_EQ(s.model.name, name);
    EXPECT_GT(s.model.num_layers, 0);
    EXPECT_EQ(s.model.kv_channels * s.model.num_attention_heads, s.model.hidden_size);
    EXPECT_EQ(s.model.num_attention_heads % s.model.num_query_groups, 0);
    EXPECT_LE(s.model.seq_length, s.model.max_position_embeddings);
    EXPECT_TRUE(s.model.published_parameters.has_value());
    EXPECT_FALSE(s.model.source.empty());
  }
}

TEST(ScenarioReader, ModelPresetValues) {
  const config::Scenario llama = parse_ok(patched(R"({"model": "llama3-8b"})"));
  EXPECT_EQ(llama.model.num_layers, 32);
  EXPECT_EQ(llama.model.hidden_size, 4096);
  EXPECT_EQ(llama.model.ffn_hidden_size, 14336);
  EXPECT_EQ(llama.model.num_query_groups, 8);
  EXPECT_EQ(llama.model.seq_length, 8192);
  EXPECT_EQ(llama.model.vocab_size, 128256);
  EXPECT_TRUE(llama.model.swiglu);
  EXPECT_TRUE(llama.model.untie_embeddings);
  EXPECT_EQ(llama.model.normalization, workload::Normalization::kRmsNorm);
  EXPECT_EQ(llama.model.position_embedding, workload::PositionEmbedding::kRope);
  EXPECT_FALSE(llama.model.add_bias_linear);
  EXPECT_FALSE(llama.model.is_moe());

  const config::Scenario mixtral = parse_ok(patched(R"({"model": "mixtral-8x7b"})"));
  EXPECT_TRUE(mixtral.model.is_moe());
  EXPECT_EQ(mixtral.model.num_experts, 8);
  EXPECT_EQ(mixtral.model.moe_router_topk, 2);
  EXPECT_EQ(mixtral.model.max_position_embeddings, 32768);
}

// --- Units and defaults.

TEST(ScenarioReader, UnitsLandInSiUnits) {
  const config::Scenario s = parse_ok(patched(R"({
    "cluster": {"num_nodes": 2,
                "intra_node": {"bandwidth": "900GB/s", "latency": "1.5µs"},
                "inter_node": {"nic_bandwidth": "400Gbps", "latency": "2us", "nics_per_node": 4}},
    "training": {"global_batch_size": 16, "train_tokens": "15T"}})"));
  EXPECT_EQ(s.cluster.inter_node.nic_bandwidth, 5e10);
  EXPECT_EQ(s.cluster.inter_node.latency, 2e-6);
  EXPECT_EQ(s.cluster.inter_node.nics_per_node, 4);
  EXPECT_EQ(s.cluster.intra_node.bandwidth, 9e11);
  EXPECT_EQ(s.cluster.intra_node.latency, 1.5e-6);
  ASSERT_TRUE(s.training.train_tokens.has_value());
  EXPECT_EQ(*s.training.train_tokens, 1.5e13);
  // Fields not given keep the preset's platform values.
  EXPECT_EQ(s.cluster.intra_node.bandwidth_efficiency,
            preset_value("H100-SXM5-80GB", "/platform/intra_node/bandwidth_efficiency", Dimension::kCount));
  EXPECT_EQ(s.cluster.inter_node.bandwidth_efficiency,
            preset_value("H100-SXM5-80GB", "/platform/inter_node/bandwidth_efficiency", Dimension::kCount));
}

TEST(ScenarioReader, PlainNumbersAreSi) {
  const config::Scenario s = parse_ok(patched(R"({
    "cluster": {"num_nodes": 2, "inter_node": {"nic_bandwidth": 5e10, "latency": 2e-6}},
    "training": {"global_batch_size": 16, "train_tokens": 1e9}})"));
  EXPECT_EQ(s.cluster.inter_node.nic_bandwidth, 5e10);
  EXPECT_EQ(s.cluster.inter_node.latency, 2e-6);
  EXPECT_EQ(s.training.train_tokens, 1e9);
}

TEST(ScenarioReader, DefaultsFromTheH100Preset) {
  const config::Scenario s = parse_ok(std::string(kBase));
  EXPECT_EQ(s.name, "good");  // the file's stem when no name is given
  EXPECT_EQ(s.source_file, "good.json");
  EXPECT_EQ(s.cluster.gpus_per_node, 8);
  EXPECT_EQ(s.cluster.num_gpus(), 8);
  constexpr const char* kH100 = "H100-SXM5-80GB";
  EXPECT_EQ(s.cluster.intra_node.bandwidth,
            preset_value(kH100, "/platform/intra_node/bandwidth", Dimension::kBandwidth));
  EXPECT_EQ(s.cluster.intra_node.latency, preset_value(kH100, "/platform/intra_node/latency", Dimension::kTime));
  EXPECT_EQ(s.cluster.inter_node.nic_bandwidth, 5e10);  // DGX H100: 400 Gb/s NDR
  EXPECT_EQ(s.cluster.inter_node.latency, preset_value(kH100, "/platform/inter_node/latency", Dimension::kTime));
  EXPECT_EQ(s.cluster.gpu.memory_capacity_bytes, preset_value(kH100, "/memory_capacity", Dimension::kBytes));
  EXPECT_GT(s.cluster.gpu.memory_capacity_bytes, 79e9);
  EXPECT_EQ(s.cluster.gpu.peak(hw::Precision::kBf16), 989e12);
  EXPECT_EQ(s.cluster.gpu.tdp_watts, 700.0);
  EXPECT_FALSE(s.cluster.price_per_gpu_hour.has_value());

  EXPECT_EQ(s.training.micro_batch_size, 1);
  EXPECT_EQ(s.training.precision, hw::Precision::kBf16);
  EXPECT_EQ(s.training.optimizer, workload::Optimizer::kAdam);
  EXPECT_EQ(s.training.attention_backend, workload::AttentionBackend::kFlash);
  EXPECT_FALSE(s.training.train_tokens.has_value());

  EXPECT_EQ(s.parallel.tensor, 1);
  EXPECT_EQ(s.parallel.pipeline, 1);
  EXPECT_EQ(s.parallel.context, 1);
  EXPECT_EQ(s.parallel.expert, 1);
  EXPECT_EQ(s.parallel.data, 8);  // "auto" when not given
  EXPECT_FALSE(s.parallel.layers_per_virtual_stage.has_value());
  EXPECT_FALSE(s.parallel.sequence_parallel);
  EXPECT_EQ(s.parallel.zero_stage, 0);
  EXPECT_EQ(s.parallel.recompute, workload::Recompute::kNone);
  EXPECT_FALSE(s.parallel.overlap_grad_reduce);
  EXPECT_EQ(s.parallel.schedule, workload::PipelineSchedule::k1F1B);
  EXPECT_EQ(s.parallel.mode, workload::TrainingMode::kSync);
  EXPECT_FALSE(s.parallel.ddp_bucket_size.has_value());

  EXPECT_EQ(s.simulation.network_model, config::NetworkModel::kFlow);
  EXPECT_EQ(s.simulation.iterations, 1);
  EXPECT_EQ(s.simulation.seed, 1u);
}

TEST(ScenarioReader, GpusPerNodeOverridesThePlatform) {
  const config::Scenario s = parse_ok(patched(R"({"cluster": {"num_nodes": 3, "gpus_per_node": 4},
                                          "training": {"global_batch_size": 12}})"));
  EXPECT_EQ(s.cluster.gpus_per_node, 4);
  EXPECT_EQ(s.cluster.num_gpus(), 12);
  EXPECT_EQ(s.parallel.data, 12);
}

TEST(ScenarioReader, DataParallelAutoIsGpusOverModelParallel) {
  for (const char* dp : {R"("auto")", "null"}) {
    SCOPED_TRACE(dp);
    const config::Scenario s =
        parse_ok(patched(std::string(R"({"cluster": {"num_nodes": 4}, "training": {"global_batch_size": 64},
                                                         "parallelism": {"tp": 1, "pp": 1, "cp": 1, "dp": )") +
                         dp + "}}"));
    EXPECT_EQ(s.parallel.data, 32 / (s.parallel.tensor * s.parallel.pipeline * s.parallel.context));
    EXPECT_EQ(s.parallel.data, 32);
  }
}

TEST(ScenarioReader, AliasesAndFullNamesAreTheSameSettings) {
  const config::Scenario by_alias = parse_ok(patched(R"({"parallelism": {"tp": 1, "pp": 1, "dp": 8, "cp": 1, "ep": 1,
                                                                  "vpp": null}})"));
  const config::Scenario by_name = parse_ok(patched(R"({"parallelism": {
      "tensor_model_parallel_size": 1, "pipeline_model_parallel_size": 1, "data_parallel_size": 8,
      "context_parallel_size": 1, "expert_model_parallel_size": 1, "num_layers_per_virtual_pipeline_stage": null}})"));
  for (const config::Scenario* s : {&by_alias, &by_name}) {
    EXPECT_EQ(s->parallel.tensor, 1);
    EXPECT_EQ(s->parallel.pipeline, 1);
    EXPECT_EQ(s->parallel.data, 8);
    EXPECT_EQ(s->parallel.context, 1);
    EXPECT_EQ(s->parallel.expert, 1);
    EXPECT_FALSE(s->parallel.layers_per_virtual_stage.has_value());
  }
  const config::Scenario untied =
      parse_ok(patched(R"({"model": {"preset": "gpt2-124m", "untie_embeddings_and_output_weights": true}})"));
  EXPECT_TRUE(untied.model.untie_embeddings);
  const config::Scenario tied =
      parse_ok(patched(R"({"model": {"preset": "llama3-8b", "untie_embeddings_and_output_weights": false}})"));
  EXPECT_FALSE(tied.model.untie_embeddings);
}

TEST(ScenarioReader, ParallelismOptions) {
  const config::Scenario s = parse_ok(patched(R"({"parallelism": {"recompute_granularity": "selective",
      "overlap_grad_reduce": true, "pipeline_schedule": "1f1b", "mode": "sync", "ddp_bucket_size": 10000000,
      "zero_stage": 0, "sequence_parallel": false}})"));
  EXPECT_EQ(s.parallel.recompute, workload::Recompute::kSelective);
  EXPECT_TRUE(s.parallel.overlap_grad_reduce);
  EXPECT_EQ(s.parallel.ddp_bucket_size, 10'000'000);
  const config::Scenario null_recompute = parse_ok(patched(R"({"parallelism": {"recompute_granularity": null}})"));
  EXPECT_EQ(null_recompute.parallel.recompute, workload::Recompute::kNone);
}

TEST(ScenarioReader, ModelPresetWithOneOverride) {
  const config::Scenario s = parse_ok(patched(R"({"model": {"preset": "llama3-8b", "seq_length": 4096}})"));
  EXPECT_EQ(s.model.seq_length, 4096);
  // Everything else is the preset's.
  EXPECT_EQ(s.model.name, "llama3-8b");
  EXPECT_EQ(s.model.num_layers, 32);
  EXPECT_EQ(s.model.hidden_size, 4096);
  EXPECT_EQ(s.model.num_query_groups, 8);
  EXPECT_EQ(s.model.max_position_embeddings, 8192);
  EXPECT_EQ(s.model.position_embedding, workload::PositionEmbedding::kRope);
}

TEST(ScenarioReader, InlineModelWithDefaults) {
  const config::Scenario s = parse_ok(patched(R"({"model": {"num_layers": 4, "hidden_size": 256,
      "num_attention_heads": 8, "seq_length": 512, "vocab_size": 1000, "num_experts": 1}})"));
  EXPECT_EQ(s.model.name, "custom model");
  EXPECT_EQ(s.model.ffn_hidden_size, 1024);
  EXPECT_EQ(s.model.num_query_groups, 8);
  EXPECT_EQ(s.model.kv_channels, 32);
  EXPECT_EQ(s.model.max_position_embeddings, 512);
  EXPECT_EQ(s.model.num_experts, 0);  // one expert is a dense MLP
  EXPECT_FALSE(s.model.is_moe());
  EXPECT_FALSE(s.model.swiglu);
  EXPECT_EQ(s.model.normalization, workload::Normalization::kLayerNorm);
  EXPECT_EQ(s.model.position_embedding, workload::PositionEmbedding::kLearnedAbsolute);
  EXPECT_FALSE(s.model.published_parameters.has_value());
}

TEST(ScenarioReader, KvChannelsLiftsTheHeadDivisibilityRule) {
  const config::Scenario s = parse_ok(patched(R"({"model": {"num_layers": 2, "hidden_size": 100,
      "num_attention_heads": 3, "kv_channels": 32, "seq_length": 128, "vocab_size": 1000}})"));
  EXPECT_EQ(s.model.kv_channels, 32);
  EXPECT_EQ(s.model.query_width(), 96);
}

TEST(ScenarioReader, InlineGpuWithoutPreset) {
  const config::Scenario s = parse_ok(patched(R"({"cluster": {"num_nodes": 2, "gpus_per_node": 4,
      "gpu": {"name": "X1", "peak_flops": {"bf16": "500TFLOP/s", "fp32": 6e13}, "memory_capacity": "48GiB",
              "memory_bandwidth": "2TB/s", "tdp": "1.2kW", "matmul_efficiency": [[1e12, 0.8], [1e10, 0.5]]},
      "intra_node": {"bandwidth": "200GB/s", "latency": "3us"},
      "inter_node": {"nic_bandwidth": "100Gbps", "nics_per_node": 2}}})"));
  EXPECT_EQ(s.cluster.gpu.name, "X1");
  EXPECT_EQ(s.cluster.gpu.peak(hw::Precision::kBf16), 5e14);
  EXPECT_EQ(s.cluster.gpu.peak(hw::Precision::kFp32), 6e13);
  EXPECT_FALSE(s.cluster.gpu.supports(hw::Precision::kFp8));
  EXPECT_EQ(s.cluster.gpu.memory_capacity_bytes, 48.0 * 1024 * 1024 * 1024);
  EXPECT_EQ(s.cluster.gpu.memory_bandwidth, 2e12);
  EXPECT_EQ(s.cluster.gpu.memory_bandwidth_efficiency, 1.0);
  EXPECT_EQ(s.cluster.gpu.tdp_watts, 1200.0);
  ASSERT_EQ(s.cluster.gpu.matmul_efficiency.size(), 2u);
  EXPECT_EQ(s.cluster.gpu.matmul_efficiency[0].flops, 1e12);
  EXPECT_EQ(s.cluster.gpu.matmul_efficiency[0].efficiency, 0.8);
  EXPECT_EQ(s.cluster.num_gpus(), 8);
  EXPECT_EQ(s.cluster.intra_node.bandwidth, 2e11);
  EXPECT_EQ(s.cluster.intra_node.latency, 3e-6);
  EXPECT_EQ(s.cluster.inter_node.nic_bandwidth, 1.25e10);
  EXPECT_EQ(s.cluster.inter_node.nics_per_node, 2);
}

TEST(ScenarioReader, InlineGpuDefaultsToPeakEfficiency) {
  const config::Scenario s = parse_ok(patched(R"({"cluster": {"gpus_per_node": 1, "gpu": {"peak_flops": {"bf16": 1e14},
      "memory_capacity": 1e10, "memory_bandwidth": 1e12}}})"));
  EXPECT_EQ(s.cluster.gpu.name, "custom GPU");
  ASSERT_EQ(s.cluster.gpu.matmul_efficiency.size(), 1u);
  EXPECT_EQ(s.cluster.gpu.matmul_efficiency[0].efficiency, 1.0);
  EXPECT_EQ(s.cluster.gpu.tdp_watts, 0.0);
}

TEST(ScenarioReader, GpuPresetWithOverride) {
  const config::Scenario s =
      parse_ok(patched(R"({"cluster": {"gpu": {"preset": "H100-SXM5-80GB", "memory_capacity": "94GiB"}}})"));
  EXPECT_EQ(s.cluster.gpu.name, "H100-SXM5-80GB");
  EXPECT_EQ(s.cluster.gpu.memory_capacity_bytes, 94.0 * 1024 * 1024 * 1024);
  EXPECT_EQ(s.cluster.gpu.memory_bandwidth, preset_value("H100-SXM5-80GB", "/memory_bandwidth", Dimension::kBandwidth));
  EXPECT_EQ(s.cluster.gpus_per_node, 8);
}

TEST(ScenarioReader, GradReduceDtypeDefaults) {
  struct Expectation {
    const char* precision;
    hw::Precision grad;
  };
  for (const Expectation& e : {Expectation{"bf16", hw::Precision::kFp32}, Expectation{"fp16", hw::Precision::kFp16},
                               Expectation{"fp32", hw::Precision::kFp32}, Expectation{"fp8", hw::Precision::kFp32},
                               Expectation{"tf32", hw::Precision::kFp32}}) {
    SCOPED_TRACE(e.precision);
    const config::Scenario s = parse_ok(patched(std::string(R"({"training": {"precision": ")") + e.precision + R"("}})"));
    EXPECT_EQ(hw::to_string(s.training.precision), e.precision);
    EXPECT_EQ(s.training.grad_reduce_dtype, e.grad);
  }
  const config::Scenario explicit_bf16 =
      parse_ok(patched(R"({"training": {"precision": "bf16", "grad_reduce_dtype": "bf16"}})"));
  EXPECT_EQ(explicit_bf16.training.grad_reduce_dtype, hw::Precision::kBf16);
}

TEST(ScenarioReader, TrainingChoices) {
  const config::Scenario s = parse_ok(patched(R"({"training": {"global_batch_size": 64, "micro_batch_size": 2,
      "optimizer": "sgd", "attention_backend": "unfused"}})"));
  EXPECT_EQ(s.training.global_batch_size, 64);
  EXPECT_EQ(s.training.micro_batch_size, 2);
  EXPECT_EQ(s.training.optimizer, workload::Optimizer::kSgd);
  EXPECT_EQ(s.training.attention_backend, workload::AttentionBackend::kUnfused);
  EXPECT_EQ(parse_ok(patched(R"({"training": {"optimizer": "adamw"}})")).training.optimizer,
            workload::Optimizer::kAdam);
  EXPECT_EQ(parse_ok(patched(R"({"training": {"attention_backend": "flash2"}})")).training.attention_backend,
            workload::AttentionBackend::kFlash2);
}

TEST(ScenarioReader, H100PresetHasFlashAttention2Curves) {
  // scenarios/hardware/H100-SXM5-80GB.json, docs/model.md "Attention efficiency": the
  // "flash2" entry of head dim 128 from FlashAttention-3's Figure 5 (forward, causal:
  // 191 TFLOP/s at sequence 512, 335 at 16k, over 989) at 2 b h s^2 d FLOPs with
  // b = 16384 / s tokens, 16 heads of 128.
  const config::Scenario s = parse_ok(patched(R"({"training": {"global_batch_size": 8}})"));
  const hw::AttentionEfficiency* flash2 = nullptr;
  for (const hw::AttentionEfficiency& a : s.cluster.gpu.attention_efficiency)
    if (a.head_dim == 128 && a.kernel == hw::AttentionKernel::kFlash2) flash2 = &a;
  ASSERT_NE(flash2, nullptr);
  ASSERT_EQ(flash2->forward.size(), 6U);
  EXPECT_NEAR(flash2->forward.front().flops, 2.0 * 32 * 16 * 512.0 * 512.0 * 128, 1e7);
  EXPECT_NEAR(flash2->forward.front().efficiency, 191.0 / 989.0, 5e-4);
  EXPECT_NEAR(flash2->forward.back().efficiency, 335.0 / 989.0, 5e-4);
  // Backward: non-causal 322 TFLOP/s at 16k times the forward's 335/370, at 2.5x the FLOPs.
  EXPECT_NEAR(flash2->backward.back().flops, 2.5 * 2.0 * 16 * 16384.0 * 16384.0 * 128, 1e9);
  EXPECT_NEAR(flash2->backward.back().efficiency, 322.0 * 335.0 / 370.0 / 989.0, 5e-4);
}

TEST(ScenarioReader, OptionalSectionsMayBeNull) {
  const config::Scenario s = parse_ok(patched(R"({"name": "named", "description": "a test",
      "failures": null, "calibration": null, "simulation": {"network_model": "analytic", "iterations": 3,
      "seed": 9223372036854775807, "collective_algorithm": "auto"}, "cluster": {"price_per_gpu_hour": null}})"));
  EXPECT_EQ(s.name, "named");
  EXPECT_EQ(s.simulation.iterations, 3);
  EXPECT_EQ(s.simulation.seed, 9223372036854775807u);
  EXPECT_FALSE(s.cluster.price_per_gpu_hour.has_value());
}

TEST(ScenarioReader, IntegralFloatsAreIntegers) {
  const config::Scenario s = parse_ok(patched(R"({"cluster": {"num_nodes": 2.0}, "training": {"global_batch_size": 1.6e1}})"));
  EXPECT_EQ(s.cluster.num_nodes, 2);
  EXPECT_EQ(s.training.global_batch_size, 16);
}

TEST(ScenarioReader, CustomCableEndsAreTyped) {
  const config::Scenario s = parse_ok(patched(R"({"cluster": {"num_nodes": 2, "inter_node": {"topology": "custom",
      "nics_per_node": 1, "links": [{"a": "node0.nic0", "b": "sw"}, {"a": "sw", "b": "node1.nic0"}]}},
      "training": {"global_batch_size": 16}})"));
  const std::vector<hw::CustomLink>& links = s.cluster.inter_node.custom_links;
  ASSERT_EQ(links.size(), 2u);
  ASSERT_TRUE(links[0].a.nic.has_value());
  EXPECT_EQ(links[0].a.nic->node, 0);
  EXPECT_EQ(links[0].a.nic->rail, 0);
  EXPECT_EQ(links[0].b.name, "sw");
  EXPECT_FALSE(links[0].b.nic.has_value());
  ASSERT_TRUE(links[1].b.nic.has_value());
  EXPECT_EQ(links[1].b.nic->node, 1);
  EXPECT_EQ(links[1].b.name, "node1.nic0");
}

TEST(ScenarioReader, LargestClusterIsAccepted) {
  // A million NICs need a 3-tier fat tree of radix 256 (at most 256^3 / 4).
  const config::Scenario s = parse_ok(patched(R"({"cluster": {"num_nodes": 1000000, "gpus_per_node": 1,
                                                      "inter_node": {"nics_per_node": 1, "switch_radix": 256}},
                                          "training": {"global_batch_size": 1000000}})"));
  EXPECT_EQ(s.cluster.num_gpus(), 1'000'000);
  EXPECT_EQ(s.parallel.data, 1'000'000);
}

TEST(ScenarioReader, BracketsInsideStringsAreNotNesting) {
  const std::string brackets(100'000, '[');
  const config::Scenario s = parse_ok(patched(R"({"name": ")" + brackets + R"(", "description": "{{{{ \" [[["})"));
  EXPECT_EQ(s.name, brackets);
}

TEST(ScenarioReader, ModerateNestingIsNotRejectedForDepth) {
  // 64 levels are allowed; the unknown key is what this file gets wrong.
  std::string text = R"({"x": )" + std::string(63, '[') + std::string(63, ']') + "}";
  try {
    static_cast<void>(parse(text));
    ADD_FAILURE() << "accepted an unknown key";
  } catch (const ScenarioError& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr(R"(unknown key "x")"));
    EXPECT_THAT(std::string(e.what()), Not(HasSubstr("nested")));
  }
}

TEST(ScenarioReader, WindowsLineEndingsTabsAndByteOrderMark) {
  // Windows line endings and tabs are plain JSON whitespace; editors on Windows
  // may start the file with a UTF-8 byte order mark.
  std::string text(kBase);
  std::replace(text.begin(), text.end(), '\n', '\t');
  EXPECT_EQ(parse_ok("\r\n" + text + "\r\n").cluster.num_gpus(), 8);
  EXPECT_EQ(parse_ok("\xEF\xBB\xBF" + text).cluster.num_gpus(), 8);
}

TEST(ScenarioReader, ReadsFromAnyWorkingDirectory) {
  // Presets are compiled in: a scenario outside the source tree still finds them.
  const auto dir = std::filesystem::path(testing::TempDir()) / "trainsim_scenario_reader_cwd";
  std::filesystem::create_directories(dir);
  const auto file = dir / "copy.json";
  std::filesystem::copy_file(kSourceDir / "scenarios" / "llama3-8b-64xh100.json", file,
                             std::filesystem::copy_options::overwrite_existing);
  const config::Scenario s = read_scenario_file(file);
  EXPECT_EQ(s.model.name, "llama3-8b");
  EXPECT_EQ(s.cluster.num_gpus(), 64);
  EXPECT_EQ(s.cluster.inter_node.nic_bandwidth, 5e10);
  EXPECT_EQ(s.training.train_tokens, 15e12);
  EXPECT_THAT(s.source_file, Not(IsEmpty()));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace trainsim::scenario

namespace trainsim::scenario {
namespace {

// The host link and memory come from the preset's platform.host, the cluster's
// "host" overrides each key, and an async checkpoint's copy to host memory takes
// the link's rate per GPU when neither the scenario nor a profile gives one.
TEST(ScenarioReader, HostLinkFromThePlatformAndItsOverrides) {
  const auto read = [](const std::string& gpu, const std::string& host) {
    return parse_scenario_text(R"({"cluster": {"gpu": ")" + gpu + R"(", "num_nodes": 1)" + host + R"(},
                                   "model": "gpt2-124m", "failures": {"checkpoint_mode": "async"},
                                   "training": {"global_batch_size": 8, "micro_batch_size": 1,
                                                "train_tokens": 1e9}})",
                               "host.json");
  };
  const config::Scenario h100 = read("H100-SXM5-80GB", "");
  EXPECT_DOUBLE_EQ(h100.cluster.host.host_to_device, 55.05e9);
  EXPECT_DOUBLE_EQ(h100.cluster.host.device_to_host, 55.12e9);
  EXPECT_EQ(h100.cluster.host.gpus_per_link, 1);
  EXPECT_DOUBLE_EQ(h100.cluster.host.memory_per_gpu, 256e9);
  EXPECT_DOUBLE_EQ(h100.failures->host_copy_bandwidth, 55.12e9);
  EXPECT_EQ(h100.failures->host_copy_source, faults::FailureConfig::Source::kPlatform);
  // Two A100s behind one PCIe switch uplink: 25 GB/s shared, 12.5 GB/s each.
  const config::Scenario a100 = read("A100-SXM4-80GB", "");
  EXPECT_DOUBLE_EQ(a100.cluster.host.device_to_host_per_gpu(), 12.5e9);
  EXPECT_DOUBLE_EQ(a100.failures->host_copy_bandwidth, 12.5e9);
  const config::Scenario grace =
      read("B200", R"(, "host": {"device_to_host": "295.2GB/s", "gpus_per_link": 2, "memory_per_gpu": "240GB"})");
  EXPECT_DOUBLE_EQ(grace.cluster.host.device_to_host_per_gpu(), 147.6e9);
  EXPECT_DOUBLE_EQ(grace.cluster.host.host_to_device, 55.05e9);  // the preset's, not overridden
  EXPECT_DOUBLE_EQ(grace.cluster.host.memory_per_gpu, 240e9);
}

}  // namespace
}  // namespace trainsim::scenario
