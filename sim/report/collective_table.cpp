#include "report/collective_table.h"

#include <array>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "core/simulator.h"
#include "network/collective_engine.h"
#include "network/topology_builders.h"

namespace trainsim::report {

namespace {

using net::CollectiveKind;

constexpr double kGB = 1e9;  // nccl-tests' GB/s

// nccl-tests splits the buffer of these among the ranks (a count per rank or peer).
bool split_among_ranks(CollectiveKind k) { return net::descriptor(k).split_among_ranks; }

bool reduces(CollectiveKind k) { return net::descriptor(k).reduces; }

bool rooted(CollectiveKind k) { return net::descriptor(k).rooted; }

// The group's global ranks as the planner lays out a CommGroup without members.
std::vector<long long> group_ranks(const net::CommGroup& g, int gpus_per_node) {
  std::vector<long long> ranks;
  for (int j = 0; j < g.nodes; ++j)
    for (int i = 0; i < g.ranks_per_node; ++i) ranks.push_back(static_cast<long long>(j) * gpus_per_node + i);
  return ranks;
}

// The collective alone on a fresh simulator, through the flow model.
core::Time flow_time(net::CollectivePlanner& planner, const net::Collective& c) {
  core::Simulator sim;
  net::FlowBackend backend(planner);
  bool done = false;
  backend.start(c, sim, [&done] { done = true; });
  sim.run();
  if (!done) throw std::logic_error("flow model: the collective did not complete");
  return sim.now();
}

// nccl-tests' time column: fewer decimals as the number grows, same width.
std::string time_text(double us) {
  if (us >= 10000.0) return fmt::format("{:9.0f}", us);
  if (us >= 100.0) return fmt::format("{:9.1f}", us);
  return fmt::format("{:9.2f}", us);
}

std::string bus_factor_text(CollectiveKind k) { return std::string(net::descriptor(k).bus_text); }

}  // namespace

net::CommGroup collective_group(const hw::ClusterSpec& cluster, int gpus) {
  const long long total = cluster.num_gpus();
  const long long n = gpus == 0 ? total : gpus;
  if (n < 2)
    throw std::invalid_argument(
        gpus == 0 ? fmt::format("the cluster has {} GPU; a collective needs a group of at least 2", total)
                  : fmt::format("a group of {} GPUs: a collective needs at least 2", gpus));
  if (n > total)
    throw std::invalid_argument(fmt::format("a group of {} GPUs on a cluster of {} ({} nodes x {} GPUs)", n, total,
                                            cluster.num_nodes, cluster.gpus_per_node));
  const int size = static_cast<int>(n);
  const int domain = cluster.gpus_per_domain();
  if (size <= domain) return net::CommGroup{size, 1, size, nullptr};
  if (size % domain != 0)
    throw std::invalid_argument(fmt::format("a group of {} GPUs spans {}, so it takes whole ones: a multiple of "
                                            "{} GPUs",
                                            size, cluster.nodes_per_domain == 1 ? "nodes" : "scale-up domains",
                                            domain));
  return net::CommGroup{size, size / domain, domain, nullptr};
}

std::vector<std::uint64_t> collective_sizes(net::CollectiveKind kind, int ranks, std::uint64_t min_bytes,
                                            std::uint64_t max_bytes, std::uint64_t factor) {
  if (ranks < 1) throw std::invalid_argument("collective sizes: no ranks");
  if (min_bytes == 0) throw std::invalid_argument("minimum size (-b): at least 1 byte");
  if (max_bytes < min_bytes)
    throw std::invalid_argument(fmt::format("maximum size (-e) {} is below the minimum (-b) {}", max_bytes, min_bytes));
  if (factor < 2) throw std::invalid_argument(fmt::format("size factor (-f): at least 2, not {}", factor));
  const std::uint64_t unit =
      split_among_ranks(kind) ? kElementBytes * static_cast<std::uint64_t>(ranks) : kElementBytes;
  std::vector<std::uint64_t> sizes;
  for (std::uint64_t size = min_bytes;; size *= factor) {
    if (const std::uint64_t rounded = size / unit * unit; rounded > 0) sizes.push_back(rounded);
    if (size > max_bytes / factor) break;  // the next size would pass max (or overflow)
  }
  return sizes;
}

CollectiveTable collective_table(const hw::ClusterSpec& cluster, const CollectiveTableOptions& options) {
  CollectiveTable table;
  table.group = collective_group(cluster, options.gpus);
  const int n = table.group.size;
  const std::vector<std::uint64_t> sizes =
      collective_sizes(options.kind, n, options.min_bytes, options.max_bytes, options.factor);

  const net::Topology topology = net::build_topology(cluster);
  table.topology = topology.description;
  if (options.algorithm != net::Algorithm::kAuto) {
    // The planner would quietly choose another; a table under a forced name must not.
    const std::vector<long long> ranks = group_ranks(table.group, cluster.gpus_per_domain());
    if (auto why = net::unavailable(options.kind, options.algorithm, ranks, topology))
      throw std::invalid_argument(*why);
  }
  net::CollectivePlanner planner(topology, options.algorithm, cluster.inter_node.multipath,
                                 net::routing_of(cluster.inter_node.routing));
  const bool flow = options.model == CollectiveNetworkModel::kFlow;
  table.network_model = flow ? std::string(net::FlowBackend(planner).name())
                             : std::string(net::ScheduleBackend(planner).name());

  const double factor = net::bus_factor(options.kind, n);
  const std::uint64_t per_count = split_among_ranks(options.kind) ? static_cast<std::uint64_t>(n) : 1;
  double busbw_sum = 0.0;
  for (std::uint64_t bytes : sizes) {
    const net::Collective c{options.kind, static_cast<double>(bytes), table.group};
    const net::RoutedSchedule& schedule =
        options.algorithm == net::Algorithm::kAuto ? planner.plan(c) : planner.plan(c, options.algorithm);
    CollectiveRow row;
    row.bytes = bytes;
    row.count = bytes / kElementBytes / per_count;
    row.algorithm = schedule.algorithm;
    row.time = flow ? flow_time(planner, c) : schedule.duration(c.bytes);
    const double seconds = core::to_seconds(row.time);
    row.algbw = seconds > 0.0 ? c.bytes / seconds / kGB : 0.0;
    row.busbw = row.algbw * factor;
    busbw_sum += row.busbw;
    table.rows.push_back(row);
  }
  if (!table.rows.empty()) table.average_busbw = busbw_sum / static_cast<double>(table.rows.size());
  return table;
}

std::string format_collective_table(const hw::ClusterSpec& cluster, const CollectiveTableOptions& options,
                                     const CollectiveTable& table) {
  const net::CommGroup& g = table.group;
  std::string out =
      fmt::format("# trainsim collective: {}, simulated (nccl-tests columns)\n", net::to_string(options.kind));
  out += fmt::format("#  cluster       : {}, {} node{} x {} GPUs; {}\n", cluster.gpu.name, cluster.num_nodes,
                     cluster.num_nodes == 1 ? "" : "s", cluster.gpus_per_node, table.topology);
  const char* unit = cluster.nodes_per_domain == 1 ? "node" : "scale-up domain";
  out += fmt::format("#  group         : {} GPUs ({} {}{} x {})\n", g.size, g.nodes, unit, g.nodes == 1 ? "" : "s",
                     g.ranks_per_node);
  out += fmt::format("#  network model : {}\n", table.network_model);
  out += fmt::format("#  algorithm     : {}\n", net::to_string(options.algorithm));
  if (const std::string f = bus_factor_text(options.kind); f == "1")
    out += "#  busbw         : algbw\n#\n";
  else
    out += fmt::format("#  busbw         : algbw x {} = algbw x {:.4g}\n#\n", f, net::bus_factor(options.kind, g.size));
  out += fmt::format("# {:>10}  {:>12}  {:>6}  {:>6}  {:>6}  {:>9}  {:>7}  {:>7}  {}\n", "size", "count", "type",
                     "redop", "root", "time", "algbw", "busbw", "algorithm");
  out += fmt::format("# {:>10}  {:>12}  {:>6}  {:>6}  {:>6}  {:>9}  {:>7}  {:>7}\n", "(B)", "(elements)", "", "", "",
                     "(us)", "(GB/s)", "(GB/s)");
  const std::string_view redop = reduces(options.kind) ? "sum" : "none";
  const int root = rooted(options.kind) ? 0 : -1;
  for (const CollectiveRow& r : table.rows)
    out += fmt::format("{:>12}  {:>12}  {:>6}  {:>6}  {:>6}  {}  {:7.2f}  {:7.2f}  {}\n", r.bytes, r.count, "float",
                       redop, root, time_text(static_cast<double>(r.time) / 1e3), r.algbw, r.busbw,
                       net::to_string(r.algorithm));
  out += fmt::format("# Avg bus bandwidth    : {:g}\n", table.average_busbw);
  return out;
}

}  // namespace trainsim::report
