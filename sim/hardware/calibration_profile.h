#pragma once
// A calibration profile as plain data: what trainsim-calibrate measured on one
// machine (docs/calibration.md, "The profile format"; DESIGN.md, "Calibration
// profile"). Times are seconds, sizes bytes. Reading the file lives in
// scenario/calibration_reader.h; pricing kernels with it in
// hardware/profiled_compute_model.h.
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hardware/kernel_id.h"
#include "hardware/precision.h"

namespace trainsim::hw {

struct ProfileDevice {
  std::string name;                // as the driver reports it, e.g. "NVIDIA H200"
  std::string compute_capability;  // "9.0"
  long long multiprocessors = 0;   // 0: not recorded
  double memory_bytes = 0.0;
  double l2_bytes = 0.0;
  long long count = 1;  // GPUs in the machine
  // Device memory in use right after the CUDA context was created, before any
  // allocation (cudaMemGetInfo: total - free); 0: not measured.
  double context_bytes = 0.0;
};

// One measured GEMM C[m x n] = A[m x k] B[k x n].
struct GemmRow {
  Precision dtype = Precision::kBf16;
  double m = 0.0;
  double n = 0.0;
  double k = 0.0;
  double seconds = 0.0;
};

// One run of one of our kernels. `id` is kNone for a name this trainsim does not
// know (kept, so that a tool rewriting the profile loses nothing; never priced).
struct KernelRow {
  std::string name;
  KernelId id = KernelId::kNone;
  std::vector<std::pair<std::string, double>> shape;  // e.g. {"cols", 768}, {"rows", 8192}, sorted by name
  double bytes = 0.0;  // the fewest bytes the kernel must move through HBM
  double flops = 0.0;
  double seconds = 0.0;

  // The shape value named `key`, if the row has it.
  [[nodiscard]] std::optional<double> shape_value(std::string_view key) const;
};

enum class CopyKind { kDeviceToDevice, kHostToDevice, kDeviceToHost };

struct CopyRow {
  CopyKind kind = CopyKind::kDeviceToDevice;
  double bytes = 0.0;  // device_to_device: read plus write
  double seconds = 0.0;
  double gbps = 0.0;  // bytes / seconds / 1e9 as the harness printed it (0: absent)
};

enum class CollectiveScope { kIntraNode, kInterNode };

// nccl-tests' columns (docs/calibration.md, "collectives").
struct CollectiveRow {
  std::string op;  // all_reduce, all_gather, reduce_scatter, all_to_all, broadcast, reduce, send_recv
  CollectiveScope scope = CollectiveScope::kIntraNode;
  long long ranks = 0;
  // Distinct nodes (hosts) the ranks ran on, ranks / nodes on each; 0: not
  // recorded (inter_node rows of older profiles: they price nothing).
  long long nodes = 0;
  double bytes = 0.0;
  double seconds = 0.0;
  double algbw_gbps = 0.0;
  double busbw_gbps = 0.0;
  long long wrong = 0;
};

// t = alpha + bytes x factor / busbw, fitted per (op, scope, ranks, nodes).
struct CollectiveFit {
  std::string op;
  CollectiveScope scope = CollectiveScope::kIntraNode;
  long long ranks = 0;
  long long nodes = 0;  // as CollectiveRow::nodes
  double alpha_s = 0.0;
  double busbw_gbps = 0.0;
};

// How fast a framework's host thread issues kernels, measured by running its
// training step on tiny tensors, where the GPU waits for the host
// (scripts/pytorch-kernel-reference.py; docs/model.md, "Host dispatch").
struct HostDispatch {
  std::string framework;     // e.g. "torch 2.11.0+cu130"
  double forward_s = 0.0;    // host seconds per kernel of the forward pass (Python modules)
  double backward_s = 0.0;   // ... of the backward pass (the autograd engine's thread)
  double optimizer_s = 0.0;  // host seconds of one optimizer.step() (0: not measured)
  // The same step captured whole as one CUDA graph and replayed: what a kernel adds to
  // the kernels' time, (graph step - kernel time) / kernels (scripts/pytorch-graph-step.py;
  // 0: not measured).
  double graph_kernel_s = 0.0;
};

struct CalibrationProfile {
  int format = 1;         // "trainsim_calibration"
  bool complete = true;   // false: the harness was still running or was interrupted
  std::string date;       // ISO 8601, UTC
  std::string command;
  std::string host;
  ProfileDevice device;
  // Library versions by name ("driver", "cuda_runtime", "cublas", "nccl", ... as
  // the harness names them), sorted by name; a library not recorded is absent.
  std::vector<std::pair<std::string, std::string>> versions;
  std::vector<GemmRow> gemm;
  // FP8 GEMMs with cuBLASLt's fast accumulation ("accumulation": "fast"), as
  // Transformer Engine runs its forward GEMMs; `gemm`'s fp8 rows are the default
  // promoted accumulation of its gradient GEMMs. Kept apart so neither table mixes
  // the two; nothing prices them yet.
  std::vector<GemmRow> gemm_fp8_fast;
  // GEMMs measured in a linear layer's backward layouts ("layout": "data_gradient" /
  // "weight_gradient", docs/calibration.md): for a forward GEMM (M, N, K), the data
  // gradient dX = dY W is the row (M, K, N) with W stored [N x K] untransposed, the
  // weight gradient dW = dY^T X the row (N, K, M) with dY and X stored [M x .]. `gemm`
  // holds the forward layout's rows ("layout" absent or "forward").
  std::vector<GemmRow> gemm_data_gradient;
  std::vector<GemmRow> gemm_weight_gradient;
  std::vector<KernelRow> kernels;
  std::vector<CopyRow> copies;
  std::optional<double> launch_overhead_s;
  std::optional<HostDispatch> host_dispatch;
  std::vector<CollectiveRow> collectives;
  std::vector<CollectiveFit> collective_fits;

  // The version of library `name`, empty when not recorded.
  [[nodiscard]] std::string version(std::string_view name) const;
};

// Whether a profile measured on `device_name` may price a cluster of `gpu_name`:
// the model token of the GPU name (its first '-'-separated word, "H200" of
// "H200-SXM-141GB") is one of the words of the device name ("NVIDIA H200"),
// ignoring case. Loose on purpose: drivers name boards in their own words.
bool profile_matches_gpu(std::string_view device_name, std::string_view gpu_name);

}  // namespace trainsim::hw
