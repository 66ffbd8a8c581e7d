#include "scenario/sweep_spec_reader.h"

#include <algorithm>
#include <span>
#include <string_view>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "scenario/errors.h"
#include "scenario/json_document.h"
#include "scenario/json_fields.h"
#include "scenario/reader.h"

namespace trainsim::scenario {

namespace {

using nlohmann::json;

constexpr long long kMaxSize = 1'000'000;
constexpr long long kMaxBatch = 1'000'000'000;

// Keys of "space" (Megatron-LM names, with the scenario file's aliases).
const std::vector<std::pair<std::string_view, std::string_view>> kAliases = {
    {"tp", "tensor_model_parallel_size"},       {"pp", "pipeline_model_parallel_size"},
    {"dp", "data_parallel_size"},               {"cp", "context_parallel_size"},
    {"ep", "expert_model_parallel_size"},       {"vpp", "num_layers_per_virtual_pipeline_stage"},
    {"mbs", "micro_batch_size"}};

// The values of one key: "auto", one value, or a non-empty list of values.
std::vector<json> values_of(const json& v) {
  if (v.is_array()) return {v.begin(), v.end()};
  return {v};
}

class SpaceReader {
 public:
  SpaceReader(const json& space, std::string file) : space_(space), file_(std::move(file)) {}

  [[noreturn]] void fail(std::string_view key, const std::string& expected, const json& found) const {
    throw ScenarioError(file_, "/space/" + std::string(key), expected, describe_found(found));
  }
  const json* find(std::string_view key) const {
    const auto it = space_.find(std::string(key));
    return it == space_.end() ? nullptr : &*it;
  }
  void check_list(std::string_view key, const json& v) const {
    if (v.is_array() && v.empty()) fail(key, "a value, a non-empty list of values or \"auto\"", v);
  }

  config::IntAxis sizes(std::string_view key, long long max, bool allow_null = false) const {
    config::IntAxis axis;
    const json* v = find(key);
    if (v == nullptr) return axis;
    check_list(key, *v);
    if (*v == "auto") {
      axis.automatic = true;
      return axis;
    }
    for (const json& x : values_of(*v)) {
      if (allow_null && x.is_null()) {
        axis.values.push_back(0);
        continue;
      }
      if (!x.is_number_integer() || x.get<long long>() < 1 || x.get<long long>() > max)
        fail(key, fmt::format("\"auto\" or integers from 1 to {}{}", max, allow_null ? " or null" : ""), x);
      axis.values.push_back(x.get<long long>());
    }
    return axis;
  }

  std::vector<int> flags(std::string_view key) const {
    const json* v = find(key);
    if (v == nullptr) return {-1};
    check_list(key, *v);
    if (*v == "auto") return {0, 1};
    std::vector<int> out;
    for (const json& x : values_of(*v)) {
      if (!x.is_boolean()) fail(key, "true, false, a list of them or \"auto\"", x);
      out.push_back(x.get<bool>() ? 1 : 0);
    }
    return out;
  }

  std::vector<int> choices(std::string_view key, std::span<const char* const> names) const {
    const json* v = find(key);
    if (v == nullptr) return {-1};
    check_list(key, *v);
    std::vector<int> out;
    if (*v == "auto") {
      for (std::size_t i = 0; i < names.size(); ++i) out.push_back(static_cast<int>(i));
      return out;
    }
    std::string allowed;
    for (const char* n : names) allowed += fmt::format("{}\"{}\"", allowed.empty() ? "" : ", ", n);
    for (const json& x : values_of(*v)) {
      const auto it = x.is_string() ? std::find(names.begin(), names.end(), x.get<std::string>()) : names.end();
      if (it == names.end()) fail(key, "one of " + allowed + ", a list of them or \"auto\"", x);
      out.push_back(static_cast<int>(it - names.begin()));
    }
    return out;
  }

  std::vector<int> zero_stages() const {
    const json* v = find("zero_stage");
    if (v == nullptr) return {-1};
    check_list("zero_stage", *v);
    if (*v == "auto") return {0, 1, 2, 3};
    std::vector<int> out;
    for (const json& x : values_of(*v)) {
      if (!x.is_number_integer() || x.get<long long>() < 0 || x.get<long long>() > 3)
        fail("zero_stage", "0, 1, 2 or 3, a list of them or \"auto\"", x);
      out.push_back(x.get<int>());
    }
    return out;
  }

 private:
  const json& space_;
  std::string file_;
};

// "space" with its aliases spelled out; unknown keys get the reader's did-you-mean.
json canonical_space(const json& doc, const std::string& file) {
  if (!doc.contains("space")) return json::object();
  const ObjectReader o(doc, file, "",
                       {"name", "description", "model", "training", "clusters", "space", "simulation",
                        "calibration", "failures", "objective", "replay_top_k", "extrapolate_microbatches",
                        "site_power", "rack_power"});
  // Checks that "space" is an object of known keys (did-you-mean for typos).
  o.object("space",
               {"tensor_model_parallel_size", "pipeline_model_parallel_size", "data_parallel_size",
                "context_parallel_size", "expert_model_parallel_size", "num_layers_per_virtual_pipeline_stage",
                "micro_batch_size", "sequence_parallel", "zero_stage", "recompute_granularity", "pipeline_schedule",
                "network_model", "overlap_grad_reduce", "overlap_param_gather"},
           kAliases);
  json out = json::object();
  for (const auto& [key, value] : doc["space"].items()) {
    std::string name = key;
    for (const auto& [alias, full] : kAliases)
      if (key == alias) name = full;
    if (out.contains(name))
      throw ScenarioError(file, "/space/" + key, fmt::format("\"{}\" is given twice (as an alias too)", name));
    out[name] = value;
  }
  return out;
}

config::Space parse_space(const json& doc, const std::string& file) {
  const json space = canonical_space(doc, file);
  const SpaceReader r(space, file);
  config::Space s;
  s.tensor = r.sizes("tensor_model_parallel_size", kMaxSize);
  s.pipeline = r.sizes("pipeline_model_parallel_size", kMaxSize);
  s.data = r.sizes("data_parallel_size", kMaxSize);
  s.context = r.sizes("context_parallel_size", kMaxSize);
  s.expert = r.sizes("expert_model_parallel_size", kMaxSize);
  s.micro_batch = r.sizes("micro_batch_size", kMaxBatch);
  s.virtual_stage = r.sizes("num_layers_per_virtual_pipeline_stage", kMaxSize, true);
  // Defaults: tensor and pipeline sizes are searched, data parallelism fills the
  // rest; every other key keeps the scenario file's default.
  if (!space.contains("tensor_model_parallel_size")) s.tensor.automatic = true;
  if (!space.contains("pipeline_model_parallel_size")) s.pipeline.automatic = true;
  if (!space.contains("data_parallel_size")) s.data.automatic = true;
  if (!space.contains("context_parallel_size")) s.context.values = {1};
  if (!space.contains("expert_model_parallel_size")) s.expert.values = {1};
  if (!space.contains("micro_batch_size")) s.micro_batch.values = {1};
  if (!space.contains("num_layers_per_virtual_pipeline_stage")) s.virtual_stage.values = {0};
  s.sequence_parallel = r.flags("sequence_parallel");
  s.zero_stage = r.zero_stages();
  s.recompute = r.choices("recompute_granularity", config::kRecomputeNames);
  s.schedule = r.choices("pipeline_schedule", config::kScheduleNames);
  s.overlap_grad_reduce = r.flags("overlap_grad_reduce");
  s.overlap_param_gather = r.flags("overlap_param_gather");
  constexpr const char* kNetworkNames[] = {"analytic", "flow"};
  const std::vector<int> nets = r.choices("network_model", kNetworkNames);
  if (nets != std::vector<int>{-1}) {
    s.network_model.clear();
    for (int n : nets) s.network_model.push_back(n == 0 ? config::NetworkModel::kAnalytic
                                                        : config::NetworkModel::kFlow);
  }
  return s;
}

// The cluster options: each entry of "clusters" is a scenario "cluster" with a
// "name"; a list of "num_nodes" makes one option per node count.
std::vector<config::ClusterOption> parse_clusters(const json& doc, const std::string& file) {
  const auto it = doc.find("clusters");
  if (it == doc.end() || !it->is_array() || it->empty())
    throw ScenarioError(file, "/clusters", "a non-empty list of clusters (scenario \"cluster\" objects with a \"name\")",
                        it == doc.end() ? "nothing" : describe_found(*it));
  json base = json::object();
  for (const char* key : {"model", "training", "simulation", "calibration", "failures"})
    if (doc.contains(key)) base[key] = doc[key];
  if (!base.contains("training") || !base["training"].is_object() || !base["training"].contains("train_tokens"))
    throw ScenarioError(file, "/training/train_tokens",
                        "the training budget in tokens (e.g. \"300B\"): a sweep ranks layouts by time-to-train",
                        "nothing");
  if (base["training"].contains("micro_batch_size"))
    throw ScenarioError(file, "/training/micro_batch_size",
                        "micro_batch_size is swept: give it in \"space\" (a value, a list or \"auto\")");
  if (base.contains("simulation") && base["simulation"].is_object() && base["simulation"].contains("network_model"))
    throw ScenarioError(file, "/simulation/network_model",
                        "network_model is swept: give it in \"space\" (\"analytic\", \"flow\", a list or \"auto\")");
  std::vector<config::ClusterOption> out;
  for (std::size_t i = 0; i < it->size(); ++i) {
    const json& c = (*it)[i];
    const std::string path = fmt::format("/clusters/{}", i);
    if (!c.is_object()) throw ScenarioError(file, path, "a cluster object", describe_found(c));
    json cluster = c;
    cluster.erase("name");
    std::vector<json> node_counts = {cluster.value("num_nodes", json(1))};
    if (cluster.contains("num_nodes") && cluster["num_nodes"].is_array()) {
      if (cluster["num_nodes"].empty())
        throw ScenarioError(file, path + "/num_nodes", "a node count or a non-empty list of them", "an empty list");
      node_counts = values_of(cluster["num_nodes"]);
    }
    for (const json& nodes : node_counts) {
      if (!cluster.contains("pools")) cluster["num_nodes"] = nodes;  // a mixed cluster's pools count their own
      json scenario_doc = base;
      scenario_doc["cluster"] = cluster;
      // The reader names errors by this document's paths; point them at the spec's.
      config::Scenario s;
      try {
        s = parse_scenario_base(scenario_doc, file);
      } catch (const ScenarioError& e) {
        if (e.json_path().rfind("/cluster", 0) == 0)
          throw ScenarioError(file, path + e.json_path().substr(8), e.what());
        throw;
      }
      std::string name = c.contains("name") && c["name"].is_string()
                             ? c["name"].get<std::string>()
                             : fmt::format("{} x {}", s.cluster.num_gpus(), s.cluster.gpu.name);
      if (node_counts.size() > 1) name += fmt::format(" ({} nodes)", s.cluster.num_nodes);
      s.name = name;
      out.push_back({std::move(name), std::move(s)});
    }
  }
  return out;
}

}  // namespace

config::SweepSpec parse_sweep_spec(std::string_view text, const std::string& file) {
  const json doc = parse_document(text, file, "sweep spec");
  const ObjectReader root(doc, file, "",
                          {"name", "description", "model", "training", "clusters", "space", "simulation",
                           "calibration", "failures", "objective", "replay_top_k", "extrapolate_microbatches",
                        "site_power", "rack_power"});
  config::SweepSpec spec;
  spec.file = file;
  spec.name = root.text("name", std::filesystem::path(file).stem().string());
  root.text("description", "");
  spec.objective = root.choice("objective", {"time_to_train", "cost"}, "time_to_train") == "cost"
                       ? config::Objective::kCost
                       : config::Objective::kTimeToTrain;
  spec.space = parse_space(doc, file);
  spec.clusters = parse_clusters(doc, file);
  if (doc.contains("replay_top_k")) {
    if (!spec.failures_modeled())
      throw ScenarioError(file, "/replay_top_k",
                          "a \"failures\" section beside it (replay_top_k is how many points per cluster option "
                          "are replayed under failures)");
    spec.replay_top_k = static_cast<int>(root.integer("replay_top_k", 1, 1000));
  }
  spec.extrapolate_microbatches = root.boolean("extrapolate_microbatches", true);
  if (root.has_non_null("site_power")) spec.site_power = root.quantity("site_power", Dimension::kPower, 1.0, 1e12);
  if (root.has_non_null("rack_power")) spec.rack_power = root.quantity("rack_power", Dimension::kPower, 1.0, 1e8);
  if (spec.objective == config::Objective::kCost)
    for (std::size_t i = 0; i < spec.clusters.size(); ++i)
      if (!spec.clusters[i].base.cluster.price_per_gpu_hour && !spec.clusters[i].base.cluster.ownership)
        throw ScenarioError(file, "/objective",
                            fmt::format("\"cost\" needs price_per_gpu_hour or ownership in every cluster; \"{}\" "
                                        "has neither",
                                        spec.clusters[i].name));
  return spec;
}

config::SweepSpec read_sweep_spec(const std::filesystem::path& path) {
  return parse_sweep_spec(read_document_file(path, "sweep spec"), path.string());
}

}  // namespace trainsim::scenario
