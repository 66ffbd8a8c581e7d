#pragma once
// The machine: nodes (servers) of identical GPUs, scale-up domains of one or more
// nodes whose GPUs one NVLink switch fabric joins (the "intra_node" fabric), and
// NICs into an inter-node network between the domains. Defaults come from the GPU preset's usual
// platform (scenarios/hardware/*.json, "platform"); docs/scenario.md lists the keys.
#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "hardware/gpu_spec.h"
#include "hardware/ownership.h"

namespace trainsim::hw {

// Uptime Institute Global Data Center Survey 2023: the industry's average
// annual PUE, 1.58 (flat between 1.55 and 1.59 since 2020). The survey average
// rather than a hyperscaler's fleet figure (about 1.1): a plan should not
// assume the best facility; give your own with "cluster.pue".
inline constexpr double kDefaultPue = 1.58;

struct IntraNodeFabric {
  // "nvswitch", "pcie", or "mesh": a direct link between every two GPUs of a
  // node (AMD Infinity Fabric), `bandwidth` then being one link's.
  std::string fabric = "nvswitch";
  double bandwidth = 0.0;             // B/s per GPU per direction (mesh: per link)
  double latency = 0.0;               // s per ring step between two GPUs of a node
  double bandwidth_efficiency = 1.0;  // achievable bus bandwidth / bandwidth
  // In-switch reduction (NVLink SHARP, "NVLS"): achievable fraction of the
  // per-GPU link bandwidth for multimem reductions; 0 when the switch has none.
  double nvls_efficiency = 0.0;
  // Fixed cost of one in-switch all_reduce (s): NCCL's NVLS kernels have a far
  // longer start-up than a ring step; fitted per preset at the 1 MiB point.
  double nvls_latency = 0.0;
  // Cost of one iteration of NCCL's NVLS chunk loop (s); the chunk shrinks with
  // the message, so mid-size messages take more iterations (docs/model.md).
  double nvls_loop_overhead = 0.0;
  // Bytes a ring step pipelines through (NCCL_BUFFSIZE, 4 MiB by default):
  // while a rank's slice S/n is smaller, each step waits for the one before.
  double ring_buffer = 4.0 * 1024.0 * 1024.0;
  // Fixed time each all_gather and reduce_scatter call takes beyond its
  // algorithm's steps (s): measured on B200 through torch.distributed, as
  // frameworks issue them (docs/model.md, "Defaults and where they come from").
  double gather_scatter_startup = 0.0;
  // All-to-all inside a node (NCCL's point-to-point sends through the switch):
  // the fraction of `bandwidth` a GPU moves it at (0: as any transfer, at the
  // GPU link's bandwidth x bandwidth_efficiency) and each call's fixed start-up (s).
  double all_to_all_efficiency = 0.0;
  double all_to_all_startup = 0.0;
};

// A NIC of the cluster: NIC `rail` of node `node` ("node<N>.nic<R>" in a scenario).
struct NicId {
  int node = 0;
  int rail = 0;
};

// One end of a custom cable: a NIC, or a switch (every other name; a switch exists
// once named). The scenario reader types the ends, so the network builds from
// `nic` and reads no text.
struct CableEnd {
  std::string name;          // as written: the switch's name, and for messages
  std::optional<NicId> nic;  // set when the end is a NIC
};

// A cable of a custom topology.
struct CustomLink {
  CableEnd a;
  CableEnd b;
  double bandwidth = 0.0;  // B/s per direction
  double latency = 0.0;    // s
};

struct InterNodeNetwork {
  // fat_tree, rail_optimized, torus2d, torus3d, dragonfly or custom.
  std::string topology = "fat_tree";
  int nics_per_node = 8;
  double nic_bandwidth = 0.0;  // B/s per NIC per direction
  double latency = 0.0;        // s per ring step between GPUs of two nodes (one leaf apart)
  double bandwidth_efficiency = 1.0;
  double oversubscription = 1.0;  // leaf downlink : uplink bandwidth
  int switch_radix = 64;
  int rails = 0;                  // rail_optimized: rail groups (0: one per NIC of a node)
  [[nodiscard]] int rail_groups() const { return rails == 0 ? nics_per_node : rails; }
  int tiers = 0;                  // fat trees: 1, 2 or 3 switch tiers (0: the fewest that fit)
  double switch_latency = 0.0;    // s added per switch-to-switch hop beyond the first switch
  std::vector<int> torus_dims;    // torus: nodes per dimension (empty: as cubic as possible)
  int multipath = 1;              // ECMP paths a large flow is spread over
  // How switches choose among equal-cost paths: "ecmp" (a hash per flow, as Ethernet
  // switches do) or "d_mod_k" (by destination, as InfiniBand fat-tree routing does).
  std::string routing = "ecmp";
  std::vector<CustomLink> custom_links;
  // A job's view of a shared cluster (`trainsim cluster`, docs/cluster.md,
  // "Placement"): the leaf group each of the job's nodes sits under, numbered as
  // pod x groups_per_pod + slot so pods are kept (fat_tree: a leaf; rail_optimized:
  // the `rails` leaves of one node group). Empty: nodes packed in order.
  std::vector<int> node_groups;
  // The part of each leaf group's uplink bandwidth the job has, by the group's number
  // in node_groups (docs/cluster.md, "Contention"); missing: 1 (all of it).
  std::vector<double> group_uplink_share;
  // The same for each pod's uplinks to the core switches of a 3-tier tree, by the pod's
  // number (node_groups / groups per pod).
  std::vector<double> pod_uplink_share;
};

// A GPU's link to its host's memory and the host memory behind it (docs/model.md,
// "CPU activation offload"): pinned copies on the copy engines, one GPU alone,
// per direction; GPUs that share one link (a PCIe switch's uplink, one Grace's
// NVLink-C2C and memory) each get 1/gpus_per_link of it when all of them copy
// at once, as every rank of a step does. 0: not known.
struct HostSpec {
  double host_to_device = 0.0;  // B/s
  double device_to_host = 0.0;  // B/s
  int gpus_per_link = 1;
  double memory_per_gpu = 0.0;  // bytes of host memory per GPU (the node's / its GPUs)
  // Parameters per second the host's CPUs update with Adam (fp32 master weights and
  // moments), all cores of the node on one process's arrays (CPU optimizer offload).
  double cpu_adam_rate = 0.0;

  [[nodiscard]] bool link_known() const { return host_to_device > 0.0 && device_to_host > 0.0; }
  [[nodiscard]] double host_to_device_per_gpu() const { return host_to_device / gpus_per_link; }
  [[nodiscard]] double device_to_host_per_gpu() const { return device_to_host / gpus_per_link; }
};

// Nodes of one GPU type in a mixed cluster (docs/model.md, "Heterogeneous jobs"):
// their GPU, NVLink fabric, NIC speed and host; the network's other settings, the
// node size and the facility are the cluster's.
struct GpuPool {
  GpuSpec gpu;
  int num_nodes = 0;
  IntraNodeFabric intra_node;
  double nic_bandwidth = 0.0;  // B/s per NIC per direction
  HostSpec host;
  std::optional<double> price_per_gpu_hour;  // USD
};

struct ClusterSpec {
  // One cluster-wide GPU; with `pools`, pool 0's (as are intra_node and
  // inter_node.nic_bandwidth; `host` is the weakest pool's, for the checks).
  GpuSpec gpu;
  // Servers (a DGX, an HGX board's host, a GB200 compute tray): the unit of host
  // memory, power overhead, NICs, failures and spares.
  int num_nodes = 1;
  int gpus_per_node = 8;
  // Nodes one scale-up fabric joins (docs/model.md, "Scale-up domains"): 1 for an
  // 8-GPU server whose NVSwitches are its own, 18 for a GB200 NVL72 rack of 4-GPU
  // trays. The network model's nodes are these domains; num_nodes is a multiple.
  int nodes_per_domain = 1;
  IntraNodeFabric intra_node;
  InterNodeNetwork inter_node;
  HostSpec host;
  std::optional<double> price_per_gpu_hour;  // USD
  std::optional<Ownership> ownership;        // an owned cluster's costs (plan's TCO)
  double pue = kDefaultPue;                  // the facility's power usage effectiveness (hardware/power.h)
  // Relative standard deviation of the GPUs' sustained speed across the cluster
  // (docs/model.md, "Step-time variability"): 0 = every GPU alike.
  double gpu_speed_spread = 0.0;
  // A mixed cluster's pools, nodes numbered pool after pool; empty: every node is
  // `gpu` with `intra_node`, inter_node.nic_bandwidth and `host`.
  std::vector<GpuPool> pools;

  [[nodiscard]] bool heterogeneous() const { return pools.size() > 1; }
  [[nodiscard]] int num_pools() const { return pools.empty() ? 1 : static_cast<int>(pools.size()); }
  // The pool node `node` belongs to (0 without pools).
  [[nodiscard]] int pool_of_node(int node) const {
    int first = 0;
    for (std::size_t k = 0; k < pools.size(); ++k) {
      first += pools[k].num_nodes;
      if (node < first) return static_cast<int>(k);
    }
    return 0;
  }
  [[nodiscard]] int pool_of_rank(long long rank) const {
    return pool_of_node(static_cast<int>(rank / gpus_per_node));
  }
  // Pool k's GPU and nodes (the cluster's own without pools).
  [[nodiscard]] const GpuSpec& pool_gpu(int k) const {
    return pools.empty() ? gpu : pools.at(static_cast<std::size_t>(k)).gpu;
  }
  [[nodiscard]] int pool_nodes(int k) const {
    return pools.empty() ? num_nodes : pools.at(static_cast<std::size_t>(k)).num_nodes;
  }
  // The datasheet peak per GPU at `p`, averaged over the cluster's GPUs (MFU's
  // denominator: the job's peak over its GPUs).
  [[nodiscard]] double mean_peak(Precision p) const {
    if (pools.empty()) return gpu.peak(p);
    double sum = 0.0;
    for (int k = 0; k < num_pools(); ++k) sum += pool_gpu(k).peak(p) * static_cast<double>(pool_gpus(k));
    return sum / static_cast<double>(num_gpus());
  }
  // The least GPU memory of the cluster's pools: a mixed cluster's memory check
  // holds every stage to its smallest GPU (docs/model.md, "Heterogeneous jobs").
  [[nodiscard]] const GpuSpec& smallest_memory_gpu() const {
    const GpuSpec* g = &gpu;
    for (const GpuPool& p : pools)
      if (p.gpu.memory_capacity_bytes < g->memory_capacity_bytes) g = &p.gpu;
    return *g;
  }
  [[nodiscard]] long long pool_gpus(int k) const { return static_cast<long long>(pool_nodes(k)) * gpus_per_node; }

  [[nodiscard]] long long num_gpus() const {
    return static_cast<long long>(num_nodes) * gpus_per_node;
  }
  // The scale-up domains: the network's nodes (GPUs joined by the intra-node
  // fabric, NICs to the inter-node network).
  [[nodiscard]] int num_domains() const { return num_nodes / nodes_per_domain; }
  [[nodiscard]] int gpus_per_domain() const { return gpus_per_node * nodes_per_domain; }
  [[nodiscard]] int nics_per_domain() const { return inter_node.nics_per_node * nodes_per_domain; }
  // Achievable inter-node bandwidth of one GPU: its share of the node's NICs.
  [[nodiscard]] double nic_bandwidth_per_gpu() const {
    return inter_node.nic_bandwidth * inter_node.bandwidth_efficiency * inter_node.nics_per_node / gpus_per_node;
  }
  [[nodiscard]] double nvlink_bandwidth() const {
    return intra_node.bandwidth * intra_node.bandwidth_efficiency;
  }
};

}  // namespace trainsim::hw
