// libFuzzer: the shared-cluster workload reader (scenario/cluster_workload_reader.h) on any bytes.
#include <cstddef>
#include <cstdint>

#include "fuzz_target.h"
#include "scenario/cluster_workload_reader.h"
#include "scenario/errors.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  trainsim::fuzz::expect_clean<trainsim::scenario::ScenarioError>(
      [&] { (void)trainsim::scenario::parse_cluster_workload_text(text, trainsim::fuzz::kFile); });
  return 0;
}
