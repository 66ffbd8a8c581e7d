#include "network/topology.h"

#include <limits>
#include <stdexcept>

#include <fmt/format.h>

namespace trainsim::net {

namespace {
constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();
}

Topology::Topology(int num_nodes, int gpus_per_node, int nics_per_node, double nvlink_capacity,
                   double nvlink_latency, double host_capacity)
    : num_nodes_(num_nodes), gpus_per_node_(gpus_per_node), nics_per_node_(nics_per_node) {
  if (num_nodes < 1 || gpus_per_node < 1 || nics_per_node < 0)
    throw std::invalid_argument("topology: needs at least one node and one GPU per node");
  const auto gpus = static_cast<std::size_t>(num_gpus());
  const auto nics = static_cast<std::size_t>(num_nodes) * static_cast<std::size_t>(nics_per_node);
  for (std::size_t r = 0; r < gpus; ++r) {
    VertexData v;
    v.kind = VertexKind::kGpu;
    v.node = static_cast<int>(r / static_cast<std::size_t>(gpus_per_node));
    v.index = static_cast<int>(r % static_cast<std::size_t>(gpus_per_node));
    boost::add_vertex(v, graph_);
  }
  first_node_switch_ = static_cast<VertexId>(gpus);
  for (int n = 0; n < num_nodes; ++n) {
    VertexData v;
    v.kind = VertexKind::kNodeSwitch;
    v.node = n;
    boost::add_vertex(v, graph_);
  }
  first_nic_ = static_cast<VertexId>(boost::num_vertices(graph_));
  for (int n = 0; n < num_nodes; ++n)
    for (int r = 0; r < nics_per_node; ++r) {
      VertexData v;
      v.kind = VertexKind::kNic;
      v.node = n;
      v.index = r;
      boost::add_vertex(v, graph_);
    }
  links_.reserve(2 * (gpus + nics));
  gpu_up_.reserve(gpus);
  for (std::size_t r = 0; r < gpus; ++r) {
    const auto node = static_cast<int>(r / static_cast<std::size_t>(gpus_per_node));
    // Half the per-step latency on each side: GPU to GPU costs one step.
    gpu_up_.push_back(add_cable(static_cast<VertexId>(r), node_switch(node), nvlink_capacity, nvlink_latency / 2.0,
                                LinkKind::kNvlink));
  }
  host_out_.reserve(nics);
  for (int n = 0; n < num_nodes; ++n)
    for (int r = 0; r < nics_per_node; ++r)
      host_out_.push_back(add_cable(node_switch(n), nic(n, r), host_capacity, 0.0, LinkKind::kHost));
  nic_uplink_.assign(nics, kNone);
}

void Topology::add_mesh(double link_capacity, double link_latency) {
  const auto k = static_cast<std::size_t>(gpus_per_node_);
  mesh_.assign(static_cast<std::size_t>(num_nodes_) * k * k, kNone);
  for (int n = 0; n < num_nodes_; ++n) {
    const long long first = static_cast<long long>(n) * gpus_per_node_;
    const std::size_t base = static_cast<std::size_t>(n) * k * k;
    for (std::size_t i = 0; i < k; ++i)
      for (std::size_t j = i + 1; j < k; ++j) {
        const std::uint32_t id = add_cable(gpu(first + static_cast<long long>(i)), gpu(first + static_cast<long long>(j)),
                                           link_capacity, link_latency, LinkKind::kNvlink);
        mesh_[base + i * k + j] = id;
        mesh_[base + j * k + i] = id + 1;
      }
  }
}

std::uint32_t Topology::mesh_link(long long src, long long dst) const {
  const VertexData& s = graph_[gpu(src)];
  const VertexData& d = graph_[gpu(dst)];
  if (mesh_.empty() || s.node != d.node || src == dst)
    throw std::logic_error(fmt::format("topology: no mesh link from GPU {} to GPU {}", src, dst));
  const auto k = static_cast<std::size_t>(gpus_per_node_);
  return mesh_[static_cast<std::size_t>(s.node) * k * k + static_cast<std::size_t>(s.index) * k +
               static_cast<std::size_t>(d.index)];
}

VertexId Topology::add_switch(int tier, std::string name, int group) {
  VertexData v;
  v.kind = VertexKind::kSwitch;
  v.index = static_cast<int>(switches_.size());
  v.tier = tier;
  v.group = group;
  const VertexId id = static_cast<VertexId>(boost::add_vertex(v, graph_));
  switches_.push_back(id);
  switch_names_.push_back(std::move(name));
  return id;
}

std::uint32_t Topology::add_cable(VertexId a, VertexId b, double capacity, double latency, LinkKind kind) {
  if (!(capacity > 0.0)) throw std::invalid_argument("topology: a link needs a capacity > 0");
  const auto id = static_cast<std::uint32_t>(links_.size());
  links_.push_back(boost::add_edge(a, b, LinkData{id, capacity, latency, kind}, graph_).first);
  links_.push_back(boost::add_edge(b, a, LinkData{id + 1, capacity, latency, kind}, graph_).first);
  for (VertexId end : {a, b}) {
    const VertexData& v = graph_[end];
    const VertexId other = end == a ? b : a;
    if (v.kind == VertexKind::kNic && graph_[other].kind == VertexKind::kSwitch) {
      std::uint32_t& slot = nic_uplink_.at(static_cast<std::size_t>(v.node) * static_cast<std::size_t>(nics_per_node_) +
                                           static_cast<std::size_t>(v.index));
      if (slot != kNone)
        throw std::invalid_argument("topology: " + vertex_name(end) + " is cabled to two switches; a NIC has one port");
      slot = end == a ? id : id + 1;
    }
  }
  return id;
}

VertexId Topology::gpu(long long rank) const {
  if (rank < 0 || rank >= num_gpus()) throw std::out_of_range(fmt::format("topology: no GPU {}", rank));
  return static_cast<VertexId>(rank);
}

VertexId Topology::node_switch(int node) const {
  if (node < 0 || node >= num_nodes_) throw std::out_of_range(fmt::format("topology: no node {}", node));
  return first_node_switch_ + static_cast<VertexId>(node);
}

VertexId Topology::nic(int node, int rail) const {
  if (node < 0 || node >= num_nodes_ || rail < 0 || rail >= nics_per_node_)
    throw std::out_of_range(fmt::format("topology: no NIC {} on node {}", rail, node));
  return first_nic_ + static_cast<VertexId>(node * nics_per_node_ + rail);
}

std::uint32_t Topology::host_out(int node, int rail) const {
  return host_out_.at(static_cast<std::size_t>(nic(node, rail) - first_nic_));
}

bool Topology::nic_connected(int node, int rail) const {
  return nic_uplink_.at(static_cast<std::size_t>(nic(node, rail) - first_nic_)) != kNone;
}

std::uint32_t Topology::nic_uplink(int node, int rail) const {
  const std::uint32_t id = nic_uplink_.at(static_cast<std::size_t>(nic(node, rail) - first_nic_));
  if (id == kNone) throw std::logic_error("topology: " + vertex_name(nic(node, rail)) + " is not cabled to a switch");
  return id;
}

VertexId Topology::nic_switch(int node, int rail) const { return link(nic_uplink(node, rail)).to; }

void Topology::set_capacity(std::uint32_t link, double capacity) {
  if (!(capacity > 0.0)) throw std::invalid_argument("topology: a link needs a capacity > 0");
  graph_[links_.at(link)].capacity = capacity;
}

LinkView Topology::link(std::uint32_t id) const {
  const auto& e = links_.at(id);
  const LinkData& d = graph_[e];
  return {static_cast<VertexId>(boost::source(e, graph_)), static_cast<VertexId>(boost::target(e, graph_)),
          d.capacity, d.latency, d.kind};
}

std::string Topology::vertex_name(VertexId v) const {
  const VertexData& d = graph_[v];
  switch (d.kind) {
    case VertexKind::kGpu: return fmt::format("gpu{}", v);
    case VertexKind::kNodeSwitch: return fmt::format("node{}.switch", d.node);
    case VertexKind::kNic: return fmt::format("node{}.nic{}", d.node, d.index);
    case VertexKind::kSwitch: return switch_names_.at(static_cast<std::size_t>(d.index));
  }
  return "?";
}

std::string Topology::link_name(std::uint32_t id) const {
  const LinkView l = link(id);
  return vertex_name(l.from) + "->" + vertex_name(l.to);
}

}  // namespace trainsim::net
