#pragma once
// The cluster as a graph (Boost.Graph): GPUs, each node's switch (NVSwitch or a
// PCIe switch), NICs and network switches, joined by directed links with a
// capacity (achievable bytes/s) and a latency. A cable is two links, one per
// direction. Builders for the usual fabrics live in topology_builders.h.
//
// Every GPU hangs off its node switch by an up and a down link; every NIC hangs
// off the node switch too (the data of any GPU reaches any NIC of its node over
// NVLink, as NCCL's PXN does), and one cable joins a NIC to the network switch
// it is plugged into.
#include <cstdint>
#include <string>
#include <vector>

#include <boost/graph/adjacency_list.hpp>

namespace trainsim::net {

enum class VertexKind : std::uint8_t { kGpu, kNodeSwitch, kNic, kSwitch };
enum class LinkKind : std::uint8_t { kNvlink, kHost, kNicCable, kFabric };

struct VertexData {
  VertexKind kind = VertexKind::kSwitch;
  int node = -1;   // GPUs, node switches, NICs: the node they sit in
  int index = -1;  // GPU: local rank; NIC: rail; switch: its number among switches
  int tier = 0;    // switches: 1 = leaf (or router), 2 = spine/aggregation, 3 = core
  // Fat-tree switches: the leaf group a leaf serves (its leaf, or its rail group), the
  // pod an aggregation switch serves; -1 otherwise (a shared cluster's contention).
  int group = -1;
};

struct LinkData {
  std::uint32_t id = 0;
  double capacity = 0.0;  // B/s
  double latency = 0.0;   // s
  LinkKind kind = LinkKind::kFabric;
};

using TopologyGraph =
    boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS, VertexData, LinkData>;
using VertexId = std::uint32_t;

struct LinkView {
  VertexId from = 0;
  VertexId to = 0;
  double capacity = 0.0;
  double latency = 0.0;
  LinkKind kind = LinkKind::kFabric;
};

class Topology {
 public:
  // The GPUs, node switches and NICs of `num_nodes` nodes; the builders add the
  // network switches and cables.
  Topology(int num_nodes, int gpus_per_node, int nics_per_node, double nvlink_capacity, double nvlink_latency,
           double host_capacity);

  VertexId add_switch(int tier, std::string name, int group = -1);
  // A full mesh inside every node (AMD Infinity Fabric, docs/model.md "Mesh
  // fabrics"): a cable between every two GPUs of a node. GPU-to-GPU routes
  // inside a node then take it; the node switch carries only GPU-NIC traffic.
  void add_mesh(double link_capacity, double link_latency);
  [[nodiscard]] bool mesh() const { return !mesh_.empty(); }
  // The direct link src -> dst of two GPUs of one node of a mesh.
  [[nodiscard]] std::uint32_t mesh_link(long long src, long long dst) const;
  // A cable: two links, a -> b and b -> a. Returns the id of a -> b (b -> a is id + 1).
  std::uint32_t add_cable(VertexId a, VertexId b, double capacity, double latency, LinkKind kind);

  [[nodiscard]] int num_nodes() const { return num_nodes_; }
  [[nodiscard]] int gpus_per_node() const { return gpus_per_node_; }
  [[nodiscard]] int nics_per_node() const { return nics_per_node_; }
  [[nodiscard]] long long num_gpus() const { return static_cast<long long>(num_nodes_) * gpus_per_node_; }
  [[nodiscard]] int num_switches() const { return static_cast<int>(switches_.size()); }
  [[nodiscard]] std::size_t num_links() const { return links_.size(); }

  [[nodiscard]] VertexId gpu(long long rank) const;
  [[nodiscard]] VertexId node_switch(int node) const;
  [[nodiscard]] VertexId nic(int node, int rail) const;
  [[nodiscard]] VertexId switch_vertex(int index) const { return switches_.at(static_cast<std::size_t>(index)); }
  // The NIC a GPU uses by default: the one of its own PCIe complex.
  [[nodiscard]] int rail_of_gpu(int local_rank) const { return local_rank * nics_per_node_ / gpus_per_node_; }

  // Links of the node-local part of a path.
  [[nodiscard]] std::uint32_t gpu_up(long long rank) const { return gpu_up_.at(static_cast<std::size_t>(rank)); }
  [[nodiscard]] std::uint32_t gpu_down(long long rank) const { return gpu_up(rank) + 1; }
  [[nodiscard]] std::uint32_t host_out(int node, int rail) const;  // node switch -> NIC
  [[nodiscard]] std::uint32_t host_in(int node, int rail) const { return host_out(node, rail) + 1; }
  // The NIC's cable into the network (NIC -> switch) and back; NICs have one. The
  // uplink is either link of its cable (a custom cable may name the switch first),
  // so the downlink is the other one.
  [[nodiscard]] std::uint32_t nic_uplink(int node, int rail) const;
  [[nodiscard]] std::uint32_t nic_downlink(int node, int rail) const { return other_direction(nic_uplink(node, rail)); }
  // A cable's two links are ids 2k (a -> b) and 2k + 1 (b -> a).
  [[nodiscard]] static std::uint32_t other_direction(std::uint32_t link) { return link ^ 1U; }
  [[nodiscard]] bool nic_connected(int node, int rail) const;
  // The network switch a NIC is plugged into.
  [[nodiscard]] VertexId nic_switch(int node, int rail) const;

  // A link's capacity after building: a mixed cluster's pools (topology_builders.h).
  void set_capacity(std::uint32_t link, double capacity);
  [[nodiscard]] LinkView link(std::uint32_t id) const;
  [[nodiscard]] const TopologyGraph& graph() const { return graph_; }
  [[nodiscard]] const VertexData& vertex(VertexId v) const { return graph_[v]; }
  [[nodiscard]] std::string vertex_name(VertexId v) const;
  [[nodiscard]] std::string link_name(std::uint32_t id) const;

  // One line for summaries, e.g. "2-tier fat tree, radix 64: 8 leaves, 32 spines".
  std::string description;
  bool in_switch_reduction = false;  // the node switch can reduce (NVLS)
  double nvls_rate = 0.0;     // B/s a GPU moves through in-switch reductions
  double nvls_latency = 0.0;  // s, fixed cost of one in-switch all_reduce
  double nvls_loop_overhead = 0.0;  // s per iteration of the NVLS chunk loop
  double ring_buffer = 0.0;         // B a ring step pipelines through inside a node
  double gather_scatter_startup = 0.0;  // s, fixed cost of each all_gather and reduce_scatter
  double all_to_all_rate = 0.0;         // B/s a GPU's all_to_all moves inside a node; 0 = its link's
  double all_to_all_startup = 0.0;      // s, fixed cost of each all_to_all

 private:
  TopologyGraph graph_;
  std::vector<TopologyGraph::edge_descriptor> links_;
  std::vector<VertexId> switches_;
  std::vector<std::string> switch_names_;
  std::vector<std::uint32_t> gpu_up_;
  std::vector<std::uint32_t> mesh_;        // per node, k x k: link i -> j (empty: no mesh)
  std::vector<std::uint32_t> host_out_;    // per NIC (node * nics + rail)
  std::vector<std::uint32_t> nic_uplink_;  // per NIC; kNone until cabled
  int num_nodes_;
  int gpus_per_node_;
  int nics_per_node_;
  VertexId first_node_switch_ = 0;
  VertexId first_nic_ = 0;
};

}  // namespace trainsim::net
