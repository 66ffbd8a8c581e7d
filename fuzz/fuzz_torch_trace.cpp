// libFuzzer: the PyTorch profiler trace reader (scenario/torch_trace.h) on any bytes,
// and the measured run it makes when it reads.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "fuzz_target.h"
#include "scenario/errors.h"
#include "scenario/torch_trace.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  trainsim::fuzz::expect_clean<trainsim::scenario::ScenarioError>([&] {
    const std::vector<trainsim::scenario::TorchTrace> traces = {
        trainsim::scenario::parse_torch_trace(text, trainsim::fuzz::kFile)};
    (void)trainsim::scenario::measured_run_from_traces(traces, 1, "fused");
  });
  return 0;
}
