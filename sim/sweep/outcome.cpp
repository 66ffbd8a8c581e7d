#include "sweep/outcome.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <utility>

#include "report/result_keys.h"
#include "sweep/plan_economics.h"

namespace trainsim::sweep {

namespace {

// The plan's "site": how many copies of a cluster option a site of site_power feeds
// and how many racks of rack_power each takes (docs/sweep.md, "Owned clusters").
nlohmann::json site_json(const config::SweepSpec& spec, const hw::ClusterSpec& c) {
  nlohmann::json site = nlohmann::json::object();
  std::optional<SiteFit> s;
  if (spec.site_power) {
    s = site_fit(c, *spec.site_power);
    site["site_power_w"] = *spec.site_power;
    site["facility_peak_power_w"] = s->facility_peak_w;
    site["clusters_that_fit"] = s->clusters;
    site["gpus_that_fit"] = s->gpus;
  }
  if (spec.rack_power) {
    const RackFit r = rack_fit(c, *spec.rack_power);
    site["rack_power_w"] = *spec.rack_power;
    site["server_power_w"] = r.server_w;
    site["servers_per_rack"] = r.servers_per_rack;
    site["rack_draw_w"] = r.rack_w;
    site["racks_per_cluster"] = r.racks > 0 ? nlohmann::json(r.racks) : nlohmann::json(nullptr);
    if (s) site["racks_that_fit"] = r.racks > 0 ? nlohmann::json(r.racks * s->clusters) : nlohmann::json(nullptr);
  }
  return site;
}

std::string site_text(const config::SweepSpec& spec, const std::vector<PlanRow>& rows, std::size_t name_width) {
  std::string out;
  if (spec.site_power)
    out += fmt::format("\na site of {:.1f} MW (facility side) feeds at full load, PUE included:\n",
                       *spec.site_power / 1e6);
  else
    out += "\nracks at full load:\n";
  for (const PlanRow& row : rows) {
    const config::ClusterOption& c = spec.clusters[row.cluster];
    std::string line;
    std::optional<SiteFit> s;
    if (spec.site_power) {
      s = site_fit(c.base.cluster, *spec.site_power);
      line = fmt::format("{:.2f} MW each: {} of them, {} GPUs", s->facility_peak_w / 1e6, s->clusters, s->gpus);
    }
    if (spec.rack_power) {
      const RackFit r = rack_fit(c.base.cluster, *spec.rack_power);
      if (!line.empty()) line += "; ";
      if (r.racks == 0)
        line += fmt::format("a {} of {:.1f} kW exceeds a {:.0f} kW rack",
                            c.base.cluster.nodes_per_domain > 1 ? "scale-up domain" : "server",
                            r.server_w * c.base.cluster.nodes_per_domain / 1e3, *spec.rack_power / 1e3);
      else
        line += fmt::format("{} servers ({:.1f} kW) a {:.0f} kW rack, {} racks each{}", r.servers_per_rack,
                            r.rack_w / 1e3, *spec.rack_power / 1e3, r.racks,
                            s ? fmt::format(", {} in all", r.racks * s->clusters) : "");
    }
    out += fmt::format("  {:<{}}  {}\n", c.name, name_width, line);
  }
  return out;
}

using ojson = nlohmann::ordered_json;

std::string number(double v) { return fmt::format("{}", v); }
std::string number(const std::optional<double>& v) { return v ? number(*v) : std::string(); }
using report::optional_number;

std::string duration(double s) {
  if (s < 1.0) return fmt::format("{:.1f} ms", s * 1e3);
  if (s < 120.0) return fmt::format("{:.2f} s", s);
  if (s < 7200.0) return fmt::format("{:.1f} min", s / 60.0);
  if (s < 3 * 86400.0) return fmt::format("{:.1f} h", s / 3600.0);
  return fmt::format("{:.1f} days", s / 86400.0);
}
std::string money_text(const std::optional<double>& v) {
  if (!v) return "-";
  if (*v >= 1e6) return fmt::format("${:.2f}M", *v / 1e6);
  if (*v >= 1e3) return fmt::format("${:.1f}k", *v / 1e3);
  return fmt::format("${:.0f}", *v);
}
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

const char* network_name(config::NetworkModel n) {
  return n == config::NetworkModel::kFlow ? "flow" : "analytic";
}

ojson layout_json(const Point& p, const PointResult& r) {
  return {{"network_model", network_name(p.network_model)},
          {"tensor_model_parallel_size", p.tensor},
          {"pipeline_model_parallel_size", p.pipeline},
          {"num_layers_per_virtual_pipeline_stage", r.virtual_stage > 0 ? ojson(r.virtual_stage) : ojson(nullptr)},
          {"context_parallel_size", p.context},
          {"expert_model_parallel_size", p.expert},
          {"data_parallel_size", r.data},
          {"micro_batch_size", p.micro_batch},
          {"num_microbatches", r.num_microbatches},
          {"sequence_parallel", r.sequence_parallel},
          {"zero_stage", r.zero_stage},
          {"recompute_granularity", r.recompute},
          {"pipeline_schedule", r.schedule}};
}

// A replayed point's Monte Carlo figures; null when it was not replayed, or the
// reason the replay refused it.
ojson reliability_json(const PointResult& r) {
  if (!r.replay_error.empty()) return {{"error", r.replay_error}};
  if (!r.reliability) return nullptr;
  const PointReliability& x = *r.reliability;
  return {{"trials", x.trials},
          {"time_to_train_s", {{"p50", x.time_to_train_p50_s}, {"p90", x.time_to_train_p90_s},
                               {"mean", x.time_to_train_mean_s}}},
          {"goodput", x.goodput},
          {"expected_interruptions", x.expected_interruptions},
          {"checkpoint_interval_s", x.checkpoint_interval_s},
          {"cost_usd_p50", optional_number(x.cost_p50_usd)},
          {"energy_kwh", x.energy_kwh}};
}

}  // namespace

// The result file's keys (DESIGN.md, "Result file") a sweep point has.
ojson point_json(const config::SweepSpec& spec, const Point& p, const PointResult& r) {
  using namespace report::result_key;
  const config::ClusterOption& c = spec.clusters[static_cast<std::size_t>(p.cluster)];
  ojson j;
  j["id"] = p.id;
  j["cluster"] = c.name;
  j["status"] = to_string(r.status);
  j["layout"] = layout_json(p, r);
  j[kScenario] = c.name + ": " + layout_label(p);
  j[kNumGpus] = c.base.cluster.num_gpus();
  const bool timed = r.status == Status::kEvaluated;
  if (timed)
    report::put_timing(j, report::Timing{r.iteration_time_s, r.tokens_per_s, r.model_flops_per_iteration,
                                         r.tflops_per_gpu, r.mfu, r.breakdown_s});
  else
    report::put_timing(j, std::nullopt);
  j[kMemory] = {{kPeakBytes, std::llround(r.peak_bytes_per_gpu)},
                {kCapacityBytes, std::llround(r.capacity_bytes_per_gpu)},
                {kFits, r.status == Status::kEvaluated}};
  report::put_totals(j, r.time_to_train_s, r.cost_usd, r.energy_kwh);
  if (spec.failures_modeled() && timed) j[kReliability] = reliability_json(r);
  if (timed) {
    const Bottleneck b = bottleneck(r);
    j["bottleneck"] = {{"name", b.name}, {"seconds", b.seconds}, {"share", b.share}};
    j["exposed_s"] = {{"tp_communication", r.exposed_tp_s},
                      {"dp_communication", r.exposed_dp_s},
                      {"pp_communication", r.exposed_pp_s},
                      {"recompute", r.recompute_s}};
  }
  return j;
}

bool listed(const PointResult& r) { return r.status != Status::kRejected; }

Outcome summarize(const config::SweepSpec& spec, Enumeration enumeration, std::vector<PointResult> results) {
  Outcome o;
  o.combinations = enumeration.combinations;
  o.points = std::move(enumeration.candidates);
  o.results = std::move(results);
  o.pruned = std::move(enumeration.pruned);
  for (const PointResult& r : o.results) {
    switch (r.status) {
      case Status::kEvaluated: ++o.evaluated; break;
      case Status::kDoesNotFit: ++o.does_not_fit; break;
      case Status::kRejected:
        ++o.pruned[r.reason];
        o.examples.try_emplace(r.reason, r.message);
        break;
    }
  }
  o.ranking = rank(o.results, o.points, spec);
  o.front = pareto_front(std::span<const PointResult>(o.results));
  return o;
}

namespace {

// One row of points.csv: a listed point and what it found.
struct CsvRow {
  const Point& p;
  const PointResult& r;
  const config::ClusterOption& c;
  bool timed;
};

// The columns of points.csv (docs/sweep.md, "Output"), each a name and how its
// value is written: the header and every row come from this one list.
struct Column {
  const char* name;
  std::string (*value)(const CsvRow&);
};

std::string timed_number(const CsvRow& x, double v) { return x.timed ? number(v) : std::string(); }
template <typename T>
std::string text(const T& v) {
  return fmt::format("{}", v);
}

// Names are free text: quoted, with commas turned to semicolons to keep the columns.
std::string cluster_cell(const CsvRow& x) {
  std::string name = x.c.name;
  std::replace(name.begin(), name.end(), ',', ';');
  return "\"" + name + "\"";
}

constexpr Column kPointColumns[] = {
    {"id", [](const CsvRow& x) { return text(x.p.id); }},
    {"cluster", cluster_cell},
    {"status", [](const CsvRow& x) { return text(to_string(x.r.status)); }},
    {"network_model", [](const CsvRow& x) { return text(network_name(x.p.network_model)); }},
    {"tp", [](const CsvRow& x) { return text(x.p.tensor); }},
    {"pp", [](const CsvRow& x) { return text(x.p.pipeline); }},
    {"vpp", [](const CsvRow& x) { return text(x.r.virtual_stage); }},
    {"cp", [](const CsvRow& x) { return text(x.p.context); }},
    {"ep", [](const CsvRow& x) { return text(x.p.expert); }},
    {"dp", [](const CsvRow& x) { return text(x.r.data); }},
    {"micro_batch_size", [](const CsvRow& x) { return text(x.p.micro_batch); }},
    {"num_microbatches", [](const CsvRow& x) { return text(x.r.num_microbatches); }},
    {"sequence_parallel", [](const CsvRow& x) { return text(x.r.sequence_parallel ? 1 : 0); }},
    {"zero_stage", [](const CsvRow& x) { return text(x.r.zero_stage); }},
    {"recompute_granularity", [](const CsvRow& x) { return x.r.recompute; }},
    {"pipeline_schedule", [](const CsvRow& x) { return x.r.schedule; }},
    {"num_gpus", [](const CsvRow& x) { return text(x.c.base.cluster.num_gpus()); }},
    {"iteration_time_s", [](const CsvRow& x) { return timed_number(x, x.r.iteration_time_s); }},
    {"tokens_per_s", [](const CsvRow& x) { return timed_number(x, x.r.tokens_per_s); }},
    {"model_flops_per_iteration", [](const CsvRow& x) { return timed_number(x, x.r.model_flops_per_iteration); }},
    {"tflops_per_gpu", [](const CsvRow& x) { return timed_number(x, x.r.tflops_per_gpu); }},
    {"mfu", [](const CsvRow& x) { return timed_number(x, x.r.mfu); }},
    {"compute_s", [](const CsvRow& x) { return timed_number(x, x.r.breakdown_s.compute); }},
    {"exposed_communication_s",
     [](const CsvRow& x) { return timed_number(x, x.r.breakdown_s.exposed_communication); }},
    {"pipeline_bubble_s", [](const CsvRow& x) { return timed_number(x, x.r.breakdown_s.pipeline_bubble); }},
    {"optimizer_s", [](const CsvRow& x) { return timed_number(x, x.r.breakdown_s.optimizer); }},
    {"other_s", [](const CsvRow& x) { return timed_number(x, x.r.breakdown_s.other); }},
    {"peak_bytes_per_gpu", [](const CsvRow& x) { return text(std::llround(x.r.peak_bytes_per_gpu)); }},
    {"capacity_bytes_per_gpu", [](const CsvRow& x) { return text(std::llround(x.r.capacity_bytes_per_gpu)); }},
    {"fits", [](const CsvRow& x) { return text(x.timed ? 1 : 0); }},
    {"time_to_train_s", [](const CsvRow& x) { return number(x.r.time_to_train_s); }},
    {"cost_usd", [](const CsvRow& x) { return number(x.r.cost_usd); }},
    {"energy_kwh", [](const CsvRow& x) { return number(x.r.energy_kwh); }},
    {"bottleneck", [](const CsvRow& x) { return x.timed ? bottleneck(x.r).name : std::string(); }},
};

// Under failures, the replay's figures (empty for the points not replayed).
template <double PointReliability::*Field>
std::string replayed(const CsvRow& x) {
  return x.r.reliability ? number((*x.r.reliability).*Field) : std::string();
}
constexpr Column kReplayColumns[] = {
    {"replayed", [](const CsvRow& x) { return text(x.r.reliability ? 1 : 0); }},
    {"time_to_train_p50_s", replayed<&PointReliability::time_to_train_p50_s>},
    {"time_to_train_p90_s", replayed<&PointReliability::time_to_train_p90_s>},
    {"time_to_train_mean_s", replayed<&PointReliability::time_to_train_mean_s>},
    {"goodput", replayed<&PointReliability::goodput>},
    {"expected_interruptions", replayed<&PointReliability::expected_interruptions>},
    {"cost_usd_p50", [](const CsvRow& x) { return x.r.reliability ? number(x.r.reliability->cost_p50_usd) : ""; }},
    {"replay_energy_kwh", replayed<&PointReliability::energy_kwh>},
};

}  // namespace

std::string points_csv(const config::SweepSpec& spec, const Outcome& o) {
  std::vector<Column> columns(std::begin(kPointColumns), std::end(kPointColumns));
  if (spec.failures_modeled()) columns.insert(columns.end(), std::begin(kReplayColumns), std::end(kReplayColumns));
  std::string out;
  for (std::size_t k = 0; k < columns.size(); ++k) out += (k ? "," : "") + std::string(columns[k].name);
  out += '\n';
  for (std::size_t i = 0; i < o.results.size(); ++i) {
    const PointResult& r = o.results[i];
    if (!listed(r)) continue;
    const Point& p = o.points[i];
    const CsvRow row{p, r, spec.clusters[static_cast<std::size_t>(p.cluster)], r.status == Status::kEvaluated};
    for (std::size_t k = 0; k < columns.size(); ++k) out += (k ? "," : "") + columns[k].value(row);
    out += '\n';
  }
  return out;
}

namespace {

ojson partial_json(const Outcome::Partial& p) {
  return {{"stopped_by", p.stopped_by},     {"points_done", p.points_done},   {"points_total", p.points_total},
          {"replays_done", p.replays_done}, {"replays_total", p.replays_total}};
}

std::string partial_line(const Outcome::Partial& p) {
  std::string out = fmt::format("PARTIAL: stopped by {} after {} of {} points", p.stopped_by, p.points_done,
                                p.points_total);
  if (p.replays_total > 0) out += fmt::format(" and {} of {} replays", p.replays_done, p.replays_total);
  return out + "; the same command with --resume finishes it\n\n";
}

}  // namespace

ojson sweep_json(const config::SweepSpec& spec, const Outcome& o) {
  ojson j;
  j["sweep"] = spec.name;
  j["objective"] = to_string(spec.objective);
  if (o.partial) j["partial"] = partial_json(*o.partial);
  ojson pruned = ojson::object();
  for (const auto& [reason, count] : o.pruned) pruned[reason] = count;
  ojson examples = ojson::object();
  for (const auto& [reason, message] : o.examples) examples[reason] = message;
  j["counts"] = {{"combinations", o.combinations},
                 {"evaluated", o.evaluated},
                 {"does_not_fit", o.does_not_fit},
                 {"pruned", pruned},
                 {"pruned_examples", examples}};
  ojson clusters = ojson::array();
  for (const config::ClusterOption& c : spec.clusters)
    clusters.push_back({{"name", c.name},
                        {"gpu", c.base.cluster.gpu.name},
                        {"num_nodes", c.base.cluster.num_nodes},
                        {"num_gpus", c.base.cluster.num_gpus()},
                        {"topology", c.base.cluster.inter_node.topology},
                        {"price_per_gpu_hour", optional_number(c.base.cluster.price_per_gpu_hour)}});
  j["clusters"] = clusters;
  if (spec.failures_modeled()) {
    const faults::FailureConfig& f = *spec.clusters.front().base.failures;
    std::uint64_t replayed = 0;
    for (const PointResult& r : o.results) replayed += r.reliability ? 1U : 0U;
    j["failures"] = {{"replay_top_k", spec.replay_top_k}, {"trials", f.trials}, {"seed", f.seed},
                     {"replayed", replayed}, {"ranked_by", "p50"}};
  }
  ojson ranking = ojson::array();
  for (std::size_t i : o.ranking) ranking.push_back(o.results[i].id);
  j["ranking"] = ranking;
  ojson front = ojson::array();
  for (std::size_t i : o.front) front.push_back(o.results[i].id);
  j["pareto_front"] = front;
  ojson points = ojson::array();
  for (std::size_t i = 0; i < o.results.size(); ++i)
    if (listed(o.results[i])) points.push_back(point_json(spec, o.points[i], o.results[i]));
  j["points"] = points;
  return j;
}

std::string sweep_table(const config::SweepSpec& spec, const Outcome& o, std::size_t show) {
  std::string out = fmt::format("trainsim sweep: {}\n\n", spec.name);
  if (o.partial) out += partial_line(*o.partial);
  std::uint64_t pruned = 0;
  for (const auto& [reason, count] : o.pruned) pruned += count;
  out += fmt::format("{} combinations: {} evaluated, {} do not fit in memory, {} pruned\n", o.combinations,
                     o.evaluated, o.does_not_fit, pruned);
  for (const auto& [reason, count] : o.pruned) out += fmt::format("  {:>10}  {}\n", count, reason);
  const bool failures = spec.failures_modeled();
  // Under failures, the replay's p50 and p90 beside the failure-free time-to-train.
  const auto replay_columns = [&](const PointResult& r) -> std::string {
    if (!failures) return "";
    if (!r.reliability) return fmt::format(" {:>10} {:>10}", "-", "-");
    return fmt::format(" {:>10} {:>10}", duration(r.reliability->time_to_train_p50_s),
                       duration(r.reliability->time_to_train_p90_s));
  };
  // The cluster and layout columns as wide as their longest entry among the rows shown.
  std::size_t name_width = 24;
  std::size_t layout_width = std::string_view("layout").size();
  const auto widen = [&](std::size_t i) {
    const Point& p = o.points[i];
    name_width = std::max(name_width, spec.clusters[static_cast<std::size_t>(p.cluster)].name.size());
    layout_width = std::max(layout_width, layout_label(p).size());
  };
  for (std::size_t k = 0; k < o.ranking.size() && k < show; ++k) widen(o.ranking[k]);
  for (std::size_t i : o.front) widen(i);
  const auto row = [&](std::size_t rank_no, std::size_t i) {
    const PointResult& r = o.results[i];
    const Point& p = o.points[i];
    return fmt::format("{:>4} {:>8} {:<{}} {:<{}} {:>10} {:>10}{} {:>10} {:>6.1f}% {:>6.1f} GiB  {}\n", rank_no,
                       p.id, spec.clusters[static_cast<std::size_t>(p.cluster)].name, name_width, layout_label(p),
                       layout_width, duration(r.iteration_time_s),
                       r.time_to_train_s ? duration(*r.time_to_train_s) : "-", replay_columns(r), money_text(r.cost_usd),
                       100.0 * r.mfu, r.peak_bytes_per_gpu / kGiB, bottleneck(r).name);
  };
  const std::string header = fmt::format(
      "{:>4} {:>8} {:<{}} {:<{}} {:>10} {:>10}{} {:>10} {:>7} {:>10}  {}\n", "rank", "id", "cluster", name_width,
      "layout", layout_width, "iteration", "to train", failures ? fmt::format(" {:>10} {:>10}", "p50", "p90") : "",
      "cost", "MFU", "memory", "bottleneck");
  if (failures)
    out += fmt::format(
        "\nunder failures: the best {} per cluster by failure-free {} replayed ({} trials each), ranked first by p50\n",
        spec.replay_top_k, to_string(spec.objective), spec.clusters.front().base.failures->trials);
  out += fmt::format("\nbest {} by {}:\n", std::min(show, o.ranking.size()), to_string(spec.objective));
  out += header;
  for (std::size_t k = 0; k < o.ranking.size() && k < show; ++k) out += row(k + 1, o.ranking[k]);
  if (!o.front.empty()) {
    out += "\nPareto front (time-to-train against cost):\n" + header;
    for (std::size_t i : o.front) {
      const auto pos = std::find(o.ranking.begin(), o.ranking.end(), i) - o.ranking.begin();
      out += row(static_cast<std::size_t>(pos) + 1, i);
    }
  }
  return out;
}

std::vector<PlanRow> plan(const config::SweepSpec& spec, const Outcome& o) {
  std::vector<PlanRow> rows(spec.clusters.size());
  for (std::size_t c = 0; c < rows.size(); ++c) rows[c].cluster = c;
  for (std::size_t i = 0; i < o.results.size(); ++i) {
    PlanRow& row = rows[static_cast<std::size_t>(o.points[i].cluster)];
    if (o.results[i].status == Status::kEvaluated) ++row.evaluated;
    if (o.results[i].status == Status::kDoesNotFit) ++row.does_not_fit;
  }
  for (std::size_t i : o.ranking) {
    PlanRow& row = rows[static_cast<std::size_t>(o.points[i].cluster)];
    if (!row.best) row.best = i;
  }
  return rows;
}

namespace {

// Each option's economics (none when nothing fits) and whether it is on the front.
struct PlanMoney {
  std::vector<std::optional<PlanEconomics>> options;
  std::vector<bool> front;
};
PlanMoney plan_money(const config::SweepSpec& spec, const Outcome& o, const std::vector<PlanRow>& rows) {
  PlanMoney m;
  for (const PlanRow& row : rows)
    m.options.push_back(row.best ? std::optional(plan_economics(spec.clusters[row.cluster], o.results[*row.best]))
                                 : std::nullopt);
  m.front = plan_front(m.options);
  return m;
}

ojson ownership_json(const PlanEconomics& money, const config::ClusterOption& c) {
  ojson e;
  e["owned_cost_usd"] = nullptr;
  if (money.owned) {
    const hw::Ownership& own = *c.base.cluster.ownership;
    e["owned_cost_usd"] = {{"capex", money.owned->capex_usd},
                           {"energy", money.owned->energy_usd},
                           {"total", money.owned->total_usd()},
                           {"capex_per_gpu", own.capex_per_gpu},
                           {"amortization_years", own.amortization_years},
                           {"electricity_price_per_kwh", own.electricity_price}};
  }
  e["usd_per_billion_tokens"] = optional_number(money.per_billion_tokens(money.cost()));
  e["kwh_per_billion_tokens"] = optional_number(money.per_billion_tokens(money.energy_kwh));
  return e;
}

}  // namespace

ojson plan_json(const config::SweepSpec& spec, const Outcome& o) {
  ojson j;
  j["plan"] = spec.name;
  j["objective"] = to_string(spec.objective);
  if (o.partial) j["partial"] = partial_json(*o.partial);
  // Without a "failures" section p50 and p90 are the failure-free time-to-train;
  // with one, the best point of each option is the best replayed one by p50.
  const bool failures = spec.failures_modeled();
  j["failures_modeled"] = failures;
  if (failures) {
    const faults::FailureConfig& f = *spec.clusters.front().base.failures;
    j["failures"] = {{"replay_top_k", spec.replay_top_k}, {"trials", f.trials}, {"seed", f.seed},
                     {"ranked_by", "p50"}};
  }
  ojson options = ojson::array();
  const std::vector<PlanRow> rows = plan(spec, o);
  const PlanMoney money = plan_money(spec, o, rows);
  for (const PlanRow& row : rows) {
    const config::ClusterOption& c = spec.clusters[row.cluster];
    ojson e;
    e["cluster"] = c.name;
    e["gpu"] = c.base.cluster.gpu.name;
    e["num_gpus"] = c.base.cluster.num_gpus();
    e["price_per_gpu_hour"] = optional_number(c.base.cluster.price_per_gpu_hour);
    e["evaluated"] = row.evaluated;
    e["does_not_fit"] = row.does_not_fit;
    if (!row.best) {
      e["best"] = nullptr;
      e["bottleneck"] = {{"name", "memory"}, {"seconds", nullptr}, {"share", nullptr}};
      options.push_back(e);
      continue;
    }
    const PointResult& r = o.results[*row.best];
    const Point& p = o.points[*row.best];
    const Bottleneck b = bottleneck(r);
    e["best"] = {{"id", p.id}, {"layout", layout_label(p)}, {"parallelism", layout_json(p, r)}};
    e["iteration_time_s"] = r.iteration_time_s;
    e["mfu"] = r.mfu;
    if (r.reliability) {
      const PointReliability& x = *r.reliability;
      e["time_to_train_s"] = {{"p50", x.time_to_train_p50_s}, {"p90", x.time_to_train_p90_s}};
      e["cost_usd"] = optional_number(x.cost_p50_usd);
      e["energy_kwh"] = x.energy_kwh;
      e["reliability"] = {{"failure_free_time_to_train_s", optional_number(r.time_to_train_s)},
                          {"time_to_train_mean_s", x.time_to_train_mean_s},
                          {"goodput", x.goodput},
                          {"expected_interruptions", x.expected_interruptions},
                          {"checkpoint_interval_s", x.checkpoint_interval_s},
                          {"trials", x.trials}};
    } else {
      e["time_to_train_s"] = {{"p50", optional_number(r.time_to_train_s)}, {"p90", optional_number(r.time_to_train_s)}};
      e["cost_usd"] = optional_number(r.cost_usd);
      e["energy_kwh"] = optional_number(r.energy_kwh);
      if (failures) e["reliability"] = reliability_json(r);  // the replay's refusal
    }
    e.update(ownership_json(*money.options[row.cluster], c));
    if (spec.site_power || spec.rack_power) e["site"] = site_json(spec, c.base.cluster);
    e["pareto"] = static_cast<bool>(money.front[row.cluster]);
    e["bottleneck"] = {{"name", b.name}, {"seconds", b.seconds}, {"share", b.share}};
    e["memory"] = {{"peak_bytes_per_gpu", std::llround(r.peak_bytes_per_gpu)},
                   {"capacity_bytes_per_gpu", std::llround(r.capacity_bytes_per_gpu)}};
    options.push_back(e);
  }
  j["options"] = options;
  return j;
}

// A mixed cluster option against its pools run as separate jobs, when the plan has
// each pool as an option of its own (same GPU, same GPU count): the tokens a second
// of one job over all of them, and of the pools' jobs together (docs/sweep.md).
std::string separate_jobs_text(const config::SweepSpec& spec, const Outcome& o, const std::vector<PlanRow>& rows,
                               const PlanMoney& money) {
  std::string out;
  for (const PlanRow& mixed : rows) {
    const hw::ClusterSpec& c = spec.clusters[mixed.cluster].base.cluster;
    if (!c.heterogeneous() || !mixed.best) continue;
    std::vector<const PlanRow*> parts;
    for (int k = 0; k < c.num_pools(); ++k)
      for (const PlanRow& row : rows) {
        const hw::ClusterSpec& d = spec.clusters[row.cluster].base.cluster;
        if (row.best && d.pools.empty() && d.gpu.name == c.pool_gpu(k).name &&
            d.num_gpus() == c.pool_gpus(k)) {
          parts.push_back(&row);
          break;
        }
      }
    if (parts.size() != c.pools.size()) continue;
    double together = 0.0;
    std::vector<std::string> names;
    std::vector<std::string> days;
    for (const PlanRow* row : parts) {
      together += o.results[*row->best].tokens_per_s;
      names.push_back(spec.clusters[row->cluster].name);
      const std::optional<double>& t = money.options[row->cluster]->time_to_train_s;
      days.push_back(t ? duration(*t) : "-");
    }
    const double one = o.results[*mixed.best].tokens_per_s;
    const std::optional<double>& t = money.options[mixed.cluster]->time_to_train_s;
    out += fmt::format("\n{}: {:.0f} tokens/s as one job ({} to train); its pools as separate jobs ({}) {:.0f} "
                       "tokens/s together ({:+.0f}%), each taking {} to train the same tokens alone\n",
                       spec.clusters[mixed.cluster].name, one, t ? duration(*t) : "-", fmt::join(names, ", "),
                       together, 100.0 * (together / one - 1.0), fmt::join(days, " and "));
  }
  return out;
}

std::string plan_table(const config::SweepSpec& spec, const Outcome& o) {
  const bool failures = spec.failures_modeled();
  std::string out =
      failures ? fmt::format("trainsim plan: {} (best layout per cluster by p50 {} under failures: the best {} by "
                             "failure-free {} replayed, {} trials each; cost is the p50 trial's)\n\n",
                             spec.name, to_string(spec.objective), spec.replay_top_k, to_string(spec.objective),
                             spec.clusters.front().base.failures->trials)
               : fmt::format("trainsim plan: {} (best layout per cluster by {}; failures not modeled: p90 = p50)\n\n",
                             spec.name, to_string(spec.objective));
  if (o.partial) out += partial_line(*o.partial);
  const std::vector<PlanRow> rows = plan(spec, o);
  // Columns as wide as their longest entry.
  std::size_t name_width = std::string_view("cluster").size();
  std::size_t layout_width = std::string_view("best layout").size();
  for (const PlanRow& row : rows) {
    name_width = std::max(name_width, spec.clusters[row.cluster].name.size());
    if (row.best) layout_width = std::max(layout_width, layout_label(o.points[*row.best]).size());
  }
  const PlanMoney money = plan_money(spec, o, rows);
  out += fmt::format("{:<{}}  {:<{}} {:>10} {:>10} {:>10} {:>10} {:>10} {:>6} {:>8} {:>8}  {}{}\n", "cluster",
                     name_width, "best layout", layout_width, "iteration", "p50", "p90", "cost", "owned", "MWh",
                     "$/Btok", "kWh/Btok", "bottleneck", failures ? "  goodput" : "");
  for (const PlanRow& row : rows) {
    const config::ClusterOption& c = spec.clusters[row.cluster];
    if (!row.best) {
      out += fmt::format("{:<{}}  {:<{}} (no layout fits: {} too large for memory)\n", c.name, name_width, "-",
                         layout_width, row.does_not_fit);
      continue;
    }
    const PointResult& r = o.results[*row.best];
    const Bottleneck b = bottleneck(r);
    // Time to train, energy and cost as the plan reports them (the p50 trial's under failures).
    const PlanEconomics& e = *money.options[row.cluster];
    const std::string p50 = e.time_to_train_s ? duration(*e.time_to_train_s) : "-";
    std::string p90 = p50;
    std::string goodput;
    if (r.reliability) {
      p90 = duration(r.reliability->time_to_train_p90_s);
      goodput = fmt::format("  {:.1f}%", 100.0 * r.reliability->goodput);
    } else if (failures) {
      goodput = "  not replayed";
    }
    const std::optional<double> per_btok = e.per_billion_tokens(e.cost());
    const std::optional<double> kwh_btok = e.per_billion_tokens(e.energy_kwh);
    out += fmt::format("{:<{}}  {:<{}} {:>10} {:>10} {:>10} {:>10} {:>10} {:>6} {:>8} {:>8}  {} ({:.0f}%){}{}\n",
                       c.name, name_width, layout_label(o.points[*row.best]), layout_width,
                       duration(r.iteration_time_s), p50, p90, money_text(e.cloud_usd),
                       money_text(e.owned ? std::optional(e.owned->total_usd()) : std::nullopt),
                       e.energy_kwh ? fmt::format("{:.0f}", *e.energy_kwh / 1e3) : "-", money_text(per_btok),
                       kwh_btok ? fmt::format("{:.0f}", *kwh_btok) : "-", b.name, 100.0 * b.share, goodput,
                       money.front[row.cluster] ? "  (Pareto front)" : "");
  }
  if (spec.site_power || spec.rack_power) out += site_text(spec, rows, name_width);
  out += separate_jobs_text(spec, o, rows, money);
  if (std::find(money.front.begin(), money.front.end(), true) != money.front.end())
    out += "\nPareto front: the options no other is as fast and as cheap as (cost: owned where given, else cloud); "
           "$/Btok and kWh/Btok per billion tokens\n";
  return out;
}

}  // namespace trainsim::sweep
