#include "scenario/cluster_file.h"

#include <array>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "scenario/errors.h"
#include "scenario/json_document.h"
#include "scenario/presets.h"
#include "scenario/reader.h"

namespace trainsim::scenario {

namespace {

using nlohmann::json;

constexpr std::string_view kClusterPath = "/cluster";
constexpr std::string_view kBom = "\xEF\xBB\xBF";

// Top-level keys of a scenario that a cluster object never has: a file with
// one of them is a scenario (and one without "cluster" is told so by the reader).
constexpr std::array<const char*, 7> kScenarioKeys{"cluster",    "model",    "training",   "parallelism",
                                                   "simulation", "failures", "calibration"};

bool is_scenario(const json& doc) {
  for (const char* key : kScenarioKeys)
    if (doc.contains(key)) return true;
  return false;
}

bool under_cluster(const std::string& path) { return path == kClusterPath || path.starts_with("/cluster/"); }

// A positive count at `key`, or `fallback` when there is none (the reader then
// rejects whatever stands there before it looks at the training section).
long long count_or(const json& object, const char* key, long long fallback) {
  if (!object.is_object()) return fallback;
  const auto it = object.find(key);
  if (it == object.end() || !it->is_number()) return fallback;
  const double v = it->get<double>();
  return v >= 1.0 && v <= 1e9 ? static_cast<long long>(v) : fallback;
}

// The "gpu" value as the reader resolves it: a preset name, an inline spec, or
// {"preset": NAME, ...overrides} (parse_hardware.cpp, resolve_preset).
json resolved_gpu(const json& cluster) {
  if (!cluster.is_object() || !cluster.contains("gpu")) return nullptr;
  const json& gpu = cluster.at("gpu");
  const json* name = gpu.is_string() ? &gpu : gpu.is_object() && gpu.contains("preset") ? &gpu.at("preset") : nullptr;
  if (name == nullptr) return gpu;
  if (!name->is_string()) return nullptr;
  std::optional<json> preset = find_preset(PresetKind::kHardware, name->get<std::string>());
  if (!preset) return nullptr;
  if (gpu.is_object()) {
    json overrides = gpu;
    overrides.erase("preset");
    preset->merge_patch(overrides);
  }
  return *preset;
}

// The training section a scenario around `cluster` needs to pass the reader:
// a global batch that data parallelism over every GPU divides, and a precision
// the GPU has a peak for (bf16 when it has one, the reader's default). Worked
// out from the raw JSON; where that guess is off, the cluster itself is invalid
// and the reader, which reads "cluster" before "training", says so first.
std::string training_for(const json& cluster) {
  const json gpu = resolved_gpu(cluster);
  long long per_node = 8;  // the reader's default without a platform figure
  if (gpu.is_object() && gpu.contains("platform")) per_node = count_or(gpu.at("platform"), "gpus_per_node", per_node);
  per_node = count_or(cluster, "gpus_per_node", per_node);
  const long long gpus = count_or(cluster, "num_nodes", 1) * per_node;
  std::string training = fmt::format(R"({{"global_batch_size": {})", gpus);
  if (gpu.is_object() && gpu.contains("peak_flops") && gpu.at("peak_flops").is_object()) {
    const json& peaks = gpu.at("peak_flops");
    if (!peaks.contains("bf16")) {
      for (const char* p : {"fp32", "tf32", "fp16", "fp8"}) {
        if (peaks.contains(p)) {
          training += fmt::format(R"(, "precision": "{}")", p);
          break;
        }
      }
    }
  }
  return training + "}";
}

// The smallest scenario around `cluster_text`: a preset model and the training
// section above. The cluster text comes first and unchanged, so the reader's
// line numbers are the user's.
std::string minimal_scenario(std::string_view cluster_text, const json& cluster) {
  return fmt::format(R"({{"cluster":{},"model":"gpt2-124m","training":{}}})", cluster_text, training_for(cluster));
}

// The message of `e` without the "<file>: <path>: " that ScenarioError put in front.
std::string bare_message(const ScenarioError& e) {
  std::string prefix;
  if (!e.file().empty()) prefix += e.file() + ": ";
  if (!e.json_path().empty()) prefix += e.json_path() + ": ";
  std::string message = e.what();
  if (message.starts_with(prefix)) message.erase(0, prefix.size());
  return message;
}

hw::ClusterSpec parse_cluster_only(std::string_view text, const json& cluster, const std::string& file) {
  try {
    return parse_scenario_text(minimal_scenario(text, cluster), file).cluster;
  } catch (const ScenarioError& e) {
    if (!under_cluster(e.json_path())) throw;
    // The user's keys sit at the top level of their file: "/cluster/gpu" is "/gpu" there.
    throw ScenarioError(file, e.json_path().substr(kClusterPath.size()), bare_message(e));
  }
}

hw::ClusterSpec parse_scenario_cluster(std::string_view text, const json& doc, const std::string& file) {
  try {
    return parse_scenario_text(text, file).cluster;
  } catch (const ScenarioError& e) {
    if (e.json_path().empty() || under_cluster(e.json_path()) || !doc.contains("cluster")) throw;
  }
  // The scenario's other sections are not this command's business (a layout
  // `run` does not simulate yet, say): read its cluster alone.
  const json& cluster = doc.at("cluster");
  return parse_scenario_text(minimal_scenario(cluster.dump(), cluster), file).cluster;
}

}  // namespace

hw::ClusterSpec parse_cluster_text(std::string_view text, const std::string& file) {
  if (text.starts_with(kBom)) text.remove_prefix(kBom.size());
  const json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  // Malformed JSON, or not an object: the reader's message (with its line,
  // column and hints) is the one to give.
  if (doc.is_discarded() || !doc.is_object()) return parse_scenario_text(text, file).cluster;
  return is_scenario(doc) ? parse_scenario_cluster(text, doc, file) : parse_cluster_only(text, doc, file);
}

hw::ClusterSpec read_cluster_file(const std::filesystem::path& path) {
  return parse_cluster_text(read_document_file(path, "cluster or scenario"), path.string());
}

}  // namespace trainsim::scenario
