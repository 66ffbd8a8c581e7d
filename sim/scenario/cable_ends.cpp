#include "scenario/cable_ends.h"

#include <cstdlib>
#include <optional>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "scenario/errors.h"

namespace trainsim::scenario {

namespace {

// The numbers of "node<N>.nic<R>", or none when the name is not so written. They
// are read as std::sscanf("node%d.nic%d") read them when the topology builder
// parsed the names (strtol's syntax: leading blanks and a sign are taken), so
// every name means what it meant.
std::optional<std::pair<long long, long long>> nic_numbers(const std::string& name) {
  constexpr std::string_view kNode = "node";
  constexpr std::string_view kNic = ".nic";
  if (!name.starts_with(kNode)) return std::nullopt;
  const char* first = name.c_str() + kNode.size();
  char* last = nullptr;
  const long long node = std::strtoll(first, &last, 10);
  if (last == first || !std::string_view(last).starts_with(kNic)) return std::nullopt;
  first = last + kNic.size();
  const long long rail = std::strtoll(first, &last, 10);
  if (last == first || *last != '\0') return std::nullopt;
  return std::pair{node, rail};
}

// The NIC `name` is, checked against the cluster; none for a switch.
std::optional<hw::NicId> nic_of(const std::string& name, const hw::ClusterSpec& cluster, const std::string& file,
                                const std::string& path) {
  const auto numbers = nic_numbers(name);
  if (!numbers) {
    if (name.starts_with("node"))
      throw ScenarioError(file, path, fmt::format("\"{}\": NICs are written node<N>.nic<R>, e.g. node0.nic0", name));
    return std::nullopt;
  }
  const auto [node, rail] = *numbers;
  const int nics = cluster.inter_node.nics_per_node;
  if (node < 0 || node >= cluster.num_nodes || rail < 0 || rail >= nics)
    throw ScenarioError(file, path, fmt::format("\"{}\" names no NIC: nodes are 0..{}, NICs 0..{}", name,
                                                cluster.num_nodes - 1, nics - 1));
  return hw::NicId{static_cast<int>(node), static_cast<int>(rail)};
}

}  // namespace

void type_cable_ends(hw::ClusterSpec& cluster, const std::string& file, const std::string& links_path) {
  for (std::size_t i = 0; i < cluster.inter_node.custom_links.size(); ++i) {
    hw::CustomLink& link = cluster.inter_node.custom_links[i];
    link.a.nic = nic_of(link.a.name, cluster, file, fmt::format("{}/{}/a", links_path, i));
    link.b.nic = nic_of(link.b.name, cluster, file, fmt::format("{}/{}/b", links_path, i));
  }
}

}  // namespace trainsim::scenario
