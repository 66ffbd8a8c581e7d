#include "faults/checkpoint.h"

#include <cmath>
#include <limits>
#include <stdexcept>

namespace trainsim::faults {

std::string_view to_string(Component c) {
  switch (c) {
    case Component::kGpu: return "gpu";
    case Component::kNode: return "node";
    case Component::kLink: return "link";
    case Component::kSwitch: return "switch";
  }
  return "?";
}

CheckpointSize checkpoint_size(const CheckpointInputs& in) {
  CheckpointSize s;
  s.total_bytes = in.parameters * (in.weight_bytes + in.optimizer_bytes);
  const double model_split = static_cast<double>(in.tensor) * in.pipeline;
  const double d = static_cast<double>(in.data);
  const double weights = in.parameters * in.weight_bytes / (model_split * (in.zero_stage >= 3 ? d : 1.0));
  const double states = in.parameters * in.optimizer_bytes / (model_split * (in.zero_stage >= 1 ? d : 1.0));
  s.per_gpu_bytes = weights + states;
  return s;
}

CheckpointCost checkpoint_cost(const CheckpointSize& size, const FailureConfig& f) {
  CheckpointCost c;
  const double write = size.total_bytes / f.checkpoint_write_bandwidth;
  if (f.checkpoint_mode == CheckpointMode::kBlocking) {
    c.blocking_s = write;
  } else {
    c.blocking_s = size.per_gpu_bytes / f.host_copy_bandwidth;
    c.background_write_s = write;
  }
  c.reload_s = size.total_bytes / f.checkpoint_read_bandwidth.value_or(f.checkpoint_write_bandwidth);
  return c;
}

double young_interval(double d, double m) { return std::sqrt(2.0 * d * m); }

double daly_interval(double d, double m) {
  if (!(d >= 0.0) || !(m > 0.0)) throw std::invalid_argument("daly_interval: need d >= 0 and M > 0");
  if (d >= 2.0 * m) return m;
  const double r = d / (2.0 * m);
  return std::sqrt(2.0 * d * m) * (1.0 + std::sqrt(r) / 3.0 + d / (18.0 * m)) - d;
}

std::vector<JobProcess> job_processes(const FailureConfig& f, long long gpus, long long nodes, long long links,
                                      long long switches) {
  std::vector<JobProcess> out;
  auto add = [&](Component c, const std::optional<double>& mtbf, long long count) {
    if (mtbf && count > 0) out.push_back({c, *mtbf / static_cast<double>(count)});
  };
  add(Component::kGpu, f.gpu_mtbf_s, gpus);
  add(Component::kLink, f.link_mtbf_s, links);
  add(Component::kSwitch, f.switch_mtbf_s, switches);
  std::optional<double> node = f.node_mtbf_s;
  const bool any_given = f.gpu_mtbf_s || f.node_mtbf_s || f.link_mtbf_s || f.switch_mtbf_s;
  const std::optional<double> rate =
      f.failures_per_1000_node_days ? f.failures_per_1000_node_days
                                    : (any_given ? std::nullopt : std::optional<double>(kDefaultFailuresPer1000NodeDays));
  if (rate && *rate > 0.0) {
    // A rate of r failures per 1000 node-days is a node MTBF of 1000 / r days;
    // with node_mtbf also given the two rates add.
    const double mtbf = 1000.0 / *rate * 86400.0;
    node = node ? 1.0 / (1.0 / *node + 1.0 / mtbf) : mtbf;
  }
  add(Component::kNode, node, nodes);
  return out;
}

double mean_time_to_interrupt(const std::vector<JobProcess>& processes) {
  double rate = 0.0;
  for (const JobProcess& p : processes) rate += 1.0 / p.mean_s;
  return rate > 0.0 ? 1.0 / rate : std::numeric_limits<double>::infinity();
}

}  // namespace trainsim::faults
