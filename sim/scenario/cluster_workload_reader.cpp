#include "scenario/cluster_workload_reader.h"

#include <cmath>
#include <fmt/format.h>
#include <map>
#include <unordered_map>

#include "faults/failure_config.h"
#include "network/topology_builders.h"
#include "scenario/errors.h"
#include "scenario/json_document.h"
#include "scenario/job_trace.h"
#include "scenario/json_fields.h"
#include "scenario/parse_sections.h"
#include "scenario/reader.h"
#include "scenario/sweep_spec_reader.h"

namespace trainsim::scenario {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr std::size_t kMaxJobs = 1'000'000;
constexpr double kMaxArrival = 100.0 * 365 * 86400;  // a century of seconds
constexpr long long kMaxIterations = 1'000'000'000'000LL;
constexpr int kMaxSizes = 1024;  // an elastic job's sizes, each read (and searched) apart

config::SchedulerConfig parse_scheduler(const ObjectReader& root) {
  config::SchedulerConfig s;
  if (!root.has("scheduler")) return s;
  const ObjectReader o = root.object("scheduler", {"policy", "placement", "preemption", "contention", "seed"});
  const std::string policy = o.choice("policy", {"fifo", "backfill", "priority"}, "fifo");
  s.policy = policy == "fifo"       ? config::SchedulerPolicy::kFifo
             : policy == "backfill" ? config::SchedulerPolicy::kBackfill
                                    : config::SchedulerPolicy::kPriority;
  s.placement = o.choice("placement", {"topology_aware", "blind"}, "topology_aware") == "blind"
                    ? config::PlacementPolicy::kBlind
                    : config::PlacementPolicy::kTopologyAware;
  s.preemption = o.boolean("preemption", true);
  if (s.preemption && o.has("preemption") && s.policy != config::SchedulerPolicy::kPriority)
    o.fail_message("preemption", fmt::format("preemption needs policy \"priority\" (it frees GPUs for a job of "
                                             "higher priority); policy is \"{}\"",
                                             policy));
  s.contention = o.boolean("contention", true);
  s.seed = static_cast<std::uint64_t>(o.integer("seed", 0, (1LL << 53), 1));
  return s;
}

// "failures": per-node MTBF (or failures per 1000 node-days, Kokolis et al.'s rate by
// default) and the repair time.
config::ClusterFailures parse_cluster_failures(const ObjectReader& root) {
  const ObjectReader o =
      root.object("failures", {"node_mtbf", "failures_per_1000_node_days", "repair_time", "seed"});
  config::ClusterFailures f;
  if (o.has("node_mtbf") && o.has("failures_per_1000_node_days"))
    o.fail_message("failures_per_1000_node_days", "give the nodes' failure rate once: node_mtbf or "
                                                  "failures_per_1000_node_days");
  const double per_1000 =
      o.number("failures_per_1000_node_days", 1e-6, 1e6, faults::kDefaultFailuresPer1000NodeDays);
  f.node_mtbf_s = o.has("node_mtbf") ? o.quantity("node_mtbf", Dimension::kTime, 1.0, 1e12)
                                     : 1000.0 / per_1000 * 86400.0;
  if (!o.has("repair_time")) o.missing("repair_time", "how long a failed node is out (a duration, e.g. \"48h\")");
  f.repair_time_s = o.quantity("repair_time", Dimension::kTime, 0.0, 1e9);
  f.seed = static_cast<std::uint64_t>(o.integer("seed", 0, (1LL << 53), 1));
  return f;
}

// What the shared-cluster simulation places on: one GPU type, nodes under leaves.
void check_cluster(const ObjectReader& root, const hw::ClusterSpec& c) {
  const ObjectReader section = root.object(
      "cluster", {"gpu", "num_nodes", "gpus_per_node", "scale_up_domain", "intra_node", "inter_node", "host",
                  "price_per_gpu_hour", "ownership", "pue", "gpu_speed_spread", "pools"});
  if (!c.pools.empty())
    section.fail_message("pools", "a shared cluster of several GPU types is not modeled yet: give one \"gpu\"");
  if (c.nodes_per_domain > 1)
    section.fail_message("scale_up_domain", "scale-up domains larger than a node (NVL72 racks) are not placed on "
                                            "yet: give scale_up_domain equal to gpus_per_node");
  const std::string& topology = c.inter_node.topology;
  if (c.num_nodes > 1 && topology != "fat_tree" && topology != "rail_optimized")
    throw ScenarioError(root.file(), section.path_of("inter_node") + "/topology",
                        "\"fat_tree\" or \"rail_optimized\" (jobs are placed under leaves; other networks are not "
                        "placed on yet)",
                        "\"" + topology + "\"");
  if (topology == "fat_tree" && c.num_nodes > 1) {
    const net::TopologyPlan plan = net::plan_topology(c);
    if (plan.tiers > 1 && plan.down_ports % c.inter_node.nics_per_node != 0)
      throw ScenarioError(root.file(), section.path_of("inter_node") + "/nics_per_node",
                          fmt::format("NICs per node that divide a leaf's {} downlinks, so each node sits under one "
                                      "leaf",
                                      plan.down_ports),
                          std::to_string(c.inter_node.nics_per_node));
  }
}

// The job's scenario document: inline (`file` stays the workload's), or read from a
// path relative to `folder` (`file` becomes that path).
json job_document(const ObjectReader& o, const fs::path& folder, std::string& file) {
  const json& raw = o.raw("scenario");
  if (raw.is_object()) return raw;
  if (!raw.is_string())
    o.fail("scenario", "a scenario object or the path of a scenario file (relative to this file's folder)", raw);
  fs::path path = raw.get<std::string>();
  if (path.is_relative()) path = folder / path;
  file = path.string();
  try {
    return parse_document(read_document_file(path, "scenario"), file, "scenario");
  } catch (const ScenarioError& e) {
    throw ScenarioError(o.file(), o.path_of("scenario"), e.what());  // the file named where it is named
  }
}

// An error's message without its "file: path: " (re-placed in the workload).
std::string bare_message(const ScenarioError& e) {
  std::string message = e.what();
  std::string prefix = e.file().empty() ? "" : e.file() + ": ";
  if (!e.json_path().empty()) prefix += e.json_path() + ": ";
  if (message.starts_with(prefix)) message.erase(0, prefix.size());
  return message;
}

// The scenario reader's errors placed in the workload: an inline scenario's at its
// JSON path under the job, a file's with the job that names it.
// `base`: without its parallelism (a layout search's base, parse_scenario_base).
config::Scenario read_job_scenario(const json& doc, const std::string& file, const ObjectReader& o,
                                   bool base = false) {
  try {
    return base ? parse_scenario_base(doc, file) : parse_scenario_document(doc, file);
  } catch (const ScenarioError& e) {
    const std::string message = bare_message(e);
    if (file == o.file()) throw ScenarioError(o.file(), o.path_of("scenario") + e.json_path(), message);
    throw ScenarioError(e.file(), e.json_path(),
                        fmt::format("{} (the scenario of job \"{}\", {}: {})", message, o.text("name"), o.file(),
                                    o.path_of("scenario")));
  }
}

// The shared cluster's section, shrunk to the job's GPUs: whole nodes, or one node
// of `gpus` GPUs for a job smaller than a node.
json job_cluster(const json& cluster, int gpus, int gpus_per_node) {
  json c = cluster;
  if (gpus < gpus_per_node) {
    c["num_nodes"] = 1;
    c["gpus_per_node"] = gpus;
  } else {
    c["num_nodes"] = gpus / gpus_per_node;
  }
  return c;
}

// The job's sizes: "gpus" a count (up to a node, or whole nodes), or {"min", "max"}
// (whole nodes): every whole-node size from min to max.
std::vector<int> job_sizes(const ObjectReader& o, const hw::ClusterSpec& cluster) {
  const int per_node = cluster.gpus_per_node;
  if (!(o.has("gpus") && o.raw("gpus").is_object())) {
    const auto gpus = static_cast<int>(o.integer("gpus", 1, cluster.num_gpus()));
    if (gpus > per_node && gpus % per_node != 0)
      o.fail("gpus", fmt::format("up to {} GPUs on one node, or whole nodes (a multiple of gpus_per_node {})",
                                 per_node, per_node),
             o.raw("gpus"));
    return {gpus};
  }
  const ObjectReader g = o.object("gpus", {"min", "max"});
  const auto whole = [&](std::string_view key) {
    const auto n = static_cast<int>(g.integer(key, per_node, cluster.num_gpus()));
    if (n % per_node != 0)
      g.fail(key, fmt::format("whole nodes: a multiple of gpus_per_node {}", per_node), g.raw(key));
    return n;
  };
  const int min = whole("min");
  const int max = whole("max");
  if (max <= min) g.fail("max", fmt::format("more GPUs than min ({})", min), g.raw("max"));
  if ((max - min) / per_node >= kMaxSizes)
    g.fail("max", fmt::format("at most {} sizes from min ({} GPUs a node)", kMaxSizes, per_node), g.raw("max"));
  std::vector<int> sizes;
  for (int n = min; n <= max; n += per_node) sizes.push_back(n);
  return sizes;
}

// An elastic job's sizes whose layout the scenario reader accepts (its data-parallel
// size follows the GPUs), the two ends included.
template <typename On>
void parse_elastic(const std::vector<int>& sizes, const On& on, config::ClusterJob& job) {
  for (int g : sizes) {
    if (g == sizes.front() || g == sizes.back()) {
      job.elastic.push_back(on(g));  // the ends must be valid: the reader's error otherwise
      continue;
    }
    try {
      job.elastic.push_back(on(g));
    } catch (const ScenarioError&) {
      // A size whose layout does not divide: the job skips it.
    }
  }
  job.gpus = job.elastic.back().gpus;
  job.scenario = job.elastic.back().scenario;
  job.scenario_key = job.elastic.back().scenario_key;
}

// "layout_space": a sweep spec over the job's sizes (one cluster option each) with the
// space given, the job's model, training and simulation; the micro-batch and network
// model it fixes join the space when the space does not sweep them. Any training budget
// ranks the layouts alike (the global batch is the job's): one of 1T tokens is given.
config::SweepSpec layout_search(const ObjectReader& o, json doc, const json& cluster_json,
                                const std::vector<int>& sizes, int per_node) {
  json space = o.raw("layout_space");
  if (!space.is_object()) o.fail("layout_space", "a sweep space (docs/sweep.md, \"space\")", space);
  json training = doc.value("training", json::object());
  if (training.contains("micro_batch_size") && !space.contains("micro_batch_size") && !space.contains("mbs"))
    space["micro_batch_size"] = training["micro_batch_size"];
  training.erase("micro_batch_size");
  training["train_tokens"] = 1e12;
  json simulation = doc.value("simulation", json::object());
  if (simulation.contains("network_model") && !space.contains("network_model"))
    space["network_model"] = simulation["network_model"];
  simulation.erase("network_model");
  json spec = {{"name", o.text("name")}, {"training", training}, {"space", space}};
  for (const char* key : {"model", "calibration", "failures"})
    if (doc.contains(key)) spec[key] = doc[key];
  if (!simulation.empty()) spec["simulation"] = simulation;
  json clusters = json::array();
  for (int g : sizes) {
    json c = job_cluster(cluster_json, g, per_node);
    c["name"] = fmt::format("{} GPUs", g);
    clusters.push_back(c);
  }
  spec["clusters"] = clusters;
  try {
    return parse_sweep_spec(spec.dump(), o.file());
  } catch (const ScenarioError& e) {
    const std::string message = bare_message(e);
    const std::string& path = e.json_path();
    if (path.rfind("/space", 0) == 0) throw ScenarioError(o.file(), o.path_of("layout_space") + path.substr(6), message);
    throw ScenarioError(o.file(), o.path_of("scenario") + path,
                        message + " (the scenario as the layout search of this job reads it)");
  }
}

config::ClusterJob parse_job(const ObjectReader& o, const json& cluster_json, const hw::ClusterSpec& cluster,
                             const fs::path& folder) {
  config::ClusterJob job;
  job.name = o.text("name");
  job.arrival_s = o.quantity("arrival", Dimension::kTime, 0.0, kMaxArrival, 0.0);
  job.priority = static_cast<int>(o.integer("priority", -1'000'000, 1'000'000, 0));
  const int per_node = cluster.gpus_per_node;
  std::string file = o.file();
  const json doc = job_document(o, folder, file);
  const auto on = [&](int gpus) {
    json placed = doc;
    placed["cluster"] = job_cluster(cluster_json, gpus, per_node);
    return config::ClusterJob::Size{gpus, read_job_scenario(placed, file, o), placed.dump(), {}};
  };
  const std::vector<int> sizes = job_sizes(o, cluster);
  if (o.has("layout_space")) {
    json base = doc;
    base.erase("parallelism");
    base["cluster"] = job_cluster(cluster_json, sizes.back(), per_node);
    job.gpus = sizes.back();
    job.scenario = read_job_scenario(base, file, o, true);
    job.layout_search = layout_search(o, base, cluster_json, sizes, per_node);
  } else if (sizes.size() > 1) {
    parse_elastic(sizes, on, job);
  } else {
    job.gpus = sizes.front();
    config::ClusterJob::Size size = on(job.gpus);
    job.scenario = std::move(size.scenario);
    job.scenario_key = std::move(size.scenario_key);
  }
  if (o.has("iterations") && o.has("train_tokens"))
    o.fail_message("train_tokens", "give the job's length once: iterations or train_tokens");
  const double tokens_per_iteration =
      static_cast<double>(job.scenario.training.global_batch_size) * static_cast<double>(job.scenario.model.seq_length);
  if (o.has("iterations")) {
    job.iterations = o.integer("iterations", 1, kMaxIterations);
  } else if (o.has("train_tokens") || job.scenario.training.train_tokens) {
    const double tokens = o.has("train_tokens") ? o.quantity("train_tokens", Dimension::kCount, 1.0, 1e18)
                                                : *job.scenario.training.train_tokens;
    job.iterations = static_cast<long long>(std::ceil(tokens / tokens_per_iteration));
  } else {
    o.missing("iterations", "the job's length: iterations, or train_tokens here or in its scenario's training");
  }
  return job;
}

// A trace's template: the scenario of its jobs up to `max_gpus` GPUs.
struct Template {
  int max_gpus = 0;
  json doc;
  std::string file;  // where its scenario was read from
  ObjectReader reader;
  std::map<int, std::pair<config::Scenario, std::string>> by_gpus;  // (scenario, key)
};

// The jobs of a trace (docs/cluster.md, "Traces"): each on the first template that
// holds its GPUs, arriving at its submit time after the window's start, as long as
// it ran (its iterations follow from its pace alone).
void parse_trace(const ObjectReader& root, const json& cluster_json, config::ClusterWorkload& w,
                 const fs::path& folder) {
  const ObjectReader t = root.object("trace", {"format", "path", "start", "days", "max_jobs", "templates"});
  t.choice("format", {"helios"});
  if (!t.has("path")) t.missing("path", "the trace file (Helios cluster_log.csv), relative to this file's folder");
  fs::path path = t.text("path");
  if (path.is_relative()) path = folder / path;
  std::vector<TraceJob> rows;
  try {
    rows = parse_helios_log(read_document_file(path, "job trace"), path.string());
  } catch (const ScenarioError& e) {
    throw ScenarioError(t.file(), t.path_of("path"), e.what());  // the trace's error, where the trace is named
  }
  std::optional<double> start;
  if (t.has("start")) {
    start = parse_trace_time(t.text("start"));
    if (!start) t.fail("start", "a time \"YYYY-MM-DD HH:MM:SS\"", t.raw("start"));
  }
  const double days = t.quantity("days", Dimension::kCount, 1e-6, 1e5, 1e5);
  const auto max_jobs = static_cast<std::size_t>(t.integer("max_jobs", 1, static_cast<long long>(kMaxJobs), kMaxJobs));
  const json& raw = t.raw("templates");
  if (!raw.is_array() || raw.empty())
    t.fail("templates", "an array of {\"max_gpus\", \"scenario\"}, smallest first", raw);
  std::vector<Template> templates;
  for (std::size_t i = 0; i < raw.size(); ++i) {
    const ObjectReader o(raw[i], t.file(), t.path_of("templates") + "/" + std::to_string(i), {"max_gpus", "scenario"});
    if (!o.has("scenario")) o.missing("scenario", "a scenario object or the path of a scenario file");
    Template tp{static_cast<int>(o.integer("max_gpus", 1, w.cluster.num_gpus(), w.cluster.num_gpus())), {}, o.file(),
                o, {}};
    tp.doc = job_document(o, folder, tp.file);
    templates.push_back(std::move(tp));
  }
  const int per_node = w.cluster.gpus_per_node;
  std::map<std::string, long long> left_out;
  const double first = start.value_or(rows.empty() ? 0.0 : rows.front().submit_s);
  std::size_t taken = 0;
  for (const TraceJob& r : rows) {
    if (r.submit_s < first || r.submit_s >= first + days * 86400.0) continue;
    if (taken == max_jobs) break;
    int gpus = r.gpus > per_node ? (r.gpus + per_node - 1) / per_node * per_node : r.gpus;
    std::string why;
    Template* tp = nullptr;
    for (Template& c : templates)
      if (c.max_gpus >= gpus) {
        tp = &c;
        break;
      }
    if (gpus == 0) why = "no GPUs (CPU jobs)";
    else if (gpus > w.cluster.num_gpus()) why = "more GPUs than the cluster";
    else if (tp == nullptr) why = "more GPUs than every template's max_gpus";
    else if (r.duration_s <= 0.0) why = "ran 0 s";
    if (!why.empty()) {
      ++left_out[why];
      continue;
    }
    auto it = tp->by_gpus.find(gpus);
    if (it == tp->by_gpus.end()) {
      json doc = tp->doc;
      doc["cluster"] = job_cluster(cluster_json, gpus, per_node);
      it = tp->by_gpus.emplace(gpus, std::pair{read_job_scenario(doc, tp->file, tp->reader), doc.dump()}).first;
    }
    config::ClusterJob job;
    job.name = "trace:" + r.id;
    job.arrival_s = r.submit_s - first;
    job.gpus = gpus;
    job.trace_duration_s = r.duration_s;
    job.scenario = it->second.first;
    job.scenario_key = it->second.second;
    w.jobs.push_back(std::move(job));
    ++taken;
  }
  for (const auto& [why, n] : left_out)
    w.notes.push_back(fmt::format("{} trace jobs left out: {}", n, why));
}

}  // namespace

config::ClusterWorkload parse_cluster_workload_text(std::string_view text, const std::string& file) {
  const json doc = parse_document(text, file, "cluster workload");
  const ObjectReader root(doc, file, "",
                          {"name", "description", "cluster", "scheduler", "failures", "jobs", "trace"});
  config::ClusterWorkload w;
  w.source_file = file;
  w.name = root.text("name", fs::path(file).stem().string());
  root.text("description", "");
  w.cluster = parse_cluster(root);
  check_cluster(root, w.cluster);
  w.scheduler = parse_scheduler(root);
  if (root.has("failures")) w.failures = parse_cluster_failures(root);
  if (!root.has("jobs") && !root.has("trace"))
    root.missing("jobs", "an array of jobs {\"name\", \"scenario\", \"gpus\", ...}, or a \"trace\"");
  const json jobs = root.has("jobs") ? root.raw("jobs") : json::array();
  if (!jobs.is_array() || (jobs.empty() && !root.has("trace")) || jobs.size() > kMaxJobs)
    root.fail("jobs", fmt::format("an array of 1 to {} jobs", kMaxJobs), jobs);
  const fs::path folder = fs::path(file).parent_path();
  std::unordered_map<std::string, std::size_t> names;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const ObjectReader o(jobs[i], file, "/jobs/" + std::to_string(i),
                         {"name", "scenario", "arrival", "gpus", "priority", "iterations", "train_tokens",
                          "layout_space"});
    if (!o.has("name")) o.missing("name", "the job's name");
    if (!o.has("scenario")) o.missing("scenario", "a scenario object or the path of a scenario file");
    const auto [it, added] = names.emplace(o.text("name"), i);
    if (!added)
      o.fail("name", fmt::format("a name no other job has (job {} has it too)", it->second), o.raw("name"));
    w.jobs.push_back(parse_job(o, doc.at("cluster"), w.cluster, folder));
  }
  if (root.has("trace")) parse_trace(root, doc.at("cluster"), w, folder);
  if (w.jobs.empty()) root.fail_message("trace", "the trace left no job in its window (see its days and start)");
  return w;
}

config::ClusterWorkload read_cluster_workload_file(const fs::path& path) {
  return parse_cluster_workload_text(read_document_file(path, "cluster workload"), path.string());
}

}  // namespace trainsim::scenario
