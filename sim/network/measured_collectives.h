#pragma once
// Collectives priced by what a calibration profile measured (its "collectives":
// trainsim-calibrate --nccl, or nccl-tests output brought in with
// --import-nccl-tests; docs/calibration.md). docs/model.md, "Calibrated costs":
// a collective of a group within one node, of an operation the profile measured
// on that many ranks in one node, with a buffer inside the measured sizes, takes
// S / algbw(S), algbw read between the two neighbouring measured sizes linearly
// in ln S (hw::LogCurve, as the compute kernels' bandwidths are read). Anything
// else goes to the network model: groups spanning nodes (the profile's rows do
// not say how the ranks were spread over the nodes), point-to-point sends,
// sizes outside the measured range.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "hardware/calibration_profile.h"
#include "hardware/log_curve.h"
#include "network/collective_model.h"

namespace trainsim::net {

class MeasuredCollectives {
 public:
  MeasuredCollectives() = default;
  // Rows with a wrong result (#wrong > 0) or no time are left out.
  explicit MeasuredCollectives(const std::vector<hw::CollectiveRow>& rows);

  [[nodiscard]] bool empty() const { return curves_.empty(); }
  // The measured time of `c` in seconds, or nothing (the network model prices it).
  [[nodiscard]] std::optional<double> seconds(const Collective& c) const;

 private:
  // (operation, ranks) within one node -> algbw (B/s) over the buffer size S.
  std::map<std::pair<CollectiveKind, long long>, hw::LogCurve> curves_;
};

// Runs each collective the table prices as a measured duration on the
// simulator's clock, every other one on `inner`. Counts both.
class MeasuredBackend final : public CommunicationBackend {
 public:
  MeasuredBackend(const MeasuredCollectives& table, CommunicationBackend& inner) : table_(table), inner_(inner) {}
  void start(const Collective& c, core::Simulator& sim, std::function<void()> on_done) override;
  [[nodiscard]] std::string_view name() const override { return inner_.name(); }
  [[nodiscard]] long long measured() const { return measured_; }
  [[nodiscard]] long long modeled() const { return modeled_; }

 private:
  const MeasuredCollectives& table_;
  CommunicationBackend& inner_;
  long long measured_ = 0;
  long long modeled_ = 0;
};

}  // namespace trainsim::net
