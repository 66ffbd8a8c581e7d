#pragma once
// What a scenario's "failures" section says, resolved to SI units (plain data;
// scenario/parse_failures.cpp fills it, docs/scenario.md lists the keys and
// docs/reliability.md explains the model).
#include <cstdint>
#include <optional>
#include <string_view>

namespace trainsim::faults {

enum class Distribution { kExponential, kWeibull };
enum class Component { kGpu, kNode, kLink, kSwitch };
inline constexpr int kNumComponents = 4;
std::string_view to_string(Component c);

// What the job does with a node taken out by a failure.
enum class RecoveryPolicy {
  kHotSpare,       // swap in a spare node and restart (wait for a repair when none is free)
  kElasticShrink,  // restart at once on fewer data-parallel replicas; rejoin after the repair
  kWaitForRepair   // restart once the node is repaired
};

enum class CheckpointMode {
  kBlocking,  // training stops while the checkpoint is written to storage
  kAsync      // training stops for the copy to host memory; storage is written in the background
};

// Failures per 1000 node-days (Kokolis et al., HPCA'25, as in
// shared/validation/PUBLIC_DATA.md section 4): 6.50 on the larger of Meta's two
// A100 research clusters. It gives 1000 / 6.5 / 2048 days = 1.80 h mean time to
// failure at 16,384 GPUs (2048 nodes), the paper's projection.
inline constexpr double kDefaultFailuresPer1000NodeDays = 6.50;
// BLOOM-176B wrote its 2.3 TB checkpoint in about 40 s (PUBLIC_DATA.md section 4).
inline constexpr double kDefaultCheckpointWriteBandwidth = 2.3e12 / 40.0;
// MegaScale: detection and diagnosis within 10 minutes (PUBLIC_DATA.md section 4).
inline constexpr double kDefaultDetectionTime = 600.0;
// MegaScale: catch-up from the checkpoint within 15 minutes, of which the reload
// is priced separately; 10 min is DESIGN.md's scenario example.
inline constexpr double kDefaultRestartOverhead = 600.0;
// MegaScale: about 10% slower stragglers (PUBLIC_DATA.md section 4).
inline constexpr double kDefaultStragglerSlowdown = 0.10;
// PCIe 4.0 x16 (16 GT/s x 16 lanes, 128b/130b): about 32 GB/s per direction, the
// device-to-host path of an A100; newer GPUs on PCIe 5.0 have twice that.
inline constexpr double kDefaultHostCopyBandwidth = 32e9;

// One failure process: `mtbf` per component, `count` components in the job.
struct FailureProcess {
  Component component = Component::kNode;
  double mtbf_s = 0.0;  // mean time between failures of one component
  long long count = 0;  // filled by the caller that knows the cluster (0: from the cluster)
};

struct FailureConfig {
  // Per-component MTBFs; an empty optional is "not given". When none is given
  // (and no rate), nodes fail at kDefaultFailuresPer1000NodeDays, all causes.
  std::optional<double> gpu_mtbf_s, node_mtbf_s, link_mtbf_s, switch_mtbf_s;
  std::optional<double> failures_per_1000_node_days;  // job-level rate per node, all causes
  Distribution distribution = Distribution::kExponential;
  double weibull_shape = 1.0;

  // Stragglers: a fraction of the GPUs, each this much slower (0.1: 10% slower).
  double straggler_fraction = 0.0;
  double straggler_slowdown = kDefaultStragglerSlowdown;
  // Degraded or flapping links: episodes per 1000 node-days, each lasting
  // `degraded_link_duration_s` with the inter-node bandwidth scaled by `degraded_link_bandwidth`.
  double degraded_links_per_1000_node_days = 0.0;
  double degraded_link_duration_s = 3600.0;
  double degraded_link_bandwidth = 0.5;
  // Planned maintenance: every `maintenance_interval_s`, down for `maintenance_duration_s`.
  std::optional<double> maintenance_interval_s;
  double maintenance_duration_s = 0.0;

  // Recovery.
  double detection_time_s = kDefaultDetectionTime;
  double restart_overhead_s = kDefaultRestartOverhead;
  RecoveryPolicy policy = RecoveryPolicy::kHotSpare;
  std::optional<long long> hot_spares;  // spare nodes; none given: as many as needed
  std::optional<double> repair_time_s;  // needed by wait_for_repair, elastic_shrink and a finite spare pool

  // Checkpoints.
  std::optional<double> checkpoint_interval_s;  // none: "auto" (Daly)
  double checkpoint_write_bandwidth = kDefaultCheckpointWriteBandwidth;  // B/s, the whole job to storage
  std::optional<double> checkpoint_read_bandwidth;                        // B/s; none: the write bandwidth
  CheckpointMode checkpoint_mode = CheckpointMode::kBlocking;
  double host_copy_bandwidth = kDefaultHostCopyBandwidth;  // B/s per GPU, device to host (async mode)
  // Where host_copy_bandwidth came from: failures.host_copy_bandwidth, the
  // calibration profile's largest device-to-host copy, the platform's host link
  // (hw::HostSpec, per GPU with all copying), or kDefaultHostCopyBandwidth.
  enum class Source : std::uint8_t { kDefault, kScenario, kProfile, kPlatform };
  Source host_copy_source = Source::kDefault;
  std::optional<double> checkpoint_size_bytes;             // none: from the model (checkpoint.h)

  // Monte Carlo.
  std::uint64_t seed = 1;
  int trials = 100;
  int threads = 0;  // 0: every core
};

}  // namespace trainsim::faults
