// Parses "failures" (docs/scenario.md, "failures"; the model in docs/reliability.md).
#include <cstdint>
#include <string_view>

#include <fmt/format.h>

#include "scenario/errors.h"
#include "scenario/parse_sections.h"

namespace trainsim::scenario {

namespace {
constexpr double kMaxDuration = 1e12;  // s, far beyond any run
}  // namespace

std::optional<faults::FailureConfig> parse_failures(const ObjectReader& root, const workload::TrainingConfig& training,
                                                   hw::ClusterSpec& cluster) {
  if (!root.has("failures") || root.raw("failures").is_null()) return std::nullopt;
  const ObjectReader o = root.object(
      "failures",
      {"gpu_mtbf", "node_mtbf", "link_mtbf", "switch_mtbf", "failures_per_1000_node_days", "distribution",
       "weibull_shape", "straggler_fraction", "straggler_slowdown", "degraded_links_per_1000_node_days",
       "degraded_link_duration", "degraded_link_bandwidth", "maintenance_interval", "maintenance_duration",
       "detection_time", "restart_overhead", "policy", "hot_spares", "repair_time", "checkpoint_interval",
       "checkpoint_write_bandwidth", "checkpoint_read_bandwidth", "checkpoint_mode", "host_copy_bandwidth",
       "checkpoint_size", "gpu_idle_power", "node_overhead_power", "pue", "seed", "trials", "threads"});
  faults::FailureConfig f;
  auto duration = [&](std::string_view key, double min) -> std::optional<double> {
    if (!o.has_non_null(key)) return std::nullopt;
    return o.quantity(key, Dimension::kTime, min, kMaxDuration);
  };
  f.gpu_mtbf_s = duration("gpu_mtbf", 1.0);
  f.node_mtbf_s = duration("node_mtbf", 1.0);
  f.link_mtbf_s = duration("link_mtbf", 1.0);
  f.switch_mtbf_s = duration("switch_mtbf", 1.0);
  if (o.has_non_null("failures_per_1000_node_days"))
    f.failures_per_1000_node_days = o.number("failures_per_1000_node_days", 0.0, 1e6);
  f.distribution = o.choice("distribution", {"exponential", "weibull"}, "exponential") == "weibull"
                       ? faults::Distribution::kWeibull
                       : faults::Distribution::kExponential;
  if (o.has_non_null("weibull_shape")) {
    if (f.distribution != faults::Distribution::kWeibull)
      o.fail_message("weibull_shape", "weibull_shape needs \"distribution\": \"weibull\"");
    f.weibull_shape = o.number("weibull_shape", 0.1, 10.0);
  }

  f.straggler_fraction = o.number("straggler_fraction", 0.0, 1.0, 0.0);
  f.straggler_slowdown = o.number("straggler_slowdown", 0.0, 100.0, faults::kDefaultStragglerSlowdown);
  f.degraded_links_per_1000_node_days = o.number("degraded_links_per_1000_node_days", 0.0, 1e6, 0.0);
  f.degraded_link_duration_s = duration("degraded_link_duration", 1e-3).value_or(f.degraded_link_duration_s);
  f.degraded_link_bandwidth = o.number("degraded_link_bandwidth", 1e-3, 1.0, f.degraded_link_bandwidth);
  f.maintenance_interval_s = duration("maintenance_interval", 60.0);
  f.maintenance_duration_s = duration("maintenance_duration", 0.0).value_or(0.0);
  if (f.maintenance_interval_s && !o.has_non_null("maintenance_duration"))
    o.fail_message("maintenance_duration", "maintenance_interval needs maintenance_duration (a duration, e.g. \"4h\")");
  if (!f.maintenance_interval_s && o.has_non_null("maintenance_duration"))
    o.fail_message("maintenance_duration", "maintenance_duration needs maintenance_interval");
  if (f.maintenance_interval_s && f.maintenance_duration_s >= *f.maintenance_interval_s)
    o.fail_message("maintenance_duration",
                   fmt::format("maintenance_duration ({} s) must be shorter than maintenance_interval ({} s)",
                               f.maintenance_duration_s, *f.maintenance_interval_s));

  f.detection_time_s = duration("detection_time", 0.0).value_or(f.detection_time_s);
  f.restart_overhead_s = duration("restart_overhead", 0.0).value_or(f.restart_overhead_s);
  const std::string policy = o.choice("policy", {"hot_spare", "elastic_shrink", "wait_for_repair"}, "hot_spare");
  if (policy == "elastic_shrink" && cluster.heterogeneous())
    o.fail_message("policy", "\"elastic_shrink\" on a mixed cluster (cluster.pools) is not modeled yet (which "
                             "pool loses the replica, and the batch shares after it): use \"hot_spare\" or "
                             "\"wait_for_repair\"");
  f.policy = policy == "elastic_shrink"    ? faults::RecoveryPolicy::kElasticShrink
             : policy == "wait_for_repair" ? faults::RecoveryPolicy::kWaitForRepair
                                           : faults::RecoveryPolicy::kHotSpare;
  if (o.has_non_null("hot_spares")) {
    if (f.policy != faults::RecoveryPolicy::kHotSpare)
      o.fail_message("hot_spares", "hot_spares needs \"policy\": \"hot_spare\"");
    f.hot_spares = o.integer("hot_spares", 0, 1'000'000);
  }
  f.repair_time_s = duration("repair_time", 0.0);
  const bool needs_repair = f.policy != faults::RecoveryPolicy::kHotSpare || f.hot_spares.has_value();
  if (needs_repair && !f.repair_time_s)
    o.fail_message("repair_time",
                   fmt::format("policy \"{}\"{} waits for repairs: give repair_time (a duration, e.g. \"48h\"); "
                               "it has no default",
                               policy, f.hot_spares ? " with a finite hot_spares pool" : ""));

  if (o.has_non_null("checkpoint_interval") && !(o.raw("checkpoint_interval").is_string() &&
                                                 o.raw("checkpoint_interval") == "auto"))
    f.checkpoint_interval_s = o.quantity("checkpoint_interval", Dimension::kTime, 1e-3, kMaxDuration);
  f.checkpoint_write_bandwidth =
      o.quantity("checkpoint_write_bandwidth", Dimension::kBandwidth, 1.0, 1e18, f.checkpoint_write_bandwidth);
  if (o.has_non_null("checkpoint_read_bandwidth"))
    f.checkpoint_read_bandwidth = o.quantity("checkpoint_read_bandwidth", Dimension::kBandwidth, 1.0, 1e18);
  f.checkpoint_mode = o.choice("checkpoint_mode", {"blocking", "async"}, "blocking") == "async"
                          ? faults::CheckpointMode::kAsync
                          : faults::CheckpointMode::kBlocking;
  if (o.has_non_null("host_copy_bandwidth")) {
    f.host_copy_bandwidth = o.quantity("host_copy_bandwidth", Dimension::kBandwidth, 1.0, 1e18);
    f.host_copy_source = faults::FailureConfig::Source::kScenario;
  } else if (cluster.host.device_to_host > 0.0) {
    f.host_copy_bandwidth = cluster.host.device_to_host_per_gpu();
    f.host_copy_source = faults::FailureConfig::Source::kPlatform;
  }
  if (o.has_non_null("checkpoint_size"))
    f.checkpoint_size_bytes = o.quantity("checkpoint_size", Dimension::kBytes, 1.0, 1e18);

  // The power keys' place before the cluster had them: they set the cluster's
  // figures, which every energy uses (hardware/power.h), with or without failures.
  for (std::string_view key : {"gpu_idle_power", "node_overhead_power"})
    if (o.has_non_null(key) && cluster.heterogeneous())
      o.fail_message(key, fmt::format("{} sets one GPU's figure; a mixed cluster's pools each have their own: give "
                                      "the pool's GPU as an object with idle_power or node_overhead_power",
                                      key));
  if (o.has_non_null("gpu_idle_power"))
    cluster.gpu.idle_watts = o.quantity("gpu_idle_power", Dimension::kPower, 0.0, 1e5);
  if (o.has_non_null("node_overhead_power"))
    cluster.gpu.node_overhead_watts = o.quantity("node_overhead_power", Dimension::kPower, 0.0, 1e7);
  if (o.has_non_null("pue")) {
    const nlohmann::json& c = root.raw("cluster");
    if (c.is_object() && c.contains("pue") && !c.at("pue").is_null())
      o.fail_message("pue", "the facility's PUE is given twice: keep cluster.pue and remove failures.pue");
    cluster.pue = o.number("pue", 1.0, 10.0);
  }

  f.seed = static_cast<std::uint64_t>(o.integer("seed", 0, INT64_MAX, 1));
  f.trials = static_cast<int>(o.integer("trials", 1, 1'000'000, 100));
  f.threads = static_cast<int>(o.integer("threads", 0, 4096, 0));

  if (!training.train_tokens)
    throw ScenarioError(root.file(), "/training/train_tokens",
                        "the full-run replay of \"failures\" needs training.train_tokens (tokens to train on)");
  return f;
}

}  // namespace trainsim::scenario
