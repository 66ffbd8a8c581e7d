#include "scenario/presets.h"

#include "scenario/embedded_presets.h"

namespace trainsim::scenario {

namespace {
std::string_view prefix(PresetKind kind) { return kind == PresetKind::kHardware ? "hardware/" : "models/"; }
constexpr std::string_view kSuffix = ".json";
}  // namespace

std::vector<std::string> preset_names(PresetKind kind) {
  std::vector<std::string> names;
  for (const auto& [key, text] : embedded_presets()) {
    if (key.starts_with(prefix(kind)) && key.ends_with(kSuffix))
      names.emplace_back(key.substr(prefix(kind).size(), key.size() - prefix(kind).size() - kSuffix.size()));
  }
  return names;
}

std::optional<nlohmann::json> find_preset(PresetKind kind, std::string_view name) {
  const std::string key = std::string(prefix(kind)) + std::string(name) + std::string(kSuffix);
  const auto& presets = embedded_presets();
  const auto it = presets.find(key);
  if (it == presets.end()) return std::nullopt;
  // Presets are validated by the test suite; a broken one is a build defect.
  return nlohmann::json::parse(it->second);
}

}  // namespace trainsim::scenario
