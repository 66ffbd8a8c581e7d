#include "profile_writer.h"

#include <utility>

#include "io/atomic_file.h"

namespace trainsim::calibrate {

namespace {
constexpr std::chrono::seconds kWriteEvery{5};
}

ProfileWriter::ProfileWriter(std::filesystem::path out, nlohmann::json header)
    : out_(std::move(out)), profile_(std::move(header)), last_write_(std::chrono::steady_clock::now()) {
  profile_["trainsim_calibration"] = 1;
  profile_["complete"] = false;
  write();
}

void ProfileWriter::add(const std::string& section, nlohmann::json row) {
  if (!profile_.contains(section)) profile_[section] = nlohmann::json::array();
  profile_[section].push_back(std::move(row));
  if (std::chrono::steady_clock::now() - last_write_ >= kWriteEvery) write();
}

void ProfileWriter::set(const std::string& key, nlohmann::json value) { profile_[key] = std::move(value); }

void ProfileWriter::flush() { write(); }

void ProfileWriter::finish() {
  profile_["complete"] = true;
  write();
}

void ProfileWriter::write() {
  last_write_ = std::chrono::steady_clock::now();
  if (out_.empty()) return;
  io::write_atomically(out_, [&](std::ostream& os) { os << profile_.dump(1) << '\n'; });
}

}  // namespace trainsim::calibrate
