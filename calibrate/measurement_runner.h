#pragma once
// One calibration measurement at a time, so that a long calibration on paid GPU
// time survives what can go wrong in it (docs/calibration.md, "Interrupted and
// failed measurements"):
//  - every measurement has a key naming it ("gemm bf16 4096x4096x4096 forward");
//    its row is appended to the journal (OUT.journal) the moment it is measured,
//    so a killed harness loses only the measurement it was in;
//  - with --resume, the journal's measurements are put back into the profile and
//    not measured again;
//  - a CUDA or NCCL error in one measurement (out of memory, no algorithm, an
//    illegal access, a timeout) is recorded in the profile's "errors" with its key
//    and message, and the harness goes on to the next measurement; an error that
//    left the device unusable (a sticky CUDA error) is recorded, then ends the
//    run: --resume then starts after it.
// Fault injection (TRAINSIM_CALIBRATE_FAULT="fail@N" or "crash@N", N >= 1): the
// Nth measurement of this process fails (an error recorded like a real one) or
// the process aborts before it, which tests exercise without a GPU.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "io/append_log.h"
#include "profile_writer.h"

namespace trainsim::calibrate {

struct FaultPlan {
  long long fail_at = 0;   // 0: never
  long long crash_at = 0;  // 0: never
  // Reads TRAINSIM_CALIBRATE_FAULT; throws std::invalid_argument for a value that is
  // not "fail@N" or "crash@N".
  static FaultPlan parse(std::string_view text);
  static FaultPlan from_environment();
};

class MeasurementRunner {
 public:
  enum class Outcome { kMeasured, kFromJournal, kFailed };

  // The journal is `journal` (none: empty path, nothing kept). With `resume`, the
  // rows it holds are added to `profile` in their order and their keys counted as
  // done; without, it starts empty. Throws std::runtime_error naming the journal
  // and line of a damaged record.
  MeasurementRunner(ProfileWriter& profile, std::filesystem::path journal, bool resume, FaultPlan faults = {});

  // Measures `key` unless the journal has it: `measure()` returns the row for
  // `section`. An exception from measure() is recorded as an error row; when
  // `device_broken()` (given) then says the device is unusable, it is rethrown.
  Outcome run(const std::string& section, const std::string& key, const std::function<nlohmann::json()>& measure,
              const std::function<bool()>& device_broken = {});

  // The same for a measurement that is one value of the profile (`name`, e.g.
  // "launch_overhead_s") rather than a row.
  Outcome run_value(const std::string& name, const std::string& key, const std::function<nlohmann::json()>& measure,
                    const std::function<bool()>& device_broken = {});

  [[nodiscard]] bool done(const std::string& key) const { return done_.contains(key); }
  [[nodiscard]] std::size_t resumed() const { return resumed_; }
  [[nodiscard]] long long measured() const { return attempts_; }
  // Deletes the journal (the profile is complete).
  void remove_journal();

 private:
  // A journal line: {"section", "key", "row"} for a row, {"set", "key", "value"} for a value.
  void record(const nlohmann::json& line);
  void apply(const nlohmann::json& line);
  Outcome attempt(const std::string& key, const std::string& section_for_errors,
                  const std::function<nlohmann::json()>& line_of_measurement, const std::function<bool()>& device_broken);

  ProfileWriter& profile_;
  std::filesystem::path path_;
  FaultPlan faults_;
  std::unique_ptr<io::AppendLog> log_;
  std::set<std::string> done_;
  std::size_t resumed_ = 0;
  long long attempts_ = 0;
};

}  // namespace trainsim::calibrate
