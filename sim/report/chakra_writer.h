#pragma once
// Writes an iteration's task graph as MLCommons Chakra execution traces
// (docs/chakra.md): one file per simulated rank, PREFIX.RANK.et, each a
// length-delimited GlobalMetadata message followed by length-delimited Node
// messages, as Chakra's own tools write them (src/third_party/utils/protolib.py).
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "workload/iteration_builder.h"

namespace trainsim::report {

// The bytes of simulated rank `rank`'s file.
std::string chakra_trace_bytes(const workload::IterationGraph& iteration, int rank);

// DIR/PREFIX.RANK.et for every simulated rank, each written atomically (DIR is
// created); returns the paths in rank order. Throws io::OutputError.
std::vector<std::filesystem::path> write_chakra_traces(const std::filesystem::path& dir, std::string_view prefix,
                                                       const workload::IterationGraph& iteration);

}  // namespace trainsim::report
