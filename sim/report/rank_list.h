#pragma once
// Rank selections such as "0-7,16,32-35" (the CLI's --trace-ranks).
#include <string_view>
#include <vector>

namespace trainsim::report {

// Sorted, without duplicates. Throws std::invalid_argument with a message for
// malformed lists and ranks outside [0, num_gpus).
std::vector<long long> parse_rank_list(std::string_view text, long long num_gpus);
// Every rank for jobs of up to 64 GPUs, else the first node's ranks.
std::vector<long long> default_trace_ranks(long long num_gpus, int gpus_per_node);

}  // namespace trainsim::report
