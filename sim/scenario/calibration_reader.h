#pragma once
// Reads calibration profiles (docs/calibration.md, "The profile format") into
// hw::CalibrationProfile. Errors are ScenarioErrors naming the file, the JSON
// path, what was expected and what was found, e.g.
//   h200.json: /gemm/3/seconds: expected a positive number, found -1
// The calibration harness reuses this to check (and resume) the profiles it writes.
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "hardware/calibration_profile.h"
#include "hardware/gpu_spec.h"

namespace trainsim::scenario {

struct ProfileReading {
  hw::CalibrationProfile profile;
  // Accepted but worth saying: "complete": false, kernel names this trainsim
  // does not know (their rows are kept but never priced). The CLI prints them.
  std::vector<std::string> warnings;
};

ProfileReading read_calibration_file(const std::filesystem::path& path);
// `file` names the source in messages.
ProfileReading parse_calibration_text(std::string_view text, const std::string& file);

// Throws ScenarioError at (file, json_path) unless the profile was measured on the
// kind of GPU `gpu` is (hw::profile_matches_gpu), naming both.
void check_profile_device(const hw::CalibrationProfile& profile, const std::string& profile_file,
                          const hw::GpuSpec& gpu, const std::string& file, const std::string& json_path);

}  // namespace trainsim::scenario
