#pragma once
// `trainsim-calibrate --import-nccl-tests FILE`: NVIDIA nccl-tests output
// (github.com/NVIDIA/nccl-tests) turned into the profile's "collectives" and
// "collective_fits" rows (docs/calibration.md).
//
// Reads both outputs nccl-tests writes:
//  - the text table on stdout, in the layouts nccl-tests has printed over the
//    years: the per-test headers of the old versions (all_gather and sendrecv
//    without a redop column, broadcast with a root but no redop, alltoall with a
//    blank redop, an "error" column holding the largest deviation instead of a
//    count), and the common header of the newer ones ("size count type redop root
//    time algbw busbw #wrong ...", "#wrong" possibly "N/A", optional per-iteration,
//    bitwise and timestamp columns after the out-of-place and in-place groups);
//  - the JSON file of `-J FILE.json` (util.cu; format versions 1 to 3).
// Only the out-of-place group is imported (its time in microseconds becomes
// seconds). Rows of 0 bytes (sizes too small to give each rank an element; the
// collective does nothing) are dropped.
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace trainsim::calibrate {

// One nccl-tests result row (docs/calibration.md, "collectives").
struct CollectiveRow {
  std::string op;     // all_reduce, all_gather, reduce_scatter, all_to_all, broadcast, send_recv, reduce
  std::string scope;  // intra_node or inter_node
  int ranks = 0;
  // Distinct hosts the ranks ran on, ranks / nodes on each; 0: not known (an
  // uneven spread, or host names missing), written without "nodes".
  int nodes = 0;
  double bytes = 0.0;  // nccl-tests' "size" column
  double seconds = 0.0;
  double algbw_gbps = 0.0;
  double busbw_gbps = 0.0;
  long long wrong = 0;  // wrong elements; -1: not checked ("N/A", -c 0) or not a count (old "error" column)
};

// t = alpha + bytes x bus_factor(op, ranks) / busbw, fitted per (op, scope, ranks, nodes).
struct CollectiveFit {
  std::string op;
  std::string scope;
  int ranks = 0;
  int nodes = 0;  // as CollectiveRow::nodes
  double alpha_s = 0.0;
  double busbw_gbps = 0.0;
};

// Our name of a collective from any of nccl-tests' names for it ("all_reduce_perf",
// "allreduce", "AllReduce", "alltoall", "sendrecv", ...), or nothing.
std::optional<std::string> normalize_collective_op(std::string_view name);

// Parses nccl-tests output (text, or the JSON of -J; told apart by the first
// character). The op is `op_override` if given, else read from `source_name` (a
// file name such as "logs/all_reduce_perf.8gpu.txt"), else from the output
// itself ("# Collective test starting: all_reduce_perf" in newer text output, the
// program in "args" of the JSON). ranks: the "#  Rank" lines (the JSON's
// devices x nthreads x ngpus); nodes: the distinct host names those lines give
// ("... on HOST device ..."; the JSON's devices[].hostname), when every host runs
// the same number of ranks (else 0, not known); scope: inter_node when they name
// more than one host. Output without host names (no Rank lines, no devices) is
// taken as one process on one host. Several runs concatenated into one text are
// read one after another.
// Throws std::runtime_error naming the source and the line (the JSON: the result
// index) and what was expected; a file without result rows is an error.
std::vector<CollectiveRow> parse_nccl_tests(const std::string& text, const std::string& source_name,
                                            std::optional<std::string> op_override);

// nccl-tests' bus bandwidth factor: 2(n-1)/n all_reduce; (n-1)/n all_gather,
// reduce_scatter, all_to_all; 1 broadcast, reduce, send_recv. Throws
// std::runtime_error for an unknown op or ranks < 1.
double bus_factor(const std::string& op, int ranks);

// The nodes ranks ran on, given how many each host ran (host -> ranks): the
// distinct hosts when every host ran as many and they add up to `ranks`; 0 (not
// known) otherwise. Both the nccl-tests import and the MPI harness count so.
int even_spread_nodes(long long ranks, const std::map<std::string, long long>& per_host);

// Fits t = alpha + beta x bytes to each (op, scope, ranks, nodes) series (in order of first
// appearance) by least squares on the relative error, sum(((alpha + beta b_i - t_i)
// / t_i)^2), so small and large messages weigh alike; alpha is clamped to >= 0
// (refitting beta alone); busbw_gbps = bus_factor / beta / 1e9. Rows with a
// non-positive size or time or wrong elements (wrong > 0) are left out. Throws
// std::runtime_error for a series with fewer than two distinct sizes, a time that
// does not grow with size, or a bus factor of 0 (one rank).
std::vector<CollectiveFit> fit_alpha_beta(const std::vector<CollectiveRow>& rows);

// The profile's objects (docs/calibration.md field names); "nodes" only when known (> 0).
nlohmann::json to_json(const CollectiveRow& row);
nlohmann::json to_json(const CollectiveFit& fit);

}  // namespace trainsim::calibrate
