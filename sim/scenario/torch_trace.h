#pragma once
// PyTorch profiler traces (torch.profiler's Chrome trace, Kineto's JSON) as measured
// runs (docs/pytorch-traces.md): the GPU kernels of each profiled step by stream, NCCL's
// among them, each step's time, its time per kernel class and its exposed
// communication; one file per rank.
#include <array>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "config/kernel_class_names.h"
#include "scenario/measured_run.h"

namespace trainsim::scenario {

// Which pass launched a kernel: the training loop's thread (forward, optimizer), or
// another (autograd's backward threads); unknown without the launch's thread.
enum class TracePass { kUnknown, kForward, kBackward };

// One GPU activity (kernel, memcpy, memset), in nanoseconds from the trace's clock.
struct TraceKernel {
  std::string name;
  std::int64_t stream = 0;
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::size_t kernel_class = 0;  // index into config::kKernelClasses
  TracePass pass = TracePass::kUnknown;
  [[nodiscard]] bool communication() const;  // NCCL's
};

// One ProfilerStep#N: the kernels its host range launched, in start order.
struct TraceStep {
  long long number = 0;
  std::vector<TraceKernel> kernels;
  // From its first kernel's start to the next step's first kernel's start (the step
  // as the training loop repeats it); the last step, which has no next, from its
  // first kernel's start to its last kernel's end.
  double time_s = 0.0;
  bool timed = false;  // time_s is a period to the next step (or the trace's only step)
  std::array<double, config::kKernelClasses.size()> class_s{};  // kernel time by class; NCCL's apart
  double communication_s = 0.0;  // NCCL kernels' time
  double exposed_communication_s = 0.0;  // NCCL kernels running while no other kernel runs
  // Of time_s, the time no kernel ran: the GPU waiting for the host, a data loader or
  // another rank.
  double gpu_idle_s = 0.0;
  // The host's operators and CUDA runtime calls that began inside the step's
  // ProfilerStep#N range, any thread, as the length of their union.
  double host_ops_s = 0.0;
};

// One rank's trace.
struct TorchTrace {
  std::string file;
  int rank = 0;
  std::string device_name;
  std::vector<TraceStep> steps;  // by step number
  std::size_t kernels_outside_steps = 0;  // launched outside every ProfilerStep#N
};

// Whether `text` is a Chrome trace (a "traceEvents" array) rather than a trainsim file;
// the file's first 64 KiB are enough (a file that cannot be read is not one).
bool looks_like_torch_trace(std::string_view text);
bool is_torch_trace_file(const std::filesystem::path& path);

// Parses one trace; `file` names it in messages (ScenarioError: file, JSON path,
// expected, found). `fallback_rank` is its rank when the trace has no distributedInfo.
TorchTrace parse_torch_trace(std::string_view text, const std::string& file, int fallback_rank = 0);
TorchTrace read_torch_trace(const std::filesystem::path& path, int fallback_rank = 0);

// The measured run the traces of one job make, for `trainsim validate` and the GUI:
// the step is the median over timed steps of the slowest rank's time; kernel classes
// and exposed communication ("all_reduce") are means over ranks and timed steps.
// `gpus` is the job's GPU count, `framework` whose kernels ran it (the scenario's
// training.framework: "fused" or "pytorch_eager").
MeasuredRun measured_run_from_traces(const std::vector<TorchTrace>& traces, long long gpus, std::string framework);

}  // namespace trainsim::scenario
