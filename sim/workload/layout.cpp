#include "workload/layout.h"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>

namespace trainsim::workload {

net::CommGroup group_shape(int size, long long stride, int gpus_per_node) {
  if (size < 1 || stride < 1 || gpus_per_node < 1) throw std::invalid_argument("group shape: sizes must be positive");
  net::CommGroup g;
  g.size = size;
  if (stride >= gpus_per_node) {
    g.ranks_per_node = 1;
  } else {
    if (gpus_per_node % stride != 0)
      throw std::invalid_argument("group stride " + std::to_string(stride) + " does not divide " +
                                  std::to_string(gpus_per_node) + " GPUs per node");
    g.ranks_per_node = std::min(size, static_cast<int>(gpus_per_node / stride));
  }
  if (size % g.ranks_per_node != 0)
    throw std::invalid_argument("group of " + std::to_string(size) + " ranks does not tile nodes of " +
                                std::to_string(g.ranks_per_node) + " members");
  g.nodes = size / g.ranks_per_node;
  return g;
}

bool tiles_nodes(int size, long long stride, int gpus_per_node) {
  if (size < 1 || stride < 1 || gpus_per_node < 1) return false;
  if (stride >= gpus_per_node) return true;
  if (gpus_per_node % stride != 0) return false;
  return size % std::min(size, static_cast<int>(gpus_per_node / stride)) == 0;
}

bool model_blocks_align(int tp, int cp, int gpus_per_node) {
  const auto fits = [gpus_per_node](long long span) {
    return span <= gpus_per_node ? gpus_per_node % span == 0 : span % gpus_per_node == 0;
  };
  return fits(tp) && (cp <= 1 || fits(static_cast<long long>(tp) * cp));
}

net::CommGroup members_shape(const std::vector<long long>& ranks, int gpus_per_node) {
  if (ranks.empty() || gpus_per_node < 1) throw std::invalid_argument("group shape: no ranks");
  std::map<long long, int> per_node;
  for (long long r : ranks) ++per_node[r / gpus_per_node];
  net::CommGroup g;
  g.size = static_cast<int>(ranks.size());
  g.nodes = static_cast<int>(per_node.size());
  for (const auto& [node, count] : per_node) g.ranks_per_node = std::max(g.ranks_per_node, count);
  return g;
}

std::vector<long long> parameter_server_ranks(int num_servers, bool dedicated, long long num_gpus, int gpus_per_node) {
  if (num_servers < 1) throw std::invalid_argument("at least one parameter server");
  std::vector<long long> ranks;
  for (int j = 0; j < num_servers; ++j)
    ranks.push_back(dedicated ? num_gpus + static_cast<long long>(j) * gpus_per_node
                              : static_cast<long long>(j) * num_gpus / num_servers);
  return ranks;
}

}  // namespace trainsim::workload
