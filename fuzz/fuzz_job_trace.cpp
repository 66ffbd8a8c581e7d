// libFuzzer: the Helios job-trace reader (scenario/job_trace.h) on any bytes.
#include <cstddef>
#include <cstdint>

#include "fuzz_target.h"
#include "scenario/errors.h"
#include "scenario/job_trace.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  trainsim::fuzz::expect_clean<trainsim::scenario::ScenarioError>(
      [&] { (void)trainsim::scenario::parse_helios_log(text, trainsim::fuzz::kFile); });
  return 0;
}
