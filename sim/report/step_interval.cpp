#include "report/step_interval.h"

#include <cmath>

#include "core/normal_quantile.h"

namespace trainsim::report {

std::optional<StepInterval> step_interval(double iteration_time_s, const Breakdown& b, double kernels_per_step,
                                          long long gpus, double gpu_speed_spread, double kernel_time_cv) {
  if (gpus < 1) return std::nullopt;
  StepInterval i;
  i.gpu_speed_spread = gpu_speed_spread;
  i.kernel_time_cv = kernel_time_cv;
  i.kernels_per_step = kernels_per_step;
  i.gpus = gpus;
  i.scaled_s = b.compute + b.optimizer + b.pipeline_bubble;
  const double jitter = kernels_per_step > 0.0 ? kernel_time_cv * kernel_time_cv / kernels_per_step : 0.0;
  const double s = std::sqrt(gpu_speed_spread * gpu_speed_spread + jitter);
  const auto at = [&](double q) {
    return iteration_time_s + i.scaled_s * s * core::max_normal_quantile(q, static_cast<double>(gpus));
  };
  i.p10 = at(0.1);
  i.p50 = at(0.5);
  i.p90 = at(0.9);
  return i;
}

}  // namespace trainsim::report
