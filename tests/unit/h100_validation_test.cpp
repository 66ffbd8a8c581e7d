// The runs measured on the lent H100 (tests/validation/h100/, README there) against
// the committed H100 profile (scenarios/calibration/h100-sxm5-80gb.json), as
// `trainsim validate` predicts them: the whole simulated step (host dispatch included
// for PyTorch eager) and the memory timeline's peak. The bounds are what the measured
// errors allow, so a change that loses accuracy on a real card fails here:
//   trainsim-train  step +1.4% / +2.8% / +1.7%   peak -1.3% / -0.5% / -0.3%  (124M / 350M / 774M;
//                   the trainer measures the device's memory in use: its buffers and the CUDA context)
//   PyTorch eager   step -4.9% / +0.6% / +4.4%   peak -0.2% / -0.0% / -0.3%
// (backward GEMMs priced from the profile's data- and weight-gradient layout rows).
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "execution/simulate.h"
#include "execution/kernel_classes.h"
#include "report/metrics.h"
#include "report/validation_report.h"
#include "scenario/measured_run.h"
#include "scenario/reader.h"

namespace trainsim {
namespace {

const std::string kRoot = TRAINSIM_SOURCE_DIR;

struct Errors {
  double step;
  double peak;
};

Errors predicted_over_measured(const std::string& run_file, workload::Framework expected) {
  const scenario::MeasuredRun run = scenario::read_measured_run(kRoot + "/tests/validation/h100/" + run_file);
  scenario::MeasuredScenarioOptions o;
  o.calibration = kRoot + "/scenarios/calibration/h100-sxm5-80gb.json";
  const config::Scenario s = scenario::scenario_for_measured_run(run, o);
  EXPECT_EQ(s.training.framework, expected) << run_file;
  EXPECT_TRUE(s.calibration.has_value());
  const report::Metrics m = report::compute_metrics(s, exec::simulate(s));
  const report::ValidationReport v = report::validation_report(run, m, exec::kernel_class_seconds(s));
  return {*v.step.error(), *v.peak_memory->error()};
}

TEST(H100Validation, TrainerStepsWithinFivePercentAndPeaksWithinTwo) {
  for (const char* size : {"124m", "350m", "774m"}) {
    const Errors e = predicted_over_measured(std::string("train-gpt2-") + size + ".json",
                                             workload::Framework::kTrainsimTrain);
    EXPECT_LT(std::abs(e.step), 0.05) << size << ": step " << e.step;
    EXPECT_LT(std::abs(e.peak), 0.02) << size << ": peak " << e.peak;
  }
}

TEST(H100Validation, PytorchEagerStepsWithinFivePercentAndPeaksWithinOne) {
  for (const char* size : {"124m", "350m", "774m"}) {
    const Errors e = predicted_over_measured(std::string("pytorch-gpt2-") + size + ".run.json",
                                             workload::Framework::kPytorchEager);
    EXPECT_LT(std::abs(e.step), 0.05) << size << ": step " << e.step;
    EXPECT_LT(std::abs(e.peak), 0.01) << size << ": peak " << e.peak;
  }
}

}  // namespace
}  // namespace trainsim
