#include "cluster/outcome.h"

#include <algorithm>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "hardware/power.h"

namespace trainsim::cluster {

namespace {

constexpr double kJoulesPerKwh = 3.6e6;

JobFigures job_figures(const config::ClusterWorkload& w, const JobTiming& timing, const ScheduleResult& r,
                       std::size_t j) {
  const config::ClusterJob& job = w.jobs[j];
  const JobRecord& rec = r.jobs[j];
  JobFigures f;
  f.start_s = rec.segments.front().start_s;
  f.queue_s = f.start_s - job.arrival_s;
  f.completion_s = rec.end_s - job.arrival_s;
  double joules = 0.0;
  double useful = 0.0;
  for (const Segment& s : rec.segments) {
    const double held = s.end_s - s.start_s;
    f.held_s += held;
    f.train_s += s.train_s;
    f.preemptions += s.preempted ? 1 : 0;
    f.resizes += s.resized ? 1 : 0;
    f.failures += s.failed ? 1 : 0;
    useful += s.train_s * (1.0 - s.checkpoint_share);
    f.gpu_hours += static_cast<double>(s.placement.gpus()) * held / 3600.0;
    const hw::PowerDraw draw = hw::power_draw(job.scenario.cluster, s.pace.gpu_utilization);
    joules += draw.running_w * s.train_s + draw.idle_w * (held - s.train_s);
  }
  f.alone_s = static_cast<double>(job.iterations) * timing.alone(j).iteration_s;
  f.slowdown = f.completion_s / f.alone_s;
  f.iteration_slowdown = f.train_s / f.alone_s;
  f.goodput = f.held_s > 0.0 ? useful / f.held_s : 0.0;
  if (w.cluster.price_per_gpu_hour) f.cost_usd = f.gpu_hours * *w.cluster.price_per_gpu_hour;
  f.energy_kwh = w.cluster.pue * joules / kJoulesPerKwh;
  return f;
}

std::string hours(double s) { return fmt::format("{:.2f} h", s / 3600.0); }

int interruptions(const ClusterFigures& f) {
  int n = 0;
  for (const JobFigures& j : f.jobs) n += j.failures;
  return n;
}

// "256", or an elastic job's "64-256".
std::string gpus_text(const config::ClusterJob& job) {
  return job.elastic.empty() ? std::to_string(job.gpus) : fmt::format("{}-{}", job.min_gpus(), job.gpus);
}

}  // namespace

std::string_view to_string(config::SchedulerPolicy p) {
  switch (p) {
    case config::SchedulerPolicy::kFifo: return "fifo";
    case config::SchedulerPolicy::kBackfill: return "backfill";
    case config::SchedulerPolicy::kPriority: return "priority";
  }
  return "?";
}

std::string_view to_string(config::PlacementPolicy p) {
  return p == config::PlacementPolicy::kBlind ? "blind" : "topology_aware";
}

ClusterFigures cluster_figures(const config::ClusterWorkload& w, const JobTiming& timing, const ScheduleResult& r) {
  ClusterFigures c;
  c.makespan_s = r.makespan_s;
  double job_kwh = 0.0;
  for (std::size_t j = 0; j < w.jobs.size(); ++j) {
    const JobFigures f = job_figures(w, timing, r, j);
    c.mean_queue_s += f.queue_s;
    c.mean_completion_s += f.completion_s;
    c.mean_slowdown += f.slowdown;
    c.gpu_hours += f.gpu_hours;
    c.preemptions += f.preemptions;
    job_kwh += f.energy_kwh;
    c.jobs.push_back(f);
  }
  const double n = static_cast<double>(w.jobs.size());
  c.mean_queue_s /= n;
  c.mean_completion_s /= n;
  c.mean_slowdown /= n;
  if (w.cluster.price_per_gpu_hour) c.cost_usd = c.gpu_hours * *w.cluster.price_per_gpu_hour;
  // Busy and idle GPU-seconds from the usage steps.
  const double gpus = static_cast<double>(w.cluster.num_gpus());
  double busy = 0.0, idle = 0.0, idle_waiting = 0.0;
  for (std::size_t i = 0; i < r.usage.size(); ++i) {
    const double until = i + 1 < r.usage.size() ? r.usage[i + 1].time_s : r.makespan_s;
    const double dt = std::max(0.0, until - r.usage[i].time_s);
    const double free = gpus - static_cast<double>(r.usage[i].busy_gpus);
    busy += static_cast<double>(r.usage[i].busy_gpus) * dt;
    idle += free * dt;
    if (r.usage[i].waiting_jobs > 0) idle_waiting += free * dt;
  }
  // Idle before the first event counts as idle GPUs too.
  if (!r.usage.empty()) idle += gpus * r.usage.front().time_s;
  if (c.makespan_s > 0.0) {
    c.utilization = busy / (gpus * c.makespan_s);
    c.idle_while_waiting = idle_waiting / (gpus * c.makespan_s);
  }
  c.node_failures = static_cast<int>(r.outages.size());
  for (const NodeOutage& o : r.outages)
    c.node_down_hours += std::max(0.0, std::min(o.to_s, c.makespan_s) - o.from_s) / 3600.0;
  const hw::PowerDraw cluster_draw = hw::power_draw(w.cluster, 0.0);
  const double idle_w_per_gpu = cluster_draw.idle_w / gpus;
  c.energy_kwh =
      job_kwh + w.cluster.pue * (idle * idle_w_per_gpu + cluster_draw.constant_w * c.makespan_s) / kJoulesPerKwh;
  return c;
}

nlohmann::ordered_json cluster_json(const config::ClusterWorkload& w, const JobTiming& timing,
                                    const ScheduleResult& r, const ClusterFigures& f) {
  nlohmann::ordered_json j;
  j["workload"] = w.name;
  j["policy"] = to_string(w.scheduler.policy);
  j["placement"] = to_string(w.scheduler.placement);
  j["num_gpus"] = w.cluster.num_gpus();
  j["num_nodes"] = w.cluster.num_nodes;
  j["makespan_s"] = f.makespan_s;
  j["utilization"] = f.utilization;
  j["idle_while_waiting"] = f.idle_while_waiting;
  j["mean_queue_s"] = f.mean_queue_s;
  j["mean_completion_s"] = f.mean_completion_s;
  j["mean_slowdown"] = f.mean_slowdown;
  j["gpu_hours"] = f.gpu_hours;
  j["cost_usd"] = f.cost_usd ? nlohmann::ordered_json(*f.cost_usd) : nlohmann::ordered_json();
  j["energy_kwh"] = f.energy_kwh;
  j["preemptions"] = f.preemptions;
  j["node_failures"] = f.node_failures;
  j["node_down_hours"] = f.node_down_hours;
  j["simulations"] = timing.simulations();
  nlohmann::ordered_json jobs = nlohmann::ordered_json::array();
  for (std::size_t i = 0; i < w.jobs.size(); ++i) {
    const config::ClusterJob& job = w.jobs[i];
    const JobFigures& jf = f.jobs[i];
    nlohmann::ordered_json x;
    x["name"] = job.name;
    x["gpus"] = job.gpus;
    x["priority"] = job.priority;
    x["iterations"] = job.iterations;
    x["arrival_s"] = job.arrival_s;
    x["start_s"] = jf.start_s;
    x["end_s"] = r.jobs[i].end_s;
    x["queue_s"] = jf.queue_s;
    x["completion_s"] = jf.completion_s;
    x["alone_iteration_time_s"] = timing.alone(i).iteration_s;
    x["alone_s"] = jf.alone_s;
    x["slowdown"] = jf.slowdown;
    x["iteration_slowdown"] = jf.iteration_slowdown;
    x["preemptions"] = jf.preemptions;
    x["resizes"] = jf.resizes;
    x["failures"] = jf.failures;
    if (!job.elastic.empty()) x["min_gpus"] = job.min_gpus();
    if (job.layout_search) {
      nlohmann::ordered_json layouts = nlohmann::ordered_json::array();
      if (job.elastic.empty()) layouts.push_back({{"gpus", job.gpus}, {"layout", job.layout}});
      for (const config::ClusterJob::Size& size : job.elastic)
        layouts.push_back({{"gpus", size.gpus}, {"layout", size.layout}});
      x["layouts"] = std::move(layouts);
    }
    x["gpu_hours"] = jf.gpu_hours;
    x["goodput"] = jf.goodput;
    x["cost_usd"] = jf.cost_usd ? nlohmann::ordered_json(*jf.cost_usd) : nlohmann::ordered_json();
    x["energy_kwh"] = jf.energy_kwh;
    nlohmann::ordered_json segments = nlohmann::ordered_json::array();
    for (const Segment& s : r.jobs[i].segments) {
      nlohmann::ordered_json changes = nlohmann::ordered_json::array();
      for (const auto& [t, pace] : s.pace_changes) changes.push_back({t, pace.iteration_s});
      segments.push_back({{"start_s", s.start_s},
                          {"end_s", s.end_s},
                          {"nodes", s.placement.nodes},
                          {"gpus_per_node", s.placement.gpus_per_node},
                          {"iteration_time_s", s.pace.iteration_s},
                          {"iterations", s.iterations},
                          {"restart_s", s.restart_s},
                          {"train_s", s.train_s},
                          {"lost_s", s.lost_s},
                          {"checkpoint_s", s.checkpoint_s},
                          {"preempted", s.preempted},
                          {"resized", s.resized},
                          {"failed", s.failed},
                          {"checkpoint_share", s.checkpoint_share},
                          {"pace_changes", std::move(changes)}});
    }
    x["segments"] = std::move(segments);
    jobs.push_back(std::move(x));
  }
  j["jobs"] = std::move(jobs);
  nlohmann::ordered_json usage = nlohmann::ordered_json::array();
  for (const UsagePoint& u : r.usage) usage.push_back({u.time_s, u.busy_gpus, u.waiting_jobs});
  j["usage"] = std::move(usage);
  nlohmann::ordered_json outages = nlohmann::ordered_json::array();
  for (const NodeOutage& o : r.outages) outages.push_back({o.node, o.from_s, o.to_s});
  j["outages"] = std::move(outages);
  return j;
}

std::string jobs_csv(const config::ClusterWorkload& w, const JobTiming& timing, const ScheduleResult& r,
                     const ClusterFigures& f) {
  std::string out =
      "name,gpus,priority,iterations,arrival_s,start_s,end_s,queue_s,completion_s,alone_iteration_time_s,alone_s,"
      "slowdown,iteration_slowdown,preemptions,resizes,failures,gpu_hours,goodput,cost_usd,energy_kwh\n";
  for (std::size_t i = 0; i < w.jobs.size(); ++i) {
    const config::ClusterJob& job = w.jobs[i];
    const JobFigures& jf = f.jobs[i];
    out += fmt::format("\"{}\",{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", job.name, gpus_text(job),
                       job.priority, job.iterations, job.arrival_s, jf.start_s, r.jobs[i].end_s, jf.queue_s,
                       jf.completion_s, timing.alone(i).iteration_s, jf.alone_s, jf.slowdown, jf.iteration_slowdown,
                       jf.preemptions, jf.resizes, jf.failures, jf.gpu_hours, jf.goodput, jf.cost_usd ? fmt::format("{}", *jf.cost_usd) : "", jf.energy_kwh);
  }
  return out;
}

std::string usage_csv(const ScheduleResult& r) {
  std::string out = "time_s,busy_gpus,waiting_jobs\n";
  for (const UsagePoint& u : r.usage) out += fmt::format("{},{},{}\n", u.time_s, u.busy_gpus, u.waiting_jobs);
  return out;
}

std::string cluster_table(const config::ClusterWorkload& w, const JobTiming& timing, const ScheduleResult& r,
                          const ClusterFigures& f, std::size_t show) {
  std::string out = fmt::format("{}: {} jobs on {} GPUs ({} nodes), policy {}, placement {}\n", w.name, w.jobs.size(),
                                w.cluster.num_gpus(), w.cluster.num_nodes, to_string(w.scheduler.policy),
                                to_string(w.scheduler.placement));
  out += fmt::format("{:<24} {:>8} {:>4} {:>10} {:>10} {:>10} {:>10} {:>8} {:>8} {:>4} {:>4}\n", "job", "gpus",
                     "prio", "arrival", "queued", "finished", "alone", "slowdown", "iter x", "pre", "size");
  for (std::size_t i = 0; i < std::min(show, w.jobs.size()); ++i) {
    const JobFigures& jf = f.jobs[i];
    out += fmt::format("{:<24} {:>8} {:>4} {:>10} {:>10} {:>10} {:>10} {:>8.3f} {:>8.3f} {:>4} {:>4}\n",
                       w.jobs[i].name.substr(0, 24), gpus_text(w.jobs[i]), w.jobs[i].priority, hours(w.jobs[i].arrival_s),
                       hours(jf.queue_s), hours(r.jobs[i].end_s), hours(jf.alone_s), jf.slowdown,
                       jf.iteration_slowdown, jf.preemptions, jf.resizes);
  }
  if (w.jobs.size() > show) out += fmt::format("... {} more jobs (jobs.csv)\n", w.jobs.size() - show);
  for (std::size_t i = 0; i < std::min(show, w.jobs.size()); ++i) {
    const config::ClusterJob& job = w.jobs[i];
    if (!job.layout_search) continue;
    std::vector<std::string> parts;
    if (job.elastic.empty()) parts.push_back(fmt::format("{} GPUs {}", job.gpus, job.layout));
    for (const config::ClusterJob::Size& size : job.elastic)
      parts.push_back(fmt::format("{} GPUs {}", size.gpus, size.layout));
    out += fmt::format("best layouts of {}: {}\n", job.name, fmt::join(parts, "; "));
  }
  out += fmt::format("makespan {}, utilization {:.1f}%, idle while jobs waited {:.1f}%\n", hours(f.makespan_s),
                     100.0 * f.utilization, 100.0 * f.idle_while_waiting);
  out += fmt::format("mean queueing {}, mean completion {}, mean slowdown {:.3f}, preemptions {}\n",
                     hours(f.mean_queue_s), hours(f.mean_completion_s), f.mean_slowdown, f.preemptions);
  if (w.failures)
    out += fmt::format("node failures {} ({:.1f} node-hours down); jobs interrupted {} times\n", f.node_failures,
                       f.node_down_hours, interruptions(f));
  out += fmt::format("{:.0f} GPU-hours{}, {:.0f} kWh; {} job simulations\n", f.gpu_hours,
                     f.cost_usd ? fmt::format(", ${:.0f}", *f.cost_usd) : "", f.energy_kwh, timing.simulations());
  return out;
}

std::string comparison_table(const std::vector<std::pair<std::string, ClusterFigures>>& runs) {
  std::string out = fmt::format("{:<28} {:>10} {:>7} {:>10} {:>10} {:>9} {:>4} {:>5} {:>12}\n", "policy", "makespan",
                                "util", "queued", "completion", "slowdown", "pre", "fail", "energy");
  for (const auto& [name, f] : runs)
    out += fmt::format("{:<28} {:>10} {:>6.1f}% {:>10} {:>10} {:>9.3f} {:>4} {:>5} {:>8.0f} kWh\n", name,
                       hours(f.makespan_s), 100.0 * f.utilization, hours(f.mean_queue_s), hours(f.mean_completion_s),
                       f.mean_slowdown, f.preemptions, interruptions(f), f.energy_kwh);
  return out;
}

}  // namespace trainsim::cluster
