#pragma once
// One profiled step of PyTorch profiler traces in the timeline format (DESIGN.md,
// "Timeline file"; docs/pytorch-traces.md): a lane per rank and CUDA stream, a span per
// kernel, times from the step's first kernel on each rank, so that it opens beside
// the simulated step in trainsim-gui.
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "scenario/torch_trace.h"

namespace trainsim::report {

// The timeline category of a trace kernel: NCCL's by their collective (all_reduce,
// all_gather, reduce_scatter, all_to_all, send), the optimizer's "optimizer", the rest
// by the pass that launched them ("forward", "backward"), else "other".
std::string_view trace_kernel_category(const scenario::TraceKernel& k);

// Step `step` of every trace (each rank's own ProfilerStep#step).
void write_trace_timeline(std::ostream& os, const std::vector<scenario::TorchTrace>& traces, long long step,
                          const std::string& scenario_name);

// One line per rank for `trainsim validate`: its steps, the median timed one, NCCL's
// time and the part of it no other kernel hid, and kernels launched outside every step.
std::string trace_rank_line(const scenario::TorchTrace& t);

// The step the timeline shows: the last step every trace timed.
long long last_common_timed_step(const std::vector<scenario::TorchTrace>& traces);

}  // namespace trainsim::report
