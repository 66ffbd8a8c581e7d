#pragma once
// The calibration profile (docs/calibration.md), built up table by table and
// written atomically after each table and every few seconds in between, so a crash
// or Ctrl-C keeps everything measured so far ("complete": false until finish()).
#include <chrono>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

namespace trainsim::calibrate {

class ProfileWriter {
 public:
  // `out` empty: nothing is written (a dry run prints only).
  ProfileWriter(std::filesystem::path out, nlohmann::json header);

  // Appends a row to the array `section` ("gemm", "kernels", ...); writes the file
  // when the last write is older than a few seconds.
  void add(const std::string& section, nlohmann::json row);
  void set(const std::string& key, nlohmann::json value);
  // Writes now (still "complete": false).
  void flush();
  // Marks the profile complete and writes it.
  void finish();

  [[nodiscard]] const nlohmann::json& profile() const { return profile_; }

 private:
  void write();
  std::filesystem::path out_;
  nlohmann::json profile_;
  std::chrono::steady_clock::time_point last_write_;
};

}  // namespace trainsim::calibrate
