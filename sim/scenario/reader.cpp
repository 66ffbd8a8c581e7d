#include "scenario/reader.h"

#include <memory>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "hardware/profile_efficiency.h"
#include "scenario/calibration_reader.h"
#include "scenario/errors.h"
#include "scenario/json_document.h"
#include "scenario/mixed_cluster.h"
#include "scenario/parse_sections.h"

namespace trainsim::scenario {

namespace {

config::CalibrationSource load_profile(const std::filesystem::path& path, const hw::GpuSpec& gpu, const std::string& file,
                               const std::string& json_path) {
  ProfileReading reading = read_calibration_file(path);
  check_profile_device(reading.profile, path.string(), gpu, file, json_path);
  return {path.string(), std::make_shared<const hw::CalibrationProfile>(std::move(reading.profile)),
          std::move(reading.warnings)};
}

// The scenario's "calibration": a path relative to the scenario's folder, or absolute.
std::optional<config::CalibrationSource> parse_calibration(const ObjectReader& root, const hw::GpuSpec& gpu,
                                                   const ReadOptions& options) {
  if (options.calibration) return load_profile(*options.calibration, gpu, options.calibration->string(), "");
  if (!root.has_non_null("calibration")) return std::nullopt;
  const std::string given = root.text("calibration");
  if (given.empty()) root.fail("calibration", "the path of a calibration profile", root.raw("calibration"));
  std::filesystem::path path(given);
  if (path.is_relative()) path = (std::filesystem::path(root.file()).parent_path() / path).lexically_normal();
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw ScenarioError(root.file(), root.path_of("calibration"),
                        "an existing calibration profile (a path relative to the scenario's folder, or absolute)",
                        "no such file: " + path.string());
  return load_profile(path, gpu, root.file(), root.path_of("calibration"));
}

// Both readers: a scenario file's sections; without `with_parallelism` (a sweep's
// base) the "parallelism" key is not allowed and each point brings its own
// (check_parallelism).
config::Scenario parse_root(const nlohmann::json& doc, const std::string& file, const ReadOptions& options,
                    bool with_parallelism) {
  std::vector<std::string_view> keys = {"name", "description", "cluster", "model", "training",
                                        "failures", "calibration", "simulation"};
  if (with_parallelism) keys.insert(keys.begin() + 5, "parallelism");
  const ObjectReader root(doc, file, "", keys);
  config::Scenario s;
  s.source_file = file;
  s.name = root.text("name", std::filesystem::path(file).stem().string());
  root.text("description", "");
  s.cluster = parse_cluster(root);
  s.model = parse_model(root);
  s.training = parse_training(root, s.cluster, s.model);
  if (with_parallelism) s.parallel = parse_parallelism(root, s.cluster, s.model, s.training);
  s.simulation = parse_simulation(root);
  // Sweeps and plans replay their best points under these failures (docs/sweep.md, "Failures").
  s.failures = parse_failures(root, s.training, s.cluster);
  s.calibration = parse_calibration(root, s.cluster.gpu, options);
  if (with_parallelism) resolve_mixed_cluster(s);
  // An async checkpoint's copy to host memory runs at the profile's measured
  // device-to-host bandwidth unless the scenario gives one (docs/reliability.md).
  if (s.failures && s.calibration && s.failures->host_copy_source != faults::FailureConfig::Source::kScenario) {
    if (const auto measured = hw::measured_copy_bandwidth(s.calibration->profile->copies, hw::CopyKind::kDeviceToHost)) {
      s.failures->host_copy_bandwidth = *measured;
      s.failures->host_copy_source = faults::FailureConfig::Source::kProfile;
    }
  }
  return s;
}

}  // namespace

config::Scenario parse_scenario_text(std::string_view text, const std::string& file, const ReadOptions& options) {
  return parse_root(parse_document(text, file, "scenario"), file, options, true);
}

config::Scenario parse_scenario_document(const nlohmann::json& doc, const std::string& file,
                                         const ReadOptions& options) {
  return parse_root(doc, file, options, true);
}

config::Scenario parse_scenario_base(const nlohmann::json& doc, const std::string& file, const ReadOptions& options) {
  return parse_root(doc, file, options, false);
}

config::Scenario read_scenario_file(const std::filesystem::path& path, const ReadOptions& options) {
  return parse_scenario_text(read_document_file(path, "scenario"), path.string(), options);
}

}  // namespace trainsim::scenario
