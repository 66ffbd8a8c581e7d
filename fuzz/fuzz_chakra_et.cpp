// libFuzzer: the Chakra execution-trace reader (scenario/chakra_reader.h) on any
// bytes, as the one file of rank 0, to run on one 8-GPU H100 node.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "fuzz_target.h"
#include "scenario/chakra_reader.h"
#include "scenario/errors.h"
#include "scenario/reader.h"

namespace {

const trainsim::hw::ClusterSpec& cluster() {
  static const trainsim::config::Scenario s = trainsim::scenario::parse_scenario_text(
      R"({"cluster": {"gpu": "H100-SXM5-80GB", "num_nodes": 1}, "model": {"preset": "gpt2-124m"},
          "training": {"global_batch_size": 8}})",
      "fuzz.json");
  return s.cluster;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const trainsim::scenario::ChakraInput input{trainsim::fuzz::kFile, 0,
                                              std::string(reinterpret_cast<const char*>(data), size)};
  trainsim::fuzz::expect_clean<trainsim::scenario::ScenarioError>(
      [&] { (void)trainsim::scenario::read_chakra_trace(std::span(&input, 1), cluster()); });
  return 0;
}
