#pragma once
// Reads MLCommons Chakra execution traces (docs/chakra.md) into an iteration's
// task graph for the executor: a folder of one file per rank, PREFIX.RANK.et.
// Files trainsim wrote (report/chakra_writer) are rebuilt into the same graph;
// others are mapped node by node onto the cluster they are to run on.
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "hardware/cluster.h"
#include "workload/iteration_builder.h"

namespace trainsim::scenario {

struct ChakraInput {
  std::string file;  // its name in messages
  int rank = 0;
  std::string bytes;
};

struct ChakraTrace {
  workload::IterationGraph iteration;
  std::vector<std::string> files;  // in rank order
  bool written_by_trainsim = false;
  long long nodes = 0;             // every node of every file
  long long cpu_ops_skipped = 0;   // COMP_NODEs with is_cpu_op (foreign traces)
  long long metadata_skipped = 0;  // METADATA_NODEs
  long long measured = 0;          // compute nodes timed by their duration_micros
  long long priced = 0;            // compute nodes priced from num_ops / tensor_size
};

// The traces of `files` (any order), to run on `cluster`. Throws ScenarioError
// naming the file, the node id (or byte offset) and what was expected.
ChakraTrace read_chakra_trace(std::span<const ChakraInput> files, const hw::ClusterSpec& cluster);

// Every PREFIX.RANK.et in `dir` (one prefix). Throws ScenarioError.
ChakraTrace read_chakra_folder(const std::filesystem::path& dir, const hw::ClusterSpec& cluster);

}  // namespace trainsim::scenario
