// Bad scenario files: each must be rejected with a ScenarioError (or
// NotSupportedYet for keys whose simulation lands later) whose message names the
// file, the JSON path of the offending value, what was expected and what was
// found, precisely enough that a user knows what to fix.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <ostream>
#include <iterator>
#include <string>
#include <string_view>
#include <typeinfo>
#include <vector>

#include <nlohmann/json.hpp>

#include "scenario/errors.h"
#include "scenario/reader.h"

namespace trainsim::scenario {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

// 8 H100 in one node, GPT-2 small, pure data parallelism: the smallest valid
// scenario. Every case below breaks exactly one thing in it.
constexpr std::string_view kBase = R"({
  "cluster": {"gpu": "H100-SXM5-80GB", "num_nodes": 1},
  "model": "gpt2-124m",
  "training": {"global_batch_size": 8, "micro_batch_size": 1}
})";

// kBase with an RFC 7396 merge patch applied (null removes a key).
std::string patched(std::string_view patch) {
  nlohmann::json doc = nlohmann::json::parse(kBase);
  doc.merge_patch(nlohmann::json::parse(patch));
  return doc.dump(2);
}

enum class Kind { kInvalid, kNotSupported };

struct BadCase {
  std::string name;                   // test name: letters, digits and '_'
  std::string text;                   // the whole scenario file
  std::string path;                   // the JSON pointer the error must name ("" for whole-document errors)
  std::vector<std::string> expected;  // substrings of what(): what was expected and what was found
  Kind kind = Kind::kInvalid;
};

void PrintTo(const BadCase& c, std::ostream* os) { *os << c.name; }

BadCase invalid(std::string name, std::string text, std::string path, std::vector<std::string> expected) {
  return {std::move(name), std::move(text), std::move(path), std::move(expected), Kind::kInvalid};
}

std::string nested(std::string_view open, std::size_t depth) {
  std::string out;
  out.reserve(open.size() * depth);
  for (std::size_t i = 0; i < depth; ++i) out += open;
  return out;
}

// Scenarios with an inline GPU spec or model, around the keys a case adds.
const std::string kInlineGpuHead =
      R"({"cluster": {"num_nodes": 1, "gpus_per_node": 1, "gpu": {"name": "X1", "peak_flops": {"bf16": "100TFLOP/s"},
          "memory_capacity": "16GiB", "memory_bandwidth": "1TB/s")";
const std::string kInlineGpuTail =
      R"(}}, "model": "gpt2-124m", "training": {"global_batch_size": 8, "micro_batch_size": 1}})";
const std::string kInlineModelHead =
      R"({"cluster": {"gpu": "H100-SXM5-80GB", "num_nodes": 1}, "training": {"global_batch_size": 8}, "model": )";

// Malformed JSON: no path; the parser's line and column instead.
std::vector<BadCase> malformed_json_cases() {
  return {
      invalid("TruncatedJson", R"({"cluster": {"gpu": "H100-SXM5-80GB", "num_nodes": 1)", "",
              {"expected valid JSON", "line 1", "unexpected end of input"}),
      invalid("TrailingCommaInObject", R"({"model": "gpt2-124m",})", "",
              {"expected valid JSON", "line 1, column 23", "trailing comma"}),
      invalid("TrailingCommaInArray", "{\"model\": \"gpt2-124m\",\n \"x\": [1, 2,]}", "",
              {"expected valid JSON", "line 2, column 13", "trailing comma before ']'"}),
      invalid("SingleQuotes", "{'model': 'gpt2-124m'}", "",
              {"expected valid JSON", "line 1, column 2", "double quotes"}),
      invalid("TextAfterDocument", std::string(kBase) + " {}", "", {"expected valid JSON", "end of input"}),
      invalid("EmptyDocument", "  \n ", "", {"a JSON object", "an empty document"}),
      invalid("TopLevelArray", R"([{"model": "gpt2-124m"}])", "",
              {"expected a JSON object at the top level", "found an array"}),
      invalid("TopLevelNumber", "42", "", {"expected a JSON object at the top level", "found 42"}),
      invalid("TopLevelString", R"("gpt2-124m")", "",
              {"expected a JSON object at the top level", R"(found "gpt2-124m")"}),
      invalid("DuplicateKey", R"({"cluster": {"gpu": "H100-SXM5-80GB", "num_nodes": 1, "num_nodes": 2},
              "model": "gpt2-124m", "training": {"global_batch_size": 8}})",
              "/cluster/num_nodes", {"each key once", R"("num_nodes" twice)"}),
      invalid("DuplicateKeyInArrayElement", R"({"x": [0, [1], {"b": {}, "a": 1, "a": 2}], "model": "gpt2-124m"})",
              "/x/2/a", {"each key once", R"("a" twice)"}),
      invalid("DuplicateTopLevelKeyWithSlash", R"({"a/b": 1, "a/b": 2})", "/a~1b", {R"("a/b" twice)"})
  };
}

// Wrong types.
std::vector<BadCase> wrong_types_cases() {
  return {
      invalid("StringWhereInteger", patched(R"({"cluster": {"num_nodes": "two"}})"), "/cluster/num_nodes",
              {"expected an integer from 1 to 1000000", R"(found "two")"}),
      invalid("GpuSpeedSpreadTooLarge", patched(R"({"cluster": {"gpu_speed_spread": 0.8}})"),
              "/cluster/gpu_speed_spread", {"0.8"}),
      invalid("ArrayWhereObject", patched(R"({"training": [8, 1]})"), "/training",
              {"expected an object", "found an array"}),
      invalid("BoolWhereNumber", patched(R"({"cluster": {"price_per_gpu_hour": true}})"), "/cluster/price_per_gpu_hour",
              {"expected a number from 0 to", "found true"}),
      invalid("FractionalInteger", patched(R"({"training": {"micro_batch_size": 1.5}})"), "/training/micro_batch_size",
              {"expected an integer", "found 1.5"}),
      invalid("StringWhereBool", patched(R"({"parallelism": {"overlap_grad_reduce": "yes"}})"),
              "/parallelism/overlap_grad_reduce", {"expected true or false", R"(found "yes")"}),
      invalid("NumberWhereModel", patched(R"({"model": 7})"), "/model",
              {"expected a model preset name or an object", "found 7"}),
      invalid("NumberWhereName", patched(R"({"name": 7})"), "/name", {"expected a string", "found 7"}),
      invalid("ObjectWhereQuantity", patched(R"({"cluster": {"intra_node": {"latency": {"us": 2}}}})"),
              "/cluster/intra_node/latency", {"expected a duration such as", "found an object"}),
      invalid("NumberWhereGpuPresetName", patched(R"({"cluster": {"gpu": {"preset": 100}}})"), "/cluster/gpu/preset",
              {"expected a GPU preset name", "found 100"})
  };
}

// Zero and negative sizes.
std::vector<BadCase> zero_and_negative_sizes_cases() {
  return {
      invalid("ZeroNodes", patched(R"({"cluster": {"num_nodes": 0}})"), "/cluster/num_nodes",
              {"expected an integer from 1 to 1000000", "found 0"}),
      invalid("NegativeMicroBatch", patched(R"({"training": {"micro_batch_size": -1}})"), "/training/micro_batch_size",
              {"expected an integer from 1", "found -1"}),
      invalid("ZeroHiddenSize", patched(R"({"model": {"preset": "gpt2-124m", "hidden_size": 0}})"),
              "/model/hidden_size", {"expected an integer from 1", "found 0"}),
      invalid("ZeroGpusPerNode", patched(R"({"cluster": {"gpus_per_node": 0}})"), "/cluster/gpus_per_node",
              {"expected an integer from 1 to 1024", "found 0"}),
      invalid("NegativeBandwidth", patched(R"({"cluster": {"inter_node": {"nic_bandwidth": "-400Gbps"}}})"),
              "/cluster/inter_node/nic_bandwidth",
              {"expected a bandwidth from 1e+06 B/s to 1e+15 B/s", R"(found "-400Gbps")"}),
      invalid("MicroBatchAboveGlobalBatch", patched(R"({"training": {"micro_batch_size": 16}})"),
              "/training/micro_batch_size", {"micro_batch_size (16)", "global_batch_size (8)"})
  };
}

// The parallel layout against the cluster and the batch.
std::vector<BadCase> layout_against_cluster_cases() {
  return {
      invalid("TensorParallelNotDividingGpus", patched(R"({"parallelism": {"tensor_model_parallel_size": 3}})"),
              "/parallelism/tensor_model_parallel_size",
              {"tensor (3) x pipeline (1) x context (1)", "= 3", "does not divide the 8 GPUs"}),
      invalid("ContextParallelNotDividingGpus", patched(R"({"parallelism": {"cp": 3}})"), "/parallelism/cp",
              {"context (3)", "does not divide the 8 GPUs"}),
      invalid("ModelParallelLargerThanCluster", patched(R"({"parallelism": {"tp": 4, "pp": 4}})"), "/parallelism/tp",
              {"tensor (4) x pipeline (4) x context (1) parallel = 16", "does not divide the 8 GPUs"}),
      invalid("DataParallelMismatch", patched(R"({"parallelism": {"dp": 4}})"), "/parallelism/dp",
              {"data (4) parallel = 4", "the cluster has 8 GPUs", R"(use "auto")"}),
      invalid("DataParallelUnknownWord", patched(R"({"parallelism": {"data_parallel_size": "half"}})"),
              "/parallelism/data_parallel_size", {R"(expected an integer or "auto")", R"(found "half")"}),
      invalid("GlobalBatchNotDivisible", patched(R"({"training": {"global_batch_size": 12}})"),
              "/training/global_batch_size",
              {"global_batch_size (12)", "divisible by micro_batch_size (1) x data_parallel_size (8) = 8"}),
      invalid("InterleavedWithoutVirtualStages",
              patched(R"({"parallelism": {"pp": 2, "pipeline_schedule": "interleaved_1f1b"}})"),
              "/parallelism/pipeline_schedule",
              {"needs virtual_pipeline_model_parallel_size or num_layers_per_virtual_pipeline_stage"}),
      invalid("VirtualStagesNotDividingStageLayers",
              patched(R"({"parallelism": {"pp": 2, "num_layers_per_virtual_pipeline_stage": 4}})"),
              "/parallelism/num_layers_per_virtual_pipeline_stage",
              {"(4) must divide the 6 layers of each pipeline stage"}),
      invalid("VirtualStagesWithoutLayers",
              patched(R"({"parallelism": {"pp": 8, "num_layers_per_virtual_pipeline_stage": 1}})"),
              "/parallelism/num_layers_per_virtual_pipeline_stage",
              {"16 virtual stages (2 per pipeline stage x pipeline_model_parallel_size 8) for 12 layers: 4 would "
               "hold no layer", "account_for_embedding_in_pipeline_split"}),
      invalid("UnevenStagesNotDividing",
              patched(R"({"parallelism": {"pp": 4, "decoder_first_pipeline_num_layers": 2}})"),
              "/parallelism/decoder_first_pipeline_num_layers",
              {"the 10 layers left after the first and last stages (num_layers 12) must divide evenly over the "
               "other 3 stages"}),
      invalid("AccountedSplitNotDividing",
              patched(R"({"parallelism": {"pp": 4, "account_for_loss_in_pipeline_split": true}})"),
              "/parallelism/account_for_loss_in_pipeline_split",
              {"num_layers 12 plus the embedding and loss counted in the split (13) must divide by "
               "pipeline_model_parallel_size 4"}),
      invalid("TensorParallelNotDividingHeads", patched(R"({"parallelism": {"tp": 8}})"), "/parallelism/tp",
              {"tensor_model_parallel_size (8) must divide num_attention_heads (12) and num_query_groups (12)"}),
      invalid("PipelineDeeperThanModel",
              patched(R"({"cluster": {"num_nodes": 4}, "model": {"preset": "gpt2-124m", "num_layers": 2},
                          "parallelism": {"pp": 4}})"),
              "/parallelism/pp", {"pipeline_model_parallel_size (4) exceeds num_layers (2)"})
  };
}

// Presets.
std::vector<BadCase> presets_cases() {
  return {
      invalid("UnknownGpuPreset", patched(R"({"cluster": {"gpu": "H100-SXM5-80G"}})"), "/cluster/gpu",
              {"expected one of the GPU presets A100-SXM4-80GB, B200, B300, GB200, GB300, H100-SXM5-80GB, H200-SXM-141GB, MI300X",
               R"(did you mean "H100-SXM5-80GB"?)", R"(found "H100-SXM5-80G")"}),
      invalid("UnknownGpuPresetInOverride", patched(R"({"cluster": {"gpu": {"preset": "a100"}}})"),
              "/cluster/gpu/preset",
              {"expected one of the GPU presets", R"(did you mean "A100-SXM4-80GB"?)", R"(found "a100")"}),
      invalid("LowerCaseGpuPreset", patched(R"({"cluster": {"gpu": "h200"}})"), "/cluster/gpu",
              {R"(did you mean "H200-SXM-141GB"?)", R"(found "h200")"}),
      invalid("UnknownModelPreset", patched(R"({"model": "llama3-9b"})"), "/model",
              {"expected one of the model presets", R"(did you mean "llama3-8b"?)", R"(found "llama3-9b")"}),
      invalid("UnknownModelPresetFarOff", patched(R"({"model": "bert-large"})"), "/model",
              {"expected one of the model presets deepseek-v3, gpt2-124m,", "mixtral-8x7b", R"(found "bert-large")"})
  };
}

// Units.
std::vector<BadCase> units_cases() {
  return {
      invalid("UnknownUnit", patched(R"({"cluster": {"inter_node": {"nic_bandwidth": "400Gbs"}}})"),
              "/cluster/inter_node/nic_bandwidth",
              {"expected a bandwidth", R"(found "400Gbs")", R"(did you mean "400Gbps"?)"}),
      invalid("UnitOfWrongDimension", patched(R"({"cluster": {"intra_node": {"bandwidth": "2us"}}})"),
              "/cluster/intra_node/bandwidth",
              {"expected a bandwidth", R"(found "2us")", "a duration, not a bandwidth"}),
      invalid("NoNumberInQuantity", patched(R"({"cluster": {"inter_node": {"latency": "fast"}}})"),
              "/cluster/inter_node/latency", {"expected a duration", R"("fast", which does not start with a number)"}),
      invalid("LatencyAboveOneSecond", patched(R"({"cluster": {"inter_node": {"latency": "2s"}}})"),
              "/cluster/inter_node/latency", {"expected a duration from 0 s to 1 s", R"(found "2s")"})
  };
}

// Absurd values.
std::vector<BadCase> absurd_values_cases() {
  return {
      invalid("HugeFloatNodes", patched(R"({"cluster": {"num_nodes": 1e30}})"), "/cluster/num_nodes",
              {"expected an integer from 1 to 1000000", "found 1e+30"}),
      invalid("TenMillionNodes", patched(R"({"cluster": {"num_nodes": 10000000}})"), "/cluster/num_nodes",
              {"expected an integer from 1 to 1000000", "found 10000000"}),
      invalid("HugeFloatBatch", patched(R"({"training": {"global_batch_size": 1e30}})"), "/training/global_batch_size",
              {"expected an integer from 1 to 1000000000", "found 1e+30"}),
      invalid("Uint64Nodes", patched(R"({"cluster": {"num_nodes": 18446744073709551615}})"), "/cluster/num_nodes",
              {"expected an integer from 1 to 1000000", "found 18446744073709551615"}),
      invalid("IntegerBeyondUint64", patched(R"({"cluster": {"num_nodes": 100000000000000000000000}})"),
              "/cluster/num_nodes", {"expected an integer from 1 to 1000000", "found 9.999999999999999e+22"}),
      invalid("TooManyGpus", patched(R"({"cluster": {"num_nodes": 200000}})"), "/cluster/num_nodes",
              {"200000 nodes x 8 GPUs = 1600000 GPUs", "at most 1000000 GPUs"}),
      invalid("SeedTwoToThe63AsFloat", patched(R"({"simulation": {"seed": 9.223372036854775807e18}})"),
              "/simulation/seed", {"expected an integer from 0 to 9223372036854775807", "found 9.223372036854776e+18"}),
      invalid("DeeplyNestedArrays", nested("[", 100000), "",
              {"expected JSON nested at most 64 levels deep", "line 1, column 65"}),
      invalid("DeeplyNestedObjects", nested(R"({"a":)", 100000), "", {"at most 64 levels deep", "line 1, column 321"}),
      invalid("DeeplyNestedValue", "{\"description\": " + nested("[", 70), "",
              {"at most 64 levels deep", "line 1, column 80"})
  };
}

// Unknown keys, with a did-you-mean.
std::vector<BadCase> unknown_keys_cases() {
  return {
      invalid("MisspelledTensorParallel", patched(R"({"parallelism": {"tensor_model_paralel_size": 2}})"),
              "/parallelism/tensor_model_paralel_size",
              {R"(did you mean "tensor_model_parallel_size"?)", R"(unknown key "tensor_model_paralel_size")"}),
      invalid("MisspelledGlobalBatch", patched(R"({"training": {"global_batch_size": null, "globl_batch_size": 8}})"),
              "/training/globl_batch_size",
              {R"(did you mean "global_batch_size"?)", R"(unknown key "globl_batch_size")"}),
      invalid("MisspelledTopLevelKey", patched(R"({"model": null, "modle": "gpt2-124m"})"), "/modle",
              {R"(did you mean "model"?)", R"(unknown key "modle")"}),
      invalid("UnknownKeyNoNearMatch", patched(R"({"cluster": {"colour": "blue"}})"), "/cluster/colour",
              {"expected a known key (one of: gpu, num_nodes, gpus_per_node", R"(unknown key "colour")"}),
      invalid("MisspelledModelOverride", patched(R"({"model": {"preset": "llama3-8b", "seq_len": 4096}})"),
              "/model/seq_len", {R"(did you mean "seq_length"?)", R"(unknown key "seq_len")"}),
      invalid("MisspelledInlineGpuKey", kInlineGpuHead + R"(, "peak_flop": {})" + kInlineGpuTail,
              "/cluster/gpu/peak_flop", {R"(did you mean "peak_flops"?)", R"(unknown key "peak_flop")"}),
      invalid("KeyWithSlashIsEscaped", patched(R"({"training": {"a/b": 1}})"), "/training/a~1b",
              {R"(unknown key "a/b")"})
  };
}

// Recipe switches that published jobs set and trainsim does not model yet
// (scenario/unmodeled_keys.h): refused with the framework's meaning and what to do
// instead, not as unknown keys.
std::vector<BadCase> unmodeled_switches_cases() {
  return {
      invalid("TpCommOverlapNeedsTensorAndSequenceParallelism",
              patched(R"({"parallelism": {"tp_comm_overlap": true}})"), "/parallelism/tp_comm_overlap",
              {"tensor_model_parallel_size > 1 (here 1)", "\"sequence_parallel\": true", "as Megatron-LM"}),
      invalid("AsyncTensorParallelNeedsTensorAndSequenceParallelism",
              patched(R"({"parallelism": {"enable_async_tensor_parallel": true}})"),
              "/parallelism/enable_async_tensor_parallel", {"tensor_model_parallel_size > 1 (here 1)", "as torchtitan"}),
      invalid("TwoFormsOfTensorParallelOverlap",
              patched(R"({"parallelism": {"tp": 2, "sequence_parallel": true, "tp_comm_overlap": true,
                                          "enable_async_tensor_parallel": true}})"),
              "/parallelism/enable_async_tensor_parallel", {"two frameworks' forms of one overlap", "give one"}),
      invalid("MoeA2aOverlapNeedsExpertParallelism",
              patched(R"({"parallelism": {"overlap_moe_expert_parallel_comm": true}})"),
              "/parallelism/overlap_moe_expert_parallel_comm", {"all-to-alls", "expert_model_parallel_size > 1"}),
      invalid("SharedExpertOverlapNeedsSharedExperts",
              patched(R"({"parallelism": {"moe_shared_expert_overlap": true}})"),
              "/parallelism/moe_shared_expert_overlap",
              {"shared experts", "moe_shared_expert_intermediate_size", "remove it"}),
      invalid("Fp8ParamGatherNeedsAnFp8Recipe", patched(R"({"training": {"fp8_param_gather": true}})"),
              "/training/fp8_param_gather", {"a setting of an fp8 recipe", "precision is \"bf16\""}),
      invalid("CudaGraphsOfTheFusedStepNotModeledYet", patched(R"({"training": {"enable_cuda_graph": true}})"),
              "/training/enable_cuda_graph", {"--enable-cuda-graph", "Host dispatch", "pytorch_eager"}),
      invalid("CudaGraphOfAnEagerStepOnOneGpuOnly",
              patched(R"({"training": {"framework": "pytorch_eager", "enable_cuda_graph": true}})"),
              "/training/enable_cuda_graph", {"modeled on one GPU", "this cluster has 8", "NCCL inside the graph"}),
      invalid("CpuOffloadingIsAParallelismKey", patched(R"({"training": {"cpu_offloading": true}})"),
              "/training/cpu_offloading", {"read from \"parallelism\"", "move it there"}),
      invalid("OffloadLayersWithoutTheSwitch", patched(R"({"parallelism": {"cpu_offloading_num_layers": 4}})"),
              "/parallelism/cpu_offloading_num_layers", {"without", "Megatron-Bridge", "set cpu_offloading"}),
      invalid("OffloadWithoutLayers", patched(R"({"parallelism": {"cpu_offloading": true}})"),
              "/parallelism/cpu_offloading", {"cpu_offloading_num_layers >= 1", "first N decoder layers"}),
      invalid("OffloadEveryLayer",
              patched(R"({"parallelism": {"cpu_offloading": true, "cpu_offloading_num_layers": 12}})"),
              "/parallelism/cpu_offloading_num_layers", {"11", "found 12"}),
      invalid("OffloadWithRecomputation",
              patched(R"({"parallelism": {"cpu_offloading": true, "cpu_offloading_num_layers": 4,
                                          "recompute_granularity": "full"}})"),
              "/parallelism/recompute_granularity", {"not supported with activation recomputation"}),
      invalid("OffloadWithPipeline",
              patched(R"({"parallelism": {"cpu_offloading": true, "cpu_offloading_num_layers": 4,
                                          "pipeline_model_parallel_size": 2}})"),
              "/parallelism/pipeline_model_parallel_size", {"not supported with pipeline parallelism"}),
      invalid("OptimizerOffloadWithoutTheHostsAdamRate", patched(R"({"training": {"optimizer_cpu_offload": true},
                                                                 "parallelism": {"zero_stage": 1}})"),
              "/training/optimizer_cpu_offload", {"cluster.host.cpu_adam_rate", "no preset has a published figure"}),
      invalid("OptimizerOffloadWithoutTheDistributedOptimizer",
              patched(R"({"cluster": {"host": {"cpu_adam_rate": 1e9}}, "training": {"optimizer_cpu_offload": true}})"),
              "/parallelism/zero_stage", {"distributed optimizer", "zero_stage 1", "found zero_stage 0"}),
      invalid("OptimizerOffloadFractionAlone", patched(R"({"training": {"optimizer_offload_fraction": 0.5}})"),
              "/training/optimizer_offload_fraction", {"applies with", "optimizer_cpu_offload"}),
      invalid("OptimizerOffloadWithSgd", patched(R"({"cluster": {"host": {"cpu_adam_rate": 1e9}},
                                                  "training": {"optimizer_cpu_offload": true, "optimizer": "sgd"}})"),
              "/training/optimizer_cpu_offload", {"HybridDeviceOptimizer", "AdamW"}),
      invalid("ZeroOffloadWithGradientAccumulation",
              patched(R"({"cluster": {"host": {"cpu_adam_rate": 1e9}}, "training": {"global_batch_size": 16},
                          "parallelism": {"zero_stage": 2, "offload_optimizer": "cpu"}})"),
              "/parallelism/offload_optimizer", {"gradient accumulation (2 micro-batches per replica)"}),
      invalid("ZeroOffloadWithoutZero",
              patched(R"({"cluster": {"host": {"cpu_adam_rate": 1e9}}, "training": {"global_batch_size": 8},
                          "parallelism": {"offload_optimizer": "cpu"}})"),
              "/parallelism/zero_stage", {"ZeRO stage 1 or 2", "found zero_stage 0"}),
      invalid("ZeroOffloadToNvme", patched(R"({"parallelism": {"zero_stage": 2, "offload_optimizer": "nvme"}})"),
              "/parallelism/offload_optimizer", {"ZeRO-Infinity", "not modeled yet"}),
      invalid("OffloadWithoutAHostLink",
              patched(R"({"cluster": {"gpu": {"name": "bare", "peak_flops": {"bf16": "989TFLOP/s"},
                                                  "memory_capacity": "80GB", "memory_bandwidth": "3350GB/s"},
                                          "gpus_per_node": 1},
                          "parallelism": {"cpu_offloading": true, "cpu_offloading_num_layers": 4}})"),
              "/parallelism/cpu_offloading", {"cluster.host.device_to_host", "no platform.host"}),
      invalid("TpCommOverlapAsTextIsRefused", patched(R"({"parallelism": {"tp_comm_overlap": "true"}})"),
              "/parallelism/tp_comm_overlap", {"expected true or false", R"(found "true")"}),
  };
}

// false is the switch off, which is what trainsim simulates: accepted.
TEST(UnmodeledSwitches, FalseIsAccepted) {
  EXPECT_NO_THROW(static_cast<void>(parse_scenario_text(
      patched(R"({"parallelism": {"tp_comm_overlap": false, "enable_async_tensor_parallel": false,
                                  "cpu_offloading": false},
                  "training": {"fp8_param_gather": false, "enable_cuda_graph": false}})"),
      "ok.json")));
}

// An alias together with its full name.
std::vector<BadCase> alias_with_full_name_cases() {
  return {
      invalid("AliasAndFullName", patched(R"({"parallelism": {"tp": 1, "tensor_model_parallel_size": 1}})"),
              "/parallelism/tp",
              {R"(only one of "tensor_model_parallel_size" and "tp")", "the same setting", "found both"}),
      invalid("DataParallelAliasAndFullName", patched(R"({"parallelism": {"dp": "auto", "data_parallel_size": 8}})"),
              "/parallelism/dp", {R"(only one of "data_parallel_size" and "dp")", "found both"}),
      invalid("ModelAliasAndFullNameInOverride", patched(R"({"model": {"preset": "gpt2-124m", "untie_embeddings": true,
                                    "untie_embeddings_and_output_weights": true}})"),
              "/model/untie_embeddings_and_output_weights",
              {R"(only one of "untie_embeddings" and "untie_embeddings_and_output_weights")", "found both"})
  };
}

// The model's own consistency.
std::vector<BadCase> model_consistency_cases() {
  return {
      invalid("HeadsNotDividingHidden",
              kInlineModelHead +
                  R"({"num_layers": 2, "hidden_size": 100, "num_attention_heads": 3, "seq_length": 128,
                      "vocab_size": 1000}})",
              "/model/num_attention_heads", {"num_attention_heads (3) must divide hidden_size (100)", "kv_channels"}),
      invalid("QueryGroupsNotDividingHeads",
              kInlineModelHead +
                  R"({"num_layers": 2, "hidden_size": 4096, "num_attention_heads": 32, "num_query_groups": 5,
                      "seq_length": 128, "vocab_size": 1000}})",
              "/model/num_query_groups", {"num_query_groups (5) must divide num_attention_heads (32)"}),
      invalid("QueryGroupsAboveHeads", patched(R"({"model": {"preset": "llama3-8b", "num_query_groups": 64}})"),
              "/model/num_query_groups", {"expected an integer from 1 to 32", "found 64"}),
      invalid("SeqLengthBeyondLearnedPositions", patched(R"({"model": {"preset": "gpt2-124m", "seq_length": 2048}})"),
              "/model/seq_length",
              {"seq_length (2048) exceeds max_position_embeddings (1024)", "learned position embeddings"}),
      invalid("TopkAboveExperts", patched(R"({"model": {"preset": "mixtral-8x7b", "moe_router_topk": 9}})"),
              "/model/moe_router_topk", {"moe_router_topk (9) exceeds num_experts (8)"}),
      invalid("InlineModelMissingLayers",
              kInlineModelHead + R"({"hidden_size": 64, "num_attention_heads": 4, "seq_length": 128,
                                      "vocab_size": 1000}})",
              "/model/num_layers", {"expected an integer from 1 to 100000", "found nothing (the key is required)"}),
      invalid("UnknownNormalization", patched(R"({"model": {"preset": "llama3-8b", "normalization": "rmsnorm"}})"),
              "/model/normalization",
              {R"(one of "LayerNorm", "RMSNorm")", R"(did you mean "RMSNorm"?)", R"(found "rmsnorm")"})
  };
}

// Training.
std::vector<BadCase> training_cases() {
  return {
      invalid("Bf16LayersWithoutFp8", patched(R"({"training": {"first_last_layers_bf16": true}})"),
              "/training/first_last_layers_bf16",
              {"first_last_layers_bf16 keeps layers of an fp8 or fp4 recipe in bf16; precision is \"bf16\""}),
      invalid("Bf16LayerCountWithoutTheSwitch", patched(R"({"training": {"num_layers_at_end_in_bf16": 2}})"),
              "/training/num_layers_at_end_in_bf16",
              {"num_layers_at_end_in_bf16 applies with first_last_layers_bf16 true only"}),
      invalid("Fp8OnA100", patched(R"({"cluster": {"gpu": "A100-SXM4-80GB"}, "training": {"precision": "fp8"}})"),
              "/training/precision", {"A100-SXM4-80GB has no fp8 peak", "it has fp32, tf32, fp16, bf16"}),
      invalid(
          "UnknownPrecision", patched(R"({"training": {"precision": "bf17"}})"), "/training/precision",
          {R"(expected one of "fp32", "tf32", "fp16", "bf16", "fp8")", R"(did you mean "bf16"?)", R"(found "bf17")"}),
      invalid("DefaultPrecisionUnsupported",
              R"({"cluster": {"num_nodes": 1, "gpus_per_node": 1, "gpu": {"name": "X1", "peak_flops": {"fp32":
                  "10TFLOP/s"}, "memory_capacity": "16GiB", "memory_bandwidth": "1TB/s"}}, "model": "gpt2-124m",
                  "training": {"global_batch_size": 8}})",
              "/training/precision", {"X1 has no bf16 peak", "training.precision defaults to bf16", "it has fp32"})
  };
}

// Inline GPU specs.
std::vector<BadCase> inline_gpu_specs_cases() {
  return {
      invalid("MatmulEfficiencyAboveOne",
              kInlineGpuHead + R"(, "matmul_efficiency": [[1e10, 0.5], [1e12, 1.5]])" + kInlineGpuTail,
              "/cluster/gpu/matmul_efficiency/1",
              {"[flops, efficiency] pairs", "0 < efficiency <= 1", "found [1000000000000.0,1.5]"}),
      invalid("MatmulEfficiencyNotAnArray", kInlineGpuHead + R"(, "matmul_efficiency": "high")" + kInlineGpuTail,
              "/cluster/gpu/matmul_efficiency", {"a non-empty array of [flops, efficiency] pairs", R"(found "high")"}),
      invalid("MatmulEfficiencyEmpty", kInlineGpuHead + R"(, "matmul_efficiency": [])" + kInlineGpuTail,
              "/cluster/gpu/matmul_efficiency", {"a non-empty array", "found an empty array"}),
      invalid("GroupedMatmulEfficiencyWithoutWeightGradient",
              kInlineGpuHead +
                  R"(, "grouped_matmul_efficiency": {"forward": [[1e10, 0.4]], "data_gradient": [[1e10, 0.4]]})" +
                  kInlineGpuTail,
              "/cluster/gpu/grouped_matmul_efficiency/weight_gradient",
              {"a non-empty array of [flops, efficiency] pairs", "found nothing"}),
      invalid("GroupedMatmulEfficiencyUnknownGemm",
              kInlineGpuHead + R"(, "grouped_matmul_efficiency": {"fwd": [[1e10, 0.4]]})" + kInlineGpuTail,
              "/cluster/gpu/grouped_matmul_efficiency/fwd", {"forward"}),
      invalid("MatmulEfficiencyTriple",
              kInlineGpuHead + R"(, "matmul_efficiency": [[1e10, 0.5, 3]])" + kInlineGpuTail,
              "/cluster/gpu/matmul_efficiency/0", {"[flops, efficiency] pairs", "found [10000000000.0,0.5,3]"}),
      invalid("AttentionEfficiencyNotAList", kInlineGpuHead + R"(, "attention_efficiency": {"head_dim": 128})" +
                                                 kInlineGpuTail,
              "/cluster/gpu/attention_efficiency",
              {"a non-empty array of {head_dim, kernel, forward, backward} objects"}),
      invalid("AttentionEfficiencyTwiceOneHeadDim",
              kInlineGpuHead +
                  R"(, "attention_efficiency": [{"head_dim": 128, "forward": [[1e10, 0.5]], "backward": [[1e10, 0.4]]},
                  {"head_dim": 128, "forward": [[1e10, 0.5]], "backward": [[1e10, 0.4]]}])" +
                  kInlineGpuTail,
              "/cluster/gpu/attention_efficiency/1/head_dim",
              {"one entry per head dimensions and kernel", "found 128 again"}),
      invalid("AttentionEfficiencyValueHeadDimNotPositive",
              kInlineGpuHead +
                  R"(, "attention_efficiency": [{"head_dim": 192, "value_head_dim": 0, "forward": [[1e10, 0.5]],
                  "backward": [[1e10, 0.4]]}])" +
                  kInlineGpuTail,
              "/cluster/gpu/attention_efficiency/0/value_head_dim", {"found 0"}),
      invalid("MemoryKernelEfficiencyOfAttention",
              kInlineGpuHead + R"(, "memory_kernel_efficiency": {"moe_permute": 0.3, "attention_forward": 0.5})" +
                  kInlineGpuTail,
              "/cluster/gpu/memory_kernel_efficiency/attention_forward", {"moe_permute"}),
      invalid("MemoryKernelEfficiencyAboveOne",
              kInlineGpuHead + R"(, "memory_kernel_efficiency": {"moe_unpermute": 1.5})" + kInlineGpuTail,
              "/cluster/gpu/memory_kernel_efficiency/moe_unpermute", {"found 1.5"}),
      invalid("AttentionEfficiencyUnknownKernel",
              kInlineGpuHead +
                  R"(, "attention_efficiency": [{"head_dim": 128, "kernel": "flash3", "forward": [[1e10, 0.5]],
                  "backward": [[1e10, 0.4]]}])" +
                  kInlineGpuTail,
              "/cluster/gpu/attention_efficiency/0/kernel", {"flash2", "flash3"}),
      invalid("AttentionEfficiencyBadPoint",
              kInlineGpuHead +
                  R"(, "attention_efficiency": [{"head_dim": 64, "forward": [[1e10, 0.5]], "backward": [[0, 0.4]]}])" +
                  kInlineGpuTail,
              "/cluster/gpu/attention_efficiency/0/backward/0", {"[flops, efficiency] pairs", "found [0,0.4]"}),
      invalid("AttentionEfficiencyNoBackward",
              kInlineGpuHead + R"(, "attention_efficiency": [{"head_dim": 64, "forward": [[1e10, 0.5]]}])" +
                  kInlineGpuTail,
              "/cluster/gpu/attention_efficiency/0/backward", {"(the key is required)"}),
      invalid("InlineGpuMissingPeaks",
              R"({"cluster": {"num_nodes": 1, "gpus_per_node": 1, "gpu": {"memory_capacity": "16GiB",
                  "memory_bandwidth": "1TB/s"}}, "model": "gpt2-124m", "training": {"global_batch_size": 8}})",
              "/cluster/gpu/peak_flops", {"expected an object", "found nothing (the key is required)"}),
      invalid("InlineGpuEmptyPeaks",
              R"({"cluster": {"num_nodes": 1, "gpus_per_node": 1, "gpu": {"peak_flops": {}, "memory_capacity":
                  "16GiB", "memory_bandwidth": "1TB/s"}}, "model": "gpt2-124m", "training": {"global_batch_size": 8}})",
              "/cluster/gpu/peak_flops", {"at least one of fp32, tf32, fp16, bf16, fp8", "found none"}),
      invalid("InlineGpuWithoutPlatformNeedsFabric",
              R"({"cluster": {"num_nodes": 1, "gpu": {"peak_flops": {"bf16": "100TFLOP/s"}, "memory_capacity":
                  "16GiB", "memory_bandwidth": "1TB/s"}}, "model": "gpt2-124m", "training": {"global_batch_size": 8}})",
              "/cluster/intra_node/bandwidth", {"an intra-node bandwidth (the GPU has no platform default)"}),
      invalid("GpuOverrideBadCapacity", patched(R"({"cluster": {"gpu": {"preset": "H100-SXM5-80GB",
                                                    "memory_capacity": "80Gb"}}})"),
              "/cluster/gpu/memory_capacity", {"expected a size in bytes", R"(found "80Gb")", "did you mean"})
  };
}

// Missing required keys.
std::vector<BadCase> missing_keys_cases() {
  return {
      invalid("NoCluster", patched(R"({"cluster": null})"), "/cluster",
              {"expected an object", "found nothing (the key is required)"}),
      invalid("NoGpu", patched(R"({"cluster": {"gpu": null}})"), "/cluster/gpu",
              {"expected a GPU preset name or an object", "found nothing (the key is required)"}),
      invalid("NoNumNodes", patched(R"({"cluster": {"num_nodes": null}})"), "/cluster/num_nodes",
              {"expected an integer from 1 to 1000000", "found nothing (the key is required)"}),
      invalid("NoModel", patched(R"({"model": null})"), "/model",
              {"expected a model preset name or an object", "found nothing (the key is required)"}),
      invalid("NoTraining", patched(R"({"training": null})"), "/training",
              {"expected an object", "found nothing (the key is required)"}),
      invalid("NoGlobalBatchSize", patched(R"({"training": {"global_batch_size": null}})"),
              "/training/global_batch_size",
              {"expected an integer from 1 to 1000000000", "found nothing (the key is required)"}),
      invalid("NullRequiredValue",
              R"({"cluster": {"gpu": "H100-SXM5-80GB", "num_nodes": 1}, "model": "gpt2-124m",
                  "training": {"global_batch_size": null}})",
              "/training/global_batch_size", {"expected an integer", "found null"})
  };
}

// Parallel layouts and modes.
std::vector<BadCase> parallel_layouts_and_modes_cases() {
  return {
      invalid("ContextParallelUnfusedAttention",
              patched(R"({"training": {"attention_backend": "unfused"}, "parallelism": {"cp": 2}})"),
              "/parallelism/cp", {"ring attention on fused (flash) attention"}),
      invalid("ExpertParallelNotDividingData",
              patched(R"({"model": "mixtral-8x7b", "parallelism": {"ep": 4, "tp": 4, "sequence_parallel": true}})"),
              "/parallelism/ep", {"expert_model_parallel_size (4) must divide data_parallel_size (2)",
                                 "with expert_tensor_parallel_size 1 it may span the tensor ranks too"}),
      invalid("ExpertTensorParallelNeitherTensorNorOne",
              patched(R"({"model": "mixtral-8x7b", "parallelism": {"ep": 2, "tp": 4, "etp": 2, "sequence_parallel": true}})"),
              "/parallelism/etp",
              {"expert_tensor_parallel_size 2 with tensor_model_parallel_size 4 is not simulated", "use 4", "or 1"}),
      invalid("FoldedExpertsNotDividingTheRanks",
              patched(R"({"model": "mixtral-8x7b",
                          "parallelism": {"ep": 8, "tp": 2, "pp": 2, "etp": 1, "sequence_parallel": true}})"),
              "/parallelism/ep",
              {"expert_model_parallel_size (8) must divide tensor_model_parallel_size x context_parallel_size x "
               "data_parallel_size = 4"}),
      invalid("MoeTensorParallelWithoutSequenceParallel",
              patched(R"({"model": "mixtral-8x7b", "parallelism": {"tp": 2}})"), "/parallelism/sequence_parallel",
              {"mixture-of-experts model with tensor_model_parallel_size 2", "sequence_parallel"}),
      invalid("ZeroStage2WithPipeline", patched(R"({"parallelism": {"pp": 2, "zero_stage": 2}})"),
              "/parallelism/zero_stage",
              {"zero_stage 2 shards gradients", "pipeline_model_parallel_size 2",
               "torch.distributed.pipelining (torchtitan's FSDP + PP) is zero_stage 1"}),
      invalid("OverlapParamGatherWithoutZero", patched(R"({"parallelism": {"overlap_param_gather": true}})"),
              "/parallelism/overlap_param_gather", {"needs zero_stage 1, 2 or 3"}),
      invalid("AsyncParameterServerWithZero", patched(R"({"parallelism": {"mode": "async_ps", "zero_stage": 1}})"),
              "/parallelism/zero_stage", {R"(mode "async_ps" has none)"})
  };
}

// failures (parse_failures.cpp).
std::vector<BadCase> failures_cases() {
  return {
      invalid("FailuresNeedTrainTokens",
              patched(R"({"failures": {"gpu_mtbf": "50000h", "checkpoint_interval": "auto"}})"),
              "/training/train_tokens", {"full-run replay", "needs training.train_tokens"}),
      invalid("FailuresUnknownKey", patched(R"({"training": {"train_tokens": "1B"}, "failures": {"gpu_mbtf": "50000h"}})"),
              "/failures/gpu_mbtf", {R"(did you mean "gpu_mtbf"?)"}),
      invalid("FailuresMtbfUnit", patched(R"({"training": {"train_tokens": "1B"}, "failures": {"node_mtbf": "5000hours"}})"),
              "/failures/node_mtbf", {"expected a duration", "5000hours"}),
      invalid("FailuresRepairTimeNeeded",
              patched(R"({"training": {"train_tokens": "1B"}, "failures": {"policy": "wait_for_repair"}})"),
              "/failures/repair_time", {"wait_for_repair", "give repair_time"}),
      invalid("FailuresPolicyTypo", patched(R"({"training": {"train_tokens": "1B"}, "failures": {"policy": "hot_spares"}})"),
              "/failures/policy", {R"(did you mean "hot_spare"?)"}),
      invalid("FailuresStragglerFraction",
              patched(R"({"training": {"train_tokens": "1B"}, "failures": {"straggler_fraction": 1.5}})"),
              "/failures/straggler_fraction", {"1.5"}),
      invalid("FailuresWeibullShapeWithoutWeibull",
              patched(R"({"training": {"train_tokens": "1B"}, "failures": {"weibull_shape": 0.7}})"),
              "/failures/weibull_shape", {"needs \"distribution\": \"weibull\""}),
      invalid("CalibrationMissingFile", patched(R"({"calibration": "calibration/no-such-profile.json"})"),
              "/calibration", {"expected an existing calibration profile", "no such file: calibration/no-such-profile.json"}),
      invalid("CalibrationNotAPath", patched(R"({"calibration": 3})"), "/calibration",
              {"expected a string", "found 3"})
  };
}

// Network layouts that cannot be built.
std::vector<BadCase> unbuildable_networks_cases() {
  return {
      invalid("FatTreeTooLargeForRadix",
              patched(R"({"cluster": {"num_nodes": 2000, "inter_node": {"switch_radix": 32}},
                          "training": {"global_batch_size": 16000}})"),
              "/cluster/inter_node/switch_radix", {"3-tier fat tree of radix 32", "raise switch_radix"}),
      invalid("TorusDimsProduct",
              patched(R"({"cluster": {"num_nodes": 8, "inter_node": {"topology": "torus2d", "torus_dims": [3, 3]}},
                          "training": {"global_batch_size": 64}})"),
              "/cluster/inter_node/torus_dims", {"product is num_nodes = 8", "got 9"}),
      invalid("TorusDimsShape", patched(R"({"cluster": {"inter_node": {"torus_dims": [0, 2]}}})"),
              "/cluster/inter_node/torus_dims", {"expected an array of 2 or 3 positive integers"}),
      invalid("CustomWithoutLinks",
              patched(R"({"cluster": {"num_nodes": 2, "inter_node": {"topology": "custom"}},
                          "training": {"global_batch_size": 16}})"),
              "/cluster/inter_node/links", {"the cables of the custom topology"}),
      invalid("CustomUnknownNic",
              patched(R"({"cluster": {"num_nodes": 2, "inter_node": {"topology": "custom", "nics_per_node": 1,
                          "links": [{"a": "node0.nic0", "b": "sw"}, {"a": "node5.nic0", "b": "sw"}]}},
                          "training": {"global_batch_size": 16}})"),
              "/cluster/inter_node/links/1/a", {"\"node5.nic0\" names no NIC"}),
      invalid("CustomMiswrittenNic",
              patched(R"({"cluster": {"num_nodes": 2, "inter_node": {"topology": "custom", "nics_per_node": 1,
                          "links": [{"a": "node0.nic0", "b": "sw"}, {"a": "sw", "b": "node1.nic"}]}},
                          "training": {"global_batch_size": 16}})"),
              "/cluster/inter_node/links/1/b", {"\"node1.nic\": NICs are written node<N>.nic<R>"}),
      invalid("RailsDoNotDivideNics",
              patched(R"({"cluster": {"num_nodes": 2, "inter_node": {"topology": "rail_optimized", "rails": 3}},
                          "training": {"global_batch_size": 16}})"),
              "/cluster/inter_node/rails", {"3 rails do not divide 8 NICs per node"}),
      invalid("UnknownCollectiveAlgorithm", patched(R"({"simulation": {"collective_algorithm": "rings"}})"),
              "/simulation/collective_algorithm", {"did you mean \"ring\""})
  };
}

std::vector<BadCase> bad_cases() {
  std::vector<BadCase> all;
  for (std::vector<BadCase> (*section)() :
       {malformed_json_cases, wrong_types_cases, zero_and_negative_sizes_cases, layout_against_cluster_cases,
        presets_cases, units_cases, absurd_values_cases, unknown_keys_cases, unmodeled_switches_cases,
        alias_with_full_name_cases, model_consistency_cases, training_cases, inline_gpu_specs_cases,
        missing_keys_cases, parallel_layouts_and_modes_cases, failures_cases, unbuildable_networks_cases}) {
    std::vector<BadCase> cases = section();
    all.insert(all.end(), std::make_move_iterator(cases.begin()), std::make_move_iterator(cases.end()));
  }
  return all;
}

std::string error_name(const testing::TestParamInfo<BadCase>& info) { return info.param.name; }

class ScenarioErrors : public testing::TestWithParam<BadCase> {};

TEST_P(ScenarioErrors, RejectedWithAPreciseMessage) {
  const BadCase& c = GetParam();
  try {
    static_cast<void>(parse_scenario_text(c.text, "bad.json"));
    FAIL() << "accepted a bad scenario:\n" << c.text.substr(0, 2000);
  } catch (const ScenarioError& e) {
    const std::string message = e.what();
    SCOPED_TRACE(message);
    EXPECT_EQ(e.file(), "bad.json");
    EXPECT_EQ(e.json_path(), c.path);
    if (c.path.empty()) {
      EXPECT_THAT(message, StartsWith("bad.json: "));
    } else {
      EXPECT_THAT(message, StartsWith("bad.json: " + c.path + ": "));
    }
    for (const std::string& part : c.expected) EXPECT_THAT(message, HasSubstr(part));
    const bool not_supported = dynamic_cast<const NotSupportedYet*>(&e) != nullptr;
    if (c.kind == Kind::kNotSupported) {
      EXPECT_TRUE(not_supported) << "expected NotSupportedYet, got " << typeid(e).name();
      EXPECT_THAT(message, HasSubstr("not supported yet"));
    } else {
      EXPECT_FALSE(not_supported) << "a bad value must not be reported as a missing feature";
      EXPECT_THAT(message, Not(HasSubstr("not supported yet")));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(ScenarioBad, ScenarioErrors, testing::ValuesIn(bad_cases()), error_name);

TEST(ScenarioErrorsTable, HasDistinctNamesAndEnoughCases) {
  const std::vector<BadCase> cases = bad_cases();
  EXPECT_GE(cases.size(), 35u);
  for (std::size_t i = 0; i < cases.size(); ++i)
    for (std::size_t j = i + 1; j < cases.size(); ++j) {
      EXPECT_NE(cases[i].name, cases[j].name);
      EXPECT_NE(cases[i].text, cases[j].text) << cases[i].name << " and " << cases[j].name;
    }
}

// --- read_scenario_file: the file itself is the problem.

class ScenarioFileErrors : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(testing::TempDir()) /
           ("trainsim_scenario_errors_" + std::string(testing::UnitTest::GetInstance()->current_test_info()->name()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  static std::string error_of(const std::filesystem::path& path, const std::string& json_path = "") {
    try {
      static_cast<void>(read_scenario_file(path));
    } catch (const NotSupportedYet& e) {
      ADD_FAILURE() << "NotSupportedYet for a file problem: " << e.what();
      return e.what();
    } catch (const ScenarioError& e) {
      EXPECT_EQ(e.file(), path.string());
      EXPECT_EQ(e.json_path(), json_path);
      return e.what();
    }
    ADD_FAILURE() << "read " << path << " without an error";
    return {};
  }

  std::filesystem::path dir_;
};

TEST_F(ScenarioFileErrors, MissingFile) {
  const std::filesystem::path path = dir_ / "no_such_scenario.json";
  const std::string message = error_of(path);
  EXPECT_THAT(message, StartsWith(path.string() + ": "));
  EXPECT_THAT(message, HasSubstr("expected an existing scenario file, found no such file"));
}

TEST_F(ScenarioFileErrors, Directory) {
  const std::string message = error_of(dir_);
  EXPECT_THAT(message, StartsWith(dir_.string() + ": "));
  EXPECT_THAT(message, HasSubstr("expected a scenario file, found a directory"));
}

TEST_F(ScenarioFileErrors, EmptyFile) {
  const std::filesystem::path path = dir_ / "empty.json";
  { std::ofstream out(path); }
  const std::string message = error_of(path);
  EXPECT_THAT(message, StartsWith(path.string() + ": "));
  EXPECT_THAT(message, HasSubstr("expected a JSON object (the scenario), found an empty document"));
}

TEST_F(ScenarioFileErrors, BadContentNamesTheFile) {
  const std::filesystem::path path = dir_ / "typo.json";
  {
    std::ofstream out(path);
    out << patched(R"({"training": {"precision": "bf17"}})");
  }
  const std::string message = error_of(path, "/training/precision");
  EXPECT_THAT(message, StartsWith(path.string() + ": /training/precision: "));
  EXPECT_THAT(message, HasSubstr(R"(did you mean "bf16"?)"));
}

}  // namespace
}  // namespace trainsim::scenario
