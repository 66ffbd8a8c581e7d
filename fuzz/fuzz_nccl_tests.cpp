// libFuzzer: the nccl-tests importer (calibrate/nccl_tests_import.h), text or -J
// JSON, on any bytes, and the alpha-beta fit of what it accepts.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "fuzz_target.h"
#include "nccl_tests_import.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  trainsim::fuzz::expect_clean<std::runtime_error>([&] {
    const auto rows = trainsim::calibrate::parse_nccl_tests(text, trainsim::fuzz::kFile, std::nullopt);
    try {
      (void)trainsim::calibrate::fit_alpha_beta(rows);
    } catch (const std::runtime_error&) {
      // A series that cannot be fitted is reported per series (fit_alpha_beta's contract).
    }
  });
  return 0;
}
