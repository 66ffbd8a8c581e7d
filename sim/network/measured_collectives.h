#pragma once
// Collectives priced by what a calibration profile measured (its "collectives":
// trainsim-calibrate --nccl, or nccl-tests output brought in with
// --import-nccl-tests; docs/calibration.md). docs/model.md, "Measured
// collectives": a collective whose group spans n nodes with r ranks on each, of
// an operation the profile measured on n x r ranks spread over n nodes (n = 1:
// an intra_node row; n > 1: an inter_node row with "nodes": n), with a buffer
// inside the measured sizes, takes S / algbw(S), algbw read between the two
// neighbouring measured sizes linearly in ln S (hw::LogCurve, as the compute
// kernels' bandwidths are read). Anything else goes to the network model:
// groups spread in a way the profile did not measure, inter_node rows that do
// not say over how many nodes they ran, point-to-point sends, sizes outside the
// measured range.
#include <compare>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "hardware/calibration_profile.h"
#include "hardware/log_curve.h"
#include "network/collective_model.h"

namespace trainsim::net {

class MeasuredCollectives {
 public:
  MeasuredCollectives() = default;
  // Rows with a wrong result (#wrong > 0) or no time are left out, and so are
  // inter_node rows without their node count (CollectiveRow::nodes == 0) or
  // with one that does not divide their ranks.
  explicit MeasuredCollectives(const std::vector<hw::CollectiveRow>& rows);

  [[nodiscard]] bool empty() const { return curves_.empty(); }
  // The measured time of `c` in seconds, or nothing (the network model prices it).
  [[nodiscard]] std::optional<double> seconds(const Collective& c) const;

 private:
  struct Shape {
    CollectiveKind kind = CollectiveKind::kAllReduce;
    long long ranks = 0;
    long long nodes = 0;
    auto operator<=>(const Shape&) const = default;
  };
  // (operation, ranks, nodes) -> algbw (B/s) over the buffer size S.
  std::map<Shape, hw::LogCurve> curves_;
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
