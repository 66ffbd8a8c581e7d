#include "workload/op_sac.h"

#include <algorithm>

namespace trainsim::workload {

std::vector<std::vector<BlockLinear>> op_sac_block_linears(const ModelConfig& m, double tensor) {
  const double h = static_cast<double>(m.hidden_size);
  const double q = static_cast<double>(m.query_width()) / tensor;
  // Query groups split over the ranks, never below one group per rank (as layer_forward).
  const double kv = std::max(static_cast<double>(m.kv_width()) / tensor, static_cast<double>(m.kv_channels));
  const double f = static_cast<double>(m.ffn_hidden_size) / tensor;
  std::vector<std::vector<BlockLinear>> groups{{{h, q}, {h, kv}, {h, kv}}, {{q, h}}};
  if (m.swiglu)
    groups.push_back({{h, f}, {h, f}});
  else
    groups.push_back({{h, f}});
  groups.push_back({{f, h}});
  std::size_t position = 0;  // 1-based in torchtitan's counter
  for (auto& group : groups)
    for (BlockLinear& linear : group) linear.saved = ++position % 2 == 1;
  return groups;
}

}  // namespace trainsim::workload
