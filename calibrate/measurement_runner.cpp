#include "measurement_runner.h"

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace trainsim::calibrate {

namespace {

constexpr const char* kFaultVariable = "TRAINSIM_CALIBRATE_FAULT";

}  // namespace

FaultPlan FaultPlan::parse(std::string_view text) {
  FaultPlan plan;
  const std::size_t at = text.find('@');
  const auto bad = [&] {
    return std::invalid_argument(std::string(kFaultVariable) + ": expected \"fail@N\" or \"crash@N\" (N >= 1), found \"" +
                                 std::string(text) + "\"");
  };
  if (at == std::string_view::npos) throw bad();
  const std::string_view what = text.substr(0, at);
  const std::string number(text.substr(at + 1));
  long long n = 0;
  try {
    std::size_t used = 0;
    n = std::stoll(number, &used);
    if (used != number.size()) throw bad();
  } catch (const std::logic_error&) {
    throw bad();
  }
  if (n < 1) throw bad();
  if (what == "fail") {
    plan.fail_at = n;
  } else if (what == "crash") {
    plan.crash_at = n;
  } else {
    throw bad();
  }
  return plan;
}

FaultPlan FaultPlan::from_environment() {
  const char* value = std::getenv(kFaultVariable);
  return value == nullptr || *value == '\0' ? FaultPlan{} : parse(value);
}

MeasurementRunner::MeasurementRunner(ProfileWriter& profile, std::filesystem::path journal, bool resume,
                                     FaultPlan faults)
    : profile_(profile), path_(std::move(journal)), faults_(faults) {
  if (path_.empty()) return;
  if (resume) {
    const io::LogLines earlier = io::read_log(path_);
    for (std::size_t i = 0; i < earlier.lines.size(); ++i) {
      const nlohmann::json line = nlohmann::json::parse(earlier.lines[i], nullptr, false);
      const bool row = line.is_object() && line.contains("section") && line["section"].is_string() &&
                       line.contains("row") && line["row"].is_object();
      const bool value = line.is_object() && line.contains("set") && line["set"].is_string() && line.contains("value");
      if (line.is_discarded() || !(row || value) || !line.contains("key") || !line["key"].is_string())
        throw std::runtime_error(path_.string() + ": line " + std::to_string(i + 1) +
                                 ": expected {\"section\", \"key\", \"row\"} or {\"set\", \"key\", \"value\"} "
                                 "(delete the journal, or run without --resume, to start over)");
      apply(line);
    }
    resumed_ = done_.size();
  }
  log_ = std::make_unique<io::AppendLog>(path_, !resume);
}

void MeasurementRunner::apply(const nlohmann::json& line) {
  if (line.contains("set")) {
    profile_.set(line["set"].get<std::string>(), line["value"]);
  } else {
    profile_.add(line["section"].get<std::string>(), line["row"]);
  }
  done_.insert(line["key"].get<std::string>());
}

void MeasurementRunner::record(const nlohmann::json& line) {
  if (log_) log_->append(line.dump());
  apply(line);
}

MeasurementRunner::Outcome MeasurementRunner::attempt(const std::string& key, const std::string& section_for_errors,
                                                      const std::function<nlohmann::json()>& line_of_measurement,
                                                      const std::function<bool()>& device_broken) {
  if (done(key)) return Outcome::kFromJournal;
  ++attempts_;
  if (faults_.crash_at == attempts_) {
    std::fprintf(stderr, "trainsim-calibrate: %s=crash@%lld: aborting before \"%s\"\n", kFaultVariable, attempts_,
                 key.c_str());
    std::abort();
  }
  try {
    if (faults_.fail_at == attempts_)
      throw std::runtime_error(std::string("injected failure (") + kFaultVariable + "=fail@" +
                               std::to_string(attempts_) + ")");
    record(line_of_measurement());
    return Outcome::kMeasured;
  } catch (const std::exception& e) {
    record({{"section", "errors"},
            {"key", key},
            {"row", {{"key", key}, {"section", section_for_errors}, {"error", e.what()}}}});
    if (device_broken && device_broken()) throw;
    return Outcome::kFailed;
  }
}

MeasurementRunner::Outcome MeasurementRunner::run(const std::string& section, const std::string& key,
                                                  const std::function<nlohmann::json()>& measure,
                                                  const std::function<bool()>& device_broken) {
  return attempt(
      key, section, [&] { return nlohmann::json{{"section", section}, {"key", key}, {"row", measure()}}; },
      device_broken);
}

MeasurementRunner::Outcome MeasurementRunner::run_value(const std::string& name, const std::string& key,
                                                        const std::function<nlohmann::json()>& measure,
                                                        const std::function<bool()>& device_broken) {
  return attempt(
      key, name, [&] { return nlohmann::json{{"set", name}, {"key", key}, {"value", measure()}}; }, device_broken);
}

void MeasurementRunner::remove_journal() {
  log_.reset();
  if (path_.empty()) return;
  std::error_code ec;
  std::filesystem::remove(path_, ec);
}

}  // namespace trainsim::calibrate
