#pragma once
// `trainsim validate` (docs/validation.md): a measured run held against the
// simulation of the same run, per step, per kernel class and for peak memory.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "execution/kernel_classes.h"
#include "report/metrics.h"
#include "scenario/measured_run.h"

namespace trainsim::report {

struct ValidationRow {
  std::string name;
  double predicted = 0.0;
  double measured = 0.0;
  // predicted / measured - 1; nothing when nothing was measured (0).
  [[nodiscard]] std::optional<double> error() const;
};

struct ValidationReport {
  std::string run_file;
  std::string device;
  std::string framework;      // whose kernels ran it: "fused" (trainsim-train) or "pytorch_eager"
  std::string compute_model;  // "roofline (GPU spec)" or the profile's path
  ValidationRow step;         // seconds per training step (measured: the median)
  std::vector<ValidationRow> kernel_classes;  // seconds per step, in config::kKernelClasses order
  std::optional<ValidationRow> peak_memory;    // bytes per GPU
  std::optional<double> loss_initial, loss_final, loss_held_out;
};

// `classes`: exec::kernel_class_seconds of the run's scenario. The all_reduce
// class is predicted as the simulated step's exposed communication, the time the
// compute stream waits for gradients, as trainsim-train measures it.
ValidationReport validation_report(const scenario::MeasuredRun& run, const Metrics& m,
                                   const exec::KernelClassSeconds& classes);

std::string validation_text(const ValidationReport& r);
nlohmann::ordered_json validation_json(const ValidationReport& r, const std::string& predicted_result_file,
                                       const std::string& predicted_timeline_file,
                                       const std::string& measured_timeline_file);

}  // namespace trainsim::report
