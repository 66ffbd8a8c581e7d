#pragma once
// The machine: nodes of identical GPUs joined by an intra-node fabric (NVSwitch)
// and NICs into an inter-node network. Defaults come from the GPU preset's usual
// platform (scenarios/hardware/*.json, "platform").
#include <optional>
#include <string>

#include "hardware/gpu_spec.h"

namespace trainsim::hw {

struct IntraNodeFabric {
  std::string fabric = "nvswitch";
  double bandwidth = 0.0;             // B/s per GPU per direction
  double latency = 0.0;               // s per ring step
  double bandwidth_efficiency = 1.0;  // achievable bus bandwidth / bandwidth
};

struct InterNodeNetwork {
  std::string topology = "fat_tree";
  int nics_per_node = 8;
  double nic_bandwidth = 0.0;  // B/s per NIC per direction
  double latency = 0.0;        // s per ring step
  double bandwidth_efficiency = 1.0;
  double oversubscription = 1.0;
  int switch_radix = 64;
  int rails = 0;  // 0: as many rails as NICs per node
};

struct ClusterSpec {
  GpuSpec gpu;
  int num_nodes = 1;
  int gpus_per_node = 8;
  IntraNodeFabric intra_node;
  InterNodeNetwork inter_node;
  std::optional<double> price_per_gpu_hour;  // USD

  [[nodiscard]] long long num_gpus() const {
    return static_cast<long long>(num_nodes) * gpus_per_node;
  }
  // Achievable inter-node bandwidth of one GPU: its share of the node's NICs.
  [[nodiscard]] double nic_bandwidth_per_gpu() const {
    return inter_node.nic_bandwidth * inter_node.bandwidth_efficiency * inter_node.nics_per_node / gpus_per_node;
  }
  [[nodiscard]] double nvlink_bandwidth() const {
    return intra_node.bandwidth * intra_node.bandwidth_efficiency;
  }
};

}  // namespace trainsim::hw
