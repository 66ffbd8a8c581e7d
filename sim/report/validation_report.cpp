#include "report/validation_report.h"

#include <fmt/format.h>

namespace trainsim::report {

namespace {

std::string percent(const std::optional<double>& e) { return e ? fmt::format("{:+.1f}%", 100.0 * *e) : "-"; }

std::string milliseconds(double s) { return fmt::format("{:.3f}", 1e3 * s); }

nlohmann::ordered_json row_json(const ValidationRow& r) {
  nlohmann::ordered_json j;
  j["predicted"] = r.predicted;
  j["measured"] = r.measured;
  if (const auto e = r.error()) j["error"] = *e;
  else j["error"] = nullptr;
  return j;
}

}  // namespace

std::optional<double> ValidationRow::error() const {
  if (!(measured > 0.0)) return std::nullopt;
  return predicted / measured - 1.0;
}

ValidationReport validation_report(const scenario::MeasuredRun& run, const Metrics& m,
                                   const exec::KernelClassSeconds& classes) {
  ValidationReport r;
  r.run_file = run.file;
  r.device = fmt::format("{} x {}", run.device_count, run.device_name);
  r.framework = run.framework;
  r.compute_model = m.compute_model;
  r.step = {"step", m.iteration_time_s, run.step_median_s};
  for (std::size_t i = 0; i < config::kKernelClasses.size(); ++i) {
    const std::string name(config::kKernelClasses[i]);
    const double predicted = name == "all_reduce" ? m.breakdown_s.exposed_communication : classes[i];
    r.kernel_classes.push_back({name, predicted, run.kernel_class_s[i]});
  }
  if (run.peak_memory_bytes) {
    double predicted =
        m.memory.timeline_peak_bytes > 0.0 ? m.memory.timeline_peak_bytes : m.memory.peak_bytes_per_gpu;
    // trainsim-train measures the device's memory in use (cudaMemGetInfo), so its CUDA
    // context counts; PyTorch's peak is its allocator's, without it (docs/validation.md).
    if (run.framework == "trainsim_train") predicted += m.memory.context_bytes;
    r.peak_memory = ValidationRow{"peak memory", predicted, *run.peak_memory_bytes};
  }
  r.loss_initial = run.loss_initial;
  r.loss_final = run.loss_final;
  r.loss_held_out = run.loss_held_out;
  return r;
}

std::string validation_text(const ValidationReport& r) {
  const std::string kernels = r.framework == "pytorch_eager"    ? "PyTorch eager's (training.framework \"pytorch_eager\")"
                              : r.framework == "trainsim_train" ? "trainsim-train's (training.framework \"trainsim_train\")"
                                                                : "fused (training.framework \"fused\")";
  std::string out = fmt::format("trainsim validate: {}\n{:<18}{}\n{:<18}{}\n{:<18}{}\n\n", r.run_file, "measured on",
                                r.device, "kernels", kernels, "compute costs", r.compute_model);
  out += fmt::format("{:<24}{:>14}{:>14}{:>9}\n", "", "predicted", "measured", "error");
  out += fmt::format("{:<24}{:>14}{:>14}{:>9}\n", "step (ms)", milliseconds(r.step.predicted),
                     milliseconds(r.step.measured), percent(r.step.error()));
  out += "per kernel class (ms per step)\n";
  for (const ValidationRow& c : r.kernel_classes) {
    if (c.predicted == 0.0 && c.measured == 0.0) continue;
    out += fmt::format("  {:<22}{:>14}{:>14}{:>9}\n", c.name, milliseconds(c.predicted), milliseconds(c.measured),
                       percent(c.error()));
  }
  if (r.peak_memory) {
    constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
    out += fmt::format("{:<24}{:>14.2f}{:>14.2f}{:>9}\n", "peak memory (GiB)", r.peak_memory->predicted / kGiB,
                       r.peak_memory->measured / kGiB, percent(r.peak_memory->error()));
  }
  if (r.loss_initial || r.loss_final || r.loss_held_out) {
    const auto value = [](const std::optional<double>& v) { return v ? fmt::format("{:.4f}", *v) : std::string("-"); };
    out += fmt::format("\nloss (measured)   initial {}, final {}, held-out {}\n", value(r.loss_initial),
                       value(r.loss_final), value(r.loss_held_out));
  }
  return out;
}

nlohmann::ordered_json validation_json(const ValidationReport& r, const std::string& predicted_result_file,
                                       const std::string& predicted_timeline_file,
                                       const std::string& measured_timeline_file) {
  nlohmann::ordered_json j;
  j["format"] = "trainsim-validation";
  j["version"] = 1;
  j["measured_run"] = r.run_file;
  j["device"] = r.device;
  j["framework"] = r.framework;
  j["compute_model"] = r.compute_model;
  j["step_time_s"] = row_json(r.step);
  nlohmann::ordered_json classes = nlohmann::ordered_json::object();
  for (const ValidationRow& c : r.kernel_classes) classes[c.name] = row_json(c);
  j["kernel_class_s"] = classes;
  j["peak_memory_bytes"] = r.peak_memory ? row_json(*r.peak_memory) : nlohmann::ordered_json(nullptr);
  j["predicted_result"] = predicted_result_file;
  j["predicted_timeline"] = predicted_timeline_file;
  j["measured_timeline"] = measured_timeline_file.empty() ? nlohmann::ordered_json(nullptr)
                                                          : nlohmann::ordered_json(measured_timeline_file);
  return j;
}

}  // namespace trainsim::report
