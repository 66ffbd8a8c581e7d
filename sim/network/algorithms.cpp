#include "network/algorithms.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <map>
#include <numeric>
#include <stdexcept>

#include <fmt/format.h>

namespace trainsim::net {

namespace {

constexpr std::array<std::pair<Algorithm, std::string_view>, 8> kNames{{{Algorithm::kAuto, "auto"},
                                                                        {Algorithm::kRing, "ring"},
                                                                        {Algorithm::kTree, "tree"},
                                                                        {Algorithm::kHalvingDoubling, "halving_doubling"},
                                                                        {Algorithm::kHierarchical, "hierarchical"},
                                                                        {Algorithm::kNvls, "nvls"},
                                                                        {Algorithm::kDirect, "direct"},
                                                                        {Algorithm::kPairwise, "pairwise"}}};

// Iterations of NCCL's NVLS chunk loop: each moves 16 channels x `heads` chunks,
// and the chunk shrinks from 128 KiB for messages that would leave channels idle
// (NCCL 2.18, src/enqueue.cc, computeColl: nvlsChannels, nvlsChunkSize).
double nvls_loops(double bytes, double heads) {
  constexpr double kChannels = 16.0;
  const double ops = kChannels * heads;
  double chunk = 128.0 * 1024.0;
  if (bytes < 64.0 * ops * chunk) chunk = 64.0 * 1024.0;
  if (bytes < 8.0 * ops * chunk) chunk = 32.0 * 1024.0;
  if (bytes < 2.0 * ops * chunk) chunk = 16.0 * 1024.0;
  return std::max(1.0, std::ceil(bytes / (ops * chunk)));
}

// Members split into runs of consecutive members on one node.
std::vector<std::vector<long long>> node_blocks(std::span<const long long> members, const Topology& t) {
  std::vector<std::vector<long long>> blocks;
  int node = -1;
  for (long long m : members) {
    const int n = t.vertex(t.gpu(m)).node;
    if (blocks.empty() || n != node) blocks.emplace_back();
    blocks.back().push_back(m);
    node = n;
  }
  return blocks;
}

// How many runs node_blocks() would make and whether they are all as long,
// without building them (unavailable() and candidates() need only that).
struct BlockShape {
  std::size_t count = 0;
  bool uniform = true;
};
BlockShape block_shape(std::span<const long long> members, const Topology& t) {
  BlockShape shape;
  std::size_t first = 0;
  std::size_t length = 0;
  int node = -1;
  for (long long m : members) {
    const int n = t.vertex(t.gpu(m)).node;
    if (shape.count == 0 || n != node) {
      if (shape.count == 1) first = length;
      else if (shape.count > 1 && length != first) shape.uniform = false;
      ++shape.count;
      length = 0;
    }
    ++length;
    node = n;
  }
  if (shape.count > 1 && length != first) shape.uniform = false;
  return shape;
}


// Directed Hamiltonian path c of Walecki's decomposition of the complete graph
// on an even number k = 2m of vertices: path j < m visits j, j+1, j-1, j+2, j-2,
// ..., j+m (mod k); path m + j is path j reversed. The k paths use every directed
// edge once and start at k different vertices (Alspach, "The wonderful Walecki
// construction", Bull. ICA 52, 2008).
std::vector<std::size_t> walecki_path(std::size_t k, std::size_t c) {
  const std::size_t m = k / 2;
  const std::size_t j = c % m;
  std::vector<std::size_t> path{j};
  for (std::size_t t = 1; t < m; ++t) {
    path.push_back((j + t) % k);
    path.push_back((j + k - t) % k);
  }
  path.push_back((j + m) % k);
  if (c >= m) std::reverse(path.begin(), path.end());
  return path;
}

int ring_channels(const std::vector<std::vector<long long>>& blocks, const Topology& t) {
  if (blocks.size() < 2 || t.nics_per_node() == 0) return 1;
  std::size_t widest = 0;
  for (const auto& b : blocks) widest = std::max(widest, b.size());
  return static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(t.nics_per_node()), widest));
}

// Channel c's ring: every node's run rotated by c * len / C, so each channel
// enters a node at a different GPU and crosses between nodes on its own rail
// (NCCL builds its rings so; Jeaugey, "NCCL 2.0", GTC 2017).
// On a mesh, with an even run of k GPUs and a number of channels C dividing it,
// channel c crosses the run along Walecki path c k / C instead, so the channels
// share no link inside a node and each leaves it from its own GPU.
std::vector<long long> channel_ring(const std::vector<std::vector<long long>>& blocks, int c, int channels,
                                    bool mesh) {
  std::vector<long long> seq;
  for (const auto& b : blocks) {
    const auto ch = static_cast<std::size_t>(channels);
    if (mesh && b.size() % 2 == 0 && ch <= b.size() && b.size() % ch == 0) {
      // Every (k / C)-th path: C of the decomposition's, disjoint, from C different GPUs.
      for (std::size_t i : walecki_path(b.size(), static_cast<std::size_t>(c) * (b.size() / ch))) seq.push_back(b[i]);
      continue;
    }
    const std::size_t off = static_cast<std::size_t>(c) * b.size() / static_cast<std::size_t>(channels);
    for (std::size_t i = 0; i < b.size(); ++i) seq.push_back(b[(off + i) % b.size()]);
  }
  return seq;
}

void add(Phase& p, long long src, long long dst, double bytes, int rail) {
  if (src == dst) return;
  p.transfers.push_back({src, dst, bytes, rail, Transfer::Ends::kGpuToGpu, 0.0});
}

// A ring's sends inside one node of a mesh fabric (docs/model.md, "Mesh
// fabrics"): RCCL runs its rings as channels over different links, so a ring of
// k members loads every one of their k (k - 1) directed links alike: shift
// c = 1..k-1 sends per / (k - 1) from member i to member i + c.
void add_mesh_ring(Phase& p, const std::vector<long long>& block, double per) {
  const std::size_t k = block.size();
  for (std::size_t c = 1; c < k; ++c)
    for (std::size_t i = 0; i < k; ++i)
      add(p, block[i], block[(i + c) % k], per / static_cast<double>(k - 1), -1);
}

// A broadcast or reduce inside one node of a mesh: the chain runs as channels
// over different links, one per stride c coprime with k (i -> i + c is then a
// Hamiltonian cycle, the chain that cycle from the root), each with
// per / channels; the strides' links are distinct.
void add_mesh_chains(Phase& p, CollectiveKind kind, const std::vector<long long>& block, long long root,
                     double per) {
  const std::size_t k = block.size();
  const std::size_t r = static_cast<std::size_t>(std::find(block.begin(), block.end(), root) - block.begin());
  std::vector<std::size_t> strides;
  for (std::size_t c = 1; c < k; ++c)
    if (std::gcd(c, k) == 1) strides.push_back(c);
  const double share = per / static_cast<double>(strides.size());
  for (std::size_t c : strides)
    for (std::size_t i = 0; i + 1 < k; ++i) {
      const long long from = block[(r + i * c) % k];
      const long long to = block[(r + (i + 1) * c) % k];
      if (kind == CollectiveKind::kBroadcast) add(p, from, to, share, -1);
      else add(p, to, from, share, -1);
    }
}

Schedule ring(CollectiveKind kind, std::span<const long long> members, double bytes, const Topology& t) {
  const auto blocks = node_blocks(members, t);
  const int channels = ring_channels(blocks, t);
  const auto n = static_cast<double>(members.size());
  Schedule s{Algorithm::kRing, {Phase{}}};
  Phase& p = s.phases.front();
  const bool chain = kind == CollectiveKind::kBroadcast || kind == CollectiveKind::kReduce;
  double per_edge = 0.0;
  if (kind == CollectiveKind::kAllReduce) {
    per_edge = 2.0 * (n - 1.0) / n * bytes;
    p.steps = 2 * static_cast<int>(members.size() - 1);
  } else if (chain) {
    per_edge = bytes;
    p.steps = static_cast<int>(members.size() - 1);
  } else {
    per_edge = (n - 1.0) / n * bytes;
    p.steps = static_cast<int>(members.size() - 1);
  }
  per_edge /= channels;
  const bool mesh_node = t.mesh() && blocks.size() == 1;
  if (blocks.size() == 1 && !chain && p.steps > 1)
    p.sized = SizeLatency{.fill_steps = static_cast<double>(p.steps - 1),
                          .slice = 1.0 / n,
                          .buffer = t.ring_buffer,
                          .rate = mesh_node ? t.link(t.mesh_link(members[0], members[1])).capacity * (n - 1.0)
                                            : t.link(t.gpu_up(members.front())).capacity};
  if (mesh_node && !chain) {
    add_mesh_ring(p, blocks.front(), per_edge);
    return s;
  }
  if (mesh_node) {
    add_mesh_chains(p, kind, blocks.front(), members.front(), per_edge);
    return s;
  }
  for (int c = 0; c < channels; ++c) {
    std::vector<long long> seq = channel_ring(blocks, c, channels, t.mesh());
    const int rail = -1;  // each channel crosses on the rail of the GPU it enters (rail-aligned)
    if (chain) {
      std::rotate(seq.begin(), std::find(seq.begin(), seq.end(), members.front()), seq.end());
      for (std::size_t i = 0; i + 1 < seq.size(); ++i) {
        if (kind == CollectiveKind::kBroadcast) add(p, seq[i], seq[i + 1], per_edge, rail);
        else add(p, seq[i + 1], seq[i], per_edge, rail);
      }
    } else {
      for (std::size_t i = 0; i < seq.size(); ++i) add(p, seq[i], seq[(i + 1) % seq.size()], per_edge, rail);
    }
  }
  return s;
}

// Parents of the double binary tree's first tree over positions 1..n (0 = root):
// in-order trees whose leaves are the odd positions, so the mirror tree has the
// even ones as leaves and each rank is a leaf in one of the two (Sanders, Speck
// & Traff, Parallel Computing 35(12), 2009; NCCL 2.4).
void in_order_tree(int lo, int hi, int parent, std::vector<int>& parents) {
  if (lo > hi) return;
  int root = lo;
  for (int i = lo; i <= hi; ++i)
    if (std::countr_zero(static_cast<unsigned>(i)) > std::countr_zero(static_cast<unsigned>(root))) root = i;
  parents[static_cast<std::size_t>(root)] = parent;
  in_order_tree(lo, root - 1, root, parents);
  in_order_tree(root + 1, hi, root, parents);
}

int depth(const std::vector<int>& parents, int i) {
  int d = 0;
  while (parents[static_cast<std::size_t>(i)] != 0) {
    i = parents[static_cast<std::size_t>(i)];
    ++d;
  }
  return d;
}

Schedule tree(std::span<const long long> members, double bytes) {
  const int n = static_cast<int>(members.size());
  std::vector<int> parents(static_cast<std::size_t>(n) + 1, 0);
  in_order_tree(1, n, 0, parents);
  Schedule s{Algorithm::kTree, {Phase{}}};
  Phase& p = s.phases.front();
  int deepest = 0;
  for (int tree_index = 0; tree_index < 2; ++tree_index) {
    // The second tree mirrors the first (n even) or shifts it by one (n odd).
    auto rank_at = [&](int pos) {
      const int m = tree_index == 0 ? pos - 1 : (n % 2 == 0 ? n - pos : pos % n);
      return members[static_cast<std::size_t>(m)];
    };
    for (int pos = 1; pos <= n; ++pos) {
      const int parent = parents[static_cast<std::size_t>(pos)];
      if (parent == 0) continue;
      add(p, rank_at(pos), rank_at(parent), bytes / 2.0, -1);  // reduce, up the tree
      add(p, rank_at(parent), rank_at(pos), bytes / 2.0, -1);  // broadcast, down
      deepest = std::max(deepest, depth(parents, pos));
    }
  }
  p.steps = 2 * std::max(1, deepest);
  return s;
}

Schedule halving_doubling(CollectiveKind kind, std::span<const long long> members, double bytes) {
  const auto n = static_cast<long long>(members.size());
  Schedule s{Algorithm::kHalvingDoubling, {}};
  auto exchange = [&](long long distance, double size) {
    Phase p;
    for (long long i = 0; i < n; ++i)
      add(p, members[static_cast<std::size_t>(i)], members[static_cast<std::size_t>(i ^ distance)], size, -1);
    s.phases.push_back(std::move(p));
  };
  // Reduce-scatter by recursive halving, then all-gather by recursive doubling
  // (Thakur, Rabenseifner & Gropp, IJHPCA 19(1), 2005).
  if (kind != CollectiveKind::kAllGather)
    for (long long d = n / 2; d >= 1; d /= 2) exchange(d, bytes * static_cast<double>(d) / static_cast<double>(n));
  if (kind != CollectiveKind::kReduceScatter)
    for (long long d = 1; d < n; d *= 2) exchange(d, bytes * static_cast<double>(d) / static_cast<double>(n));
  return s;
}

Schedule hierarchical(CollectiveKind kind, std::span<const long long> members, double bytes, const Topology& t) {
  // Reduce-scatter inside every node (a ring over S), k rings across nodes (one
  // per local index, on that GPU's own NIC) over S/k, all-gather inside every node.
  const auto blocks = node_blocks(members, t);
  const std::size_t k = blocks.front().size();
  const std::size_t n = blocks.size();
  Schedule s{Algorithm::kHierarchical, {}};
  auto intra = [&] {
    if (k < 2) return;
    Phase p;
    p.steps = static_cast<int>(k - 1);
    const double per = static_cast<double>(k - 1) / static_cast<double>(k) * bytes;
    for (const auto& b : blocks) {
      if (t.mesh()) {
        add_mesh_ring(p, b, per);
        continue;
      }
      for (std::size_t i = 0; i < k; ++i) add(p, b[i], b[(i + 1) % k], per, -1);
    }
    s.phases.push_back(std::move(p));
  };
  auto inter = [&](bool all_reduce) {
    Phase p;
    const int laps = all_reduce ? 2 : 1;
    p.steps = laps * static_cast<int>(n - 1);
    const double per = laps * static_cast<double>(n - 1) / static_cast<double>(n) * bytes / static_cast<double>(k);
    for (std::size_t i = 0; i < k; ++i)
      for (std::size_t j = 0; j < n; ++j) add(p, blocks[j][i], blocks[(j + 1) % n][i], per, -1);
    s.phases.push_back(std::move(p));
  };
  if (kind == CollectiveKind::kAllGather) {
    inter(false);
    intra();
  } else {
    intra();
    inter(kind == CollectiveKind::kAllReduce);
    if (kind == CollectiveKind::kAllReduce) intra();
  }
  return s;
}

Schedule nvls(std::span<const long long> members, double bytes, const Topology& t) {
  // Each GPU sends every shard up once for the switch to reduce (S) and its
  // reduced shard up to be multicast (S/k); it receives its reduced shard (S/k)
  // and every multicast shard (S): S (k+1)/k each way.
  const auto k = static_cast<double>(members.size());
  Schedule s{Algorithm::kNvls, {Phase{}}};
  Phase& p = s.phases.front();
  p.steps = 2;
  p.fixed_latency = t.nvls_latency;
  p.sized.loop_overhead = t.nvls_loop_overhead;
  p.sized.loop_heads = k;
  const double volume = bytes * (k + 1.0) / k;
  for (long long m : members) {
    p.transfers.push_back({m, m, volume, -1, Transfer::Ends::kGpuToSwitch, t.nvls_rate});
    p.transfers.push_back({m, m, volume, -1, Transfer::Ends::kSwitchToGpu, t.nvls_rate});
  }
  return s;
}

// NCCL's all-to-all on the node switch moves at its own measured rate
// (`all_to_all_rate` per GPU; 0 = no cap, the GPU link's): each transfer between
// two GPUs of one node is capped at that rate over the sender's same-node
// transfers in the phase (`node_peers`).
double node_cap(const Topology& t, int src_node, int dst_node, long long node_peers) {
  if (!(t.all_to_all_rate > 0.0) || src_node != dst_node) return 0.0;
  return t.all_to_all_rate / static_cast<double>(node_peers);
}

Schedule all_to_all(Algorithm a, std::span<const long long> members, double bytes, const Topology& t) {
  const auto n = static_cast<long long>(members.size());
  const double share = bytes / static_cast<double>(n);
  std::vector<int> node(members.size());
  std::map<int, long long> on_node;  // members per node
  for (std::size_t i = 0; i < members.size(); ++i) ++on_node[node[i] = t.vertex(t.gpu(members[i])).node];
  const auto transfer = [&](Phase& p, long long i, long long j, long long node_peers) {
    const auto u = static_cast<std::size_t>(i);
    const auto v = static_cast<std::size_t>(j);
    if (members[u] == members[v]) return;
    p.transfers.push_back({members[u], members[v], share, -1, Transfer::Ends::kGpuToGpu,
                           node_cap(t, node[u], node[v], node_peers)});
  };
  Schedule s{a, {}};
  if (a == Algorithm::kDirect) {
    Phase p;
    for (long long i = 0; i < n; ++i) {
      const long long peers = on_node[node[static_cast<std::size_t>(i)]] - 1;
      for (long long j = 0; j < n; ++j) transfer(p, i, j, peers);
    }
    s.phases.push_back(std::move(p));
    return s;
  }
  for (long long step = 1; step < n; ++step) {
    Phase p;
    for (long long i = 0; i < n; ++i) transfer(p, i, (i + step) % n, 1);
    s.phases.push_back(std::move(p));
  }
  return s;
}

}  // namespace

// Inside a node a ring step pipelines through a buffer (NCCL_BUFFSIZE): while a
// rank's slice is smaller, each step after the first waits for its slice to
// arrive in full (docs/model.md, "Ring pipeline inside a node").
double SizeLatency::at(double bytes) const {
  double s = 0.0;
  if (fill_steps > 0.0 && rate > 0.0) s += fill_steps * std::min(buffer, bytes * slice) / rate;
  if (loop_overhead > 0.0) s += nvls_loops(bytes, loop_heads) * loop_overhead;
  return s;
}

std::string_view to_string(Algorithm a) {
  for (const auto& [alg, name] : kNames)
    if (alg == a) return name;
  return "unknown";
}

std::optional<Algorithm> algorithm_from_string(std::string_view name) {
  for (const auto& [alg, n] : kNames)
    if (n == name) return alg;
  return std::nullopt;
}

std::optional<std::string> unavailable(CollectiveKind kind, Algorithm a, std::span<const long long> members,
                                       const Topology& t) {
  // The message's start, made only when one is returned (candidates() asks for
  // every algorithm of every collective a simulation plans).
  const auto what = [&] { return fmt::format("{} {}", to_string(a), to_string(kind)); };
  if (members.size() < 2) return std::nullopt;
  const bool reduction_family = kind == CollectiveKind::kAllReduce || kind == CollectiveKind::kReduceScatter ||
                                kind == CollectiveKind::kAllGather;
  const BlockShape blocks = block_shape(members, t);
  switch (a) {
    case Algorithm::kAuto: return std::nullopt;
    case Algorithm::kRing:
      if (kind == CollectiveKind::kAllToAll || kind == CollectiveKind::kSendRecv)
        return what() + ": a ring runs all_reduce, all_gather, reduce_scatter, broadcast and reduce";
      return std::nullopt;
    case Algorithm::kTree:
      if (kind != CollectiveKind::kAllReduce) return what() + ": the double binary tree runs all_reduce only";
      return std::nullopt;
    case Algorithm::kHalvingDoubling:
      if (!reduction_family) return what() + ": halving-doubling runs all_reduce, all_gather and reduce_scatter";
      if (!std::has_single_bit(members.size()))
        return fmt::format("{}: halving-doubling needs a power-of-two group, not {}", what(), members.size());
      return std::nullopt;
    case Algorithm::kHierarchical:
      if (!reduction_family) return what() + ": hierarchical runs all_reduce, all_gather and reduce_scatter";
      if (blocks.count < 2) return what() + ": hierarchical needs a group that spans nodes";
      if (!blocks.uniform) return what() + ": hierarchical needs the same number of ranks on every node";
      return std::nullopt;
    case Algorithm::kNvls:
      if (kind != CollectiveKind::kAllReduce) return what() + ": in-switch reduction (NVLS) runs all_reduce only";
      if (!t.in_switch_reduction) return what() + ": the node switch has no in-switch reduction (NVLS needs NVSwitch 3 or later)";
      if (blocks.count != 1) return what() + ": NVLS is modeled inside one node";
      return std::nullopt;
    case Algorithm::kDirect:
    case Algorithm::kPairwise:
      if (kind == CollectiveKind::kSendRecv && a == Algorithm::kDirect) return std::nullopt;
      if (kind != CollectiveKind::kAllToAll) return what() + ": direct and pairwise run all_to_all (direct also send_recv)";
      if (members.size() > 4096)
        return fmt::format("{}: all_to_all is modeled up to 4096 ranks ({} transfers); the group has {}", what(),
                           4096 * 4095, members.size());
      return std::nullopt;
  }
  return what() + ": unknown algorithm";
}

std::vector<Algorithm> candidates(CollectiveKind kind, std::span<const long long> members, const Topology& t) {
  // NCCL's own: ring, tree (between nodes; inside one node NCCL's tree is a
  // chain, which never wins) and NVLS; all-to-all and send/recv as concurrent
  // point-to-point transfers. Halving-doubling, hierarchical and pairwise run
  // when forced.
  std::vector<Algorithm> out;
  const bool one_node = block_shape(members, t).count == 1;
  for (Algorithm a : {Algorithm::kRing, Algorithm::kTree, Algorithm::kNvls, Algorithm::kDirect}) {
    if (a == Algorithm::kTree && one_node) continue;
    if (!unavailable(kind, a, members, t)) out.push_back(a);
  }
  return out;
}

namespace {

Schedule algorithm_schedule(CollectiveKind kind, Algorithm a, std::span<const long long> members, double bytes,
                            const Topology& t) {
  switch (a) {
    case Algorithm::kRing: return ring(kind, members, bytes, t);
    case Algorithm::kTree: return tree(members, bytes);
    case Algorithm::kHalvingDoubling: return halving_doubling(kind, members, bytes);
    case Algorithm::kHierarchical: return hierarchical(kind, members, bytes, t);
    case Algorithm::kNvls: return nvls(members, bytes, t);
    case Algorithm::kDirect:
    case Algorithm::kPairwise: return all_to_all(a, members, bytes, t);
    case Algorithm::kAuto: break;
  }
  throw std::invalid_argument("unknown algorithm");
}

}  // namespace

Schedule build_schedule(CollectiveKind kind, Algorithm a, std::span<const long long> members, double bytes,
                        const Topology& t) {
  if (!(bytes >= 0.0)) throw std::invalid_argument("collective of negative size");
  if (a == Algorithm::kAuto) throw std::invalid_argument("build_schedule needs a concrete algorithm");
  if (auto why = unavailable(kind, a, members, t)) throw std::invalid_argument(*why);
  if (members.size() < 2) return {a, {}};
  if (kind == CollectiveKind::kSendRecv) {
    Schedule s{a, {Phase{}}};
    add(s.phases.front(), members[0], members[1], bytes, -1);
    return s;
  }
  Schedule s = algorithm_schedule(kind, a, members, bytes, t);
  // A call's fixed start-up, whatever its algorithm (all_gather, reduce_scatter,
  // all_to_all; all_reduce's are the algorithms' own).
  if (!s.phases.empty()) {
    if (kind == CollectiveKind::kAllGather || kind == CollectiveKind::kReduceScatter)
      s.phases.front().fixed_latency += t.gather_scatter_startup;
    else if (kind == CollectiveKind::kAllToAll)
      s.phases.front().fixed_latency += t.all_to_all_startup;
  }
  return s;
}

}  // namespace trainsim::net
