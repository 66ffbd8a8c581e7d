#include "hardware/calibration_profile.h"

#include <cctype>

namespace trainsim::hw {

namespace {

bool is_separator(char c) { return c == ' ' || c == '-' || c == '_' || c == '\t'; }

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

std::vector<std::string> words(std::string_view s) {
  std::vector<std::string> out;
  std::string word;
  for (char c : s) {
    if (is_separator(c)) {
      if (!word.empty()) out.push_back(upper(word));
      word.clear();
    } else {
      word += c;
    }
  }
  if (!word.empty()) out.push_back(upper(word));
  return out;
}

}  // namespace

std::optional<double> KernelRow::shape_value(std::string_view key) const {
  for (const auto& [field, value] : shape)
    if (field == key) return value;
  return std::nullopt;
}

std::string CalibrationProfile::version(std::string_view name) const {
  for (const auto& [library, value] : versions)
    if (library == name) return value;
  return "";
}

bool profile_matches_gpu(std::string_view device_name, std::string_view gpu_name) {
  const std::vector<std::string> gpu = words(gpu_name);
  if (gpu.empty()) return false;
  for (const std::string& w : words(device_name))
    if (w == gpu.front()) return true;
  return false;
}

}  // namespace trainsim::hw
