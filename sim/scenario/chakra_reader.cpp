#include "scenario/chakra_reader.h"

#include <algorithm>
#include <fmt/format.h>
#include <fstream>
#include <map>
#include <memory>
#include <queue>
#include <regex>
#include <set>
#include <sstream>
#include <tuple>
#include <unordered_map>

#include "network/collective_kind.h"
#include "scenario/chakra_attributes.h"
#include "scenario/chakra_file.h"
#include "scenario/errors.h"

namespace trainsim::scenario {

namespace {

using ChakraProtoMsg::Node;
using chakra::AttributeReader;
using chakra::DecodedFile;
using workload::Task;
using workload::TaskGraph;
using workload::TaskId;
using workload::Work;

constexpr std::string_view kOurs = "the GlobalMetadata says trainsim wrote this file, and trainsim writes it on every node";

std::string node_at(const Node& n) { return fmt::format("node {}", n.id()); }

// ---- Files trainsim wrote: the same graph again --------------------------------

Work work_of(const AttributeReader& a, const Node& n) {
  Work w;
  w.name = n.name();
  w.model_flops = a.need_real(chakra::kWorkModelFlops, kOurs);
  if (a.has(chakra::kHostKind)) {
    w.host = workload::HostWork{static_cast<workload::HostWork::Kind>(a.need_enum(chakra::kHostKind, 2, kOurs)),
                                a.need_real(chakra::kHostAmount, kOurs)};
    return w;
  }
  if (a.has(chakra::kCollective)) {
    net::Collective c;
    c.kind = static_cast<net::CollectiveKind>(
        a.need_enum(chakra::kCollective, static_cast<long long>(net::CollectiveKind::kSendRecv), kOurs));
    c.bytes = a.need_real(chakra::kCommBytes, kOurs);
    const std::vector<long long> shape = a.need_integers(chakra::kGroupShape, kOurs);
    if (shape.size() != 3)
      throw ScenarioError(a.file(), a.where(), fmt::format("attribute \"{}\": expected 3 integers (size, nodes, ranks "
                                                           "per node), found {}", chakra::kGroupShape, shape.size()));
    c.group.size = static_cast<int>(shape[0]);
    c.group.nodes = static_cast<int>(shape[1]);
    c.group.ranks_per_node = static_cast<int>(shape[2]);
    if (a.has(chakra::kGroupMembers)) {
      const std::vector<long long> flat = a.need_integers(chakra::kGroupMembers, kOurs);
      const std::vector<long long> lengths = a.need_integers(chakra::kGroupLists, kOurs);
      std::vector<std::vector<long long>> lists;
      std::size_t at = 0;
      for (const long long len : lengths) {
        if (len < 0 || at + static_cast<std::size_t>(len) > flat.size())
          throw ScenarioError(a.file(), a.where(), fmt::format("attributes \"{}\" and \"{}\" do not agree",
                                                               chakra::kGroupMembers, chakra::kGroupLists));
        lists.emplace_back(flat.begin() + static_cast<std::ptrdiff_t>(at),
                           flat.begin() + static_cast<std::ptrdiff_t>(at + static_cast<std::size_t>(len)));
        at += static_cast<std::size_t>(len);
      }
      c.group.members = std::make_shared<const std::vector<std::vector<long long>>>(std::move(lists));
    }
    c.copy_engine = a.need_flag(chakra::kCopyEngine, kOurs);
    w.collective = std::move(c);
    return w;
  }
  hw::KernelWork& k = w.compute;
  k.kind = static_cast<hw::KernelClass>(a.need_enum(chakra::kKernelClass, 2, kOurs));
  k.flops = a.need_real(chakra::kFlops, kOurs);
  k.bytes = a.need_real(chakra::kBytes, kOurs);
  k.count = static_cast<int>(a.need_integer(chakra::kCount, kOurs));
  const std::vector<double> gemm = a.need_reals(chakra::kGemm, kOurs);
  const std::vector<long long> heads = a.need_integers(chakra::kHeadDims, kOurs);
  if (gemm.size() != 3 || heads.size() != 2)
    throw ScenarioError(a.file(), a.where(), fmt::format("attributes \"{}\" (m, n, k) and \"{}\" (head dims): expected "
                                                         "3 and 2 values", chakra::kGemm, chakra::kHeadDims));
  k.m = gemm[0];
  k.n = gemm[1];
  k.k = gemm[2];
  k.backward = a.need_flag(chakra::kBackward, kOurs);
  k.gradients = static_cast<hw::Gradients>(a.need_enum(chakra::kGradients, 2, kOurs));
  k.grouped = a.need_flag(chakra::kGrouped, kOurs);
  k.fp8 = a.need_flag(chakra::kFp8, kOurs);
  k.kernel = static_cast<hw::KernelId>(a.need_enum(chakra::kKernel, static_cast<long long>(hw::kNumKernelIds) - 1, kOurs));
  k.head_dim = static_cast<int>(heads[0]);
  k.value_head_dim = static_cast<int>(heads[1]);
  k.host_pass = static_cast<hw::HostPass>(a.need_enum(chakra::kHostPass, static_cast<long long>(hw::HostPass::kGraph), kOurs));
  k.attention_kernel = static_cast<hw::AttentionKernel>(a.need_enum(chakra::kAttentionKernel, 1, kOurs));
  if (n.duration_micros() > 0 && a.has(chakra::kNumOps) && k.flops == 0.0 && k.bytes == 0.0)
    w.measured_seconds = static_cast<double>(n.duration_micros()) * 1e-6;
  return w;
}

workload::IterationGraph rebuild_ours(const std::vector<DecodedFile>& files, const std::vector<int>& ranks) {
  const AttributeReader meta(files.front().metadata.attr(), files.front().file, "GlobalMetadata");
  workload::IterationGraph it;
  const long long tasks = meta.need_integer(chakra::kTasks, kOurs);
  it.iterations = static_cast<int>(meta.need_integer(chakra::kIterations, kOurs));
  it.num_microbatches = meta.need_integer(chakra::kMicrobatches, kOurs);
  it.num_gpus = meta.need_integer(chakra::kNumGpus, kOurs);
  it.tokens_per_iteration = meta.need_integer(chakra::kTokens, kOurs);
  it.model_flops_per_iteration = meta.need_real(chakra::kModelFlops, kOurs);
  it.parameters_per_gpu = meta.need_real(chakra::kParametersPerGpu, kOurs);
  it.gradient_buckets = static_cast<int>(meta.need_integer(chakra::kGradientBuckets, kOurs));
  it.layers_per_virtual_stage = meta.need_integers(chakra::kLayersPerVirtualStage, kOurs);
  for (const long long r : meta.need_integers(chakra::kSimulatedRanks, kOurs)) it.simulated_ranks.push_back(static_cast<int>(r));
  for (const long long r : meta.need_integers(chakra::kRepresentative, kOurs)) it.representative.push_back(static_cast<int>(r));
  std::vector<int> expected = it.simulated_ranks;
  std::sort(expected.begin(), expected.end());
  if (expected != ranks)
    throw ScenarioError(files.front().file, "GlobalMetadata",
                        fmt::format("the trace has files of ranks {}, its metadata lists the simulated ranks {}",
                                    fmt::join(ranks, ","), fmt::join(expected, ",")));
  if (tasks < 0 || tasks > static_cast<long long>(UINT32_MAX))
    throw ScenarioError(files.front().file, "GlobalMetadata", fmt::format("\"{}\" {} is out of range", chakra::kTasks, tasks));

  struct Placed {
    std::size_t file = 0;
    const Node* node = nullptr;
  };
  std::vector<Placed> by_id(static_cast<std::size_t>(tasks));
  std::map<long long, Work> works;  // by the work id the writer gave it
  for (std::size_t f = 0; f < files.size(); ++f) {
    const AttributeReader fm(files[f].metadata.attr(), files[f].file, "GlobalMetadata");
    if (fm.integer(chakra::kTasks) != tasks || fm.integer(chakra::kRank) != ranks[f])
      throw ScenarioError(files[f].file, "GlobalMetadata",
                          fmt::format("expected \"{}\" {} and \"{}\" {} (the file name's rank), as the other files say",
                                      chakra::kTasks, tasks, chakra::kRank, ranks[f]));
    for (const Node& n : files[f].nodes) {
      if (n.type() == ChakraProtoMsg::COMM_RECV_NODE) continue;
      if (n.id() >= static_cast<std::uint64_t>(tasks) || by_id[n.id()].node != nullptr)
        throw ScenarioError(files[f].file, node_at(n),
                            fmt::format("expected a task id below {} used once in the trace", tasks));
      by_id[n.id()] = {f, &n};
      const AttributeReader a(n.attr(), files[f].file, node_at(n));
      const long long w = a.need_integer(chakra::kWork, kOurs);
      if (!works.contains(w)) works.emplace(w, work_of(a, n));
    }
  }
  std::map<long long, workload::WorkId> work_ids;
  for (auto& [id, w] : works) work_ids[id] = it.graph.add_work(std::move(w));
  it.graph.reserve(static_cast<std::size_t>(tasks));
  std::vector<std::pair<TaskId, std::int64_t>> shared;
  for (long long id = 0; id < tasks; ++id) {
    const Placed& p = by_id[static_cast<std::size_t>(id)];
    if (p.node == nullptr)
      throw ScenarioError(files.front().file, "GlobalMetadata",
                          fmt::format("the trace has {} tasks, but no file holds task {}", tasks, id));
    const AttributeReader a(p.node->attr(), files[p.file].file, node_at(*p.node));
    Task t;
    t.work = work_ids.at(a.need_integer(chakra::kWork, kOurs));
    t.rank = ranks[p.file];
    t.stream = static_cast<workload::Stream>(a.need_enum(chakra::kStream, workload::kNumStreams - 1, kOurs));
    t.category = static_cast<workload::Category>(
        a.need_enum(chakra::kCategory, static_cast<long long>(workload::Category::kReload), kOurs));
    t.role = static_cast<workload::Role>(
        a.need_enum(chakra::kRole, static_cast<long long>(workload::Role::kActivationReload), kOurs));
    t.iteration = static_cast<int>(a.need_integer(chakra::kIteration, kOurs));
    t.microbatch = static_cast<int>(a.need_integer(chakra::kMicrobatch, kOurs));
    t.layer = static_cast<std::int32_t>(a.need_integer(chakra::kLayer, kOurs));
    it.graph.add(std::move(t));
    if (const auto instance = a.integer(chakra::kInstance)) shared.emplace_back(static_cast<TaskId>(id), *instance);
  }
  // Dependencies: a node's data and control dependencies in its file (a receive
  // node standing for the send it receives), and its dependencies on other ranks'
  // tasks that are not sends.
  for (std::size_t f = 0; f < files.size(); ++f) {
    std::unordered_map<std::uint64_t, TaskId> received;
    for (const Node& n : files[f].nodes) {
      if (n.type() != ChakraProtoMsg::COMM_RECV_NODE) continue;
      const AttributeReader a(n.attr(), files[f].file, node_at(n));
      const long long send = a.need_integer(chakra::kRecvOf, kOurs);
      if (send < 0 || send >= tasks)
        throw ScenarioError(files[f].file, node_at(n), fmt::format("\"{}\" {} is not a task of the trace", chakra::kRecvOf, send));
      received[n.id()] = static_cast<TaskId>(send);
    }
    for (const Node& n : files[f].nodes) {
      if (n.type() == ChakraProtoMsg::COMM_RECV_NODE) continue;
      const auto id = static_cast<TaskId>(n.id());
      const auto depend = [&](std::uint64_t d) {
        if (const auto r = received.find(d); r != received.end()) it.graph.add_dep(id, r->second);
        else if (d < static_cast<std::uint64_t>(tasks) && by_id[d].file == f) it.graph.add_dep(id, static_cast<TaskId>(d));
        else throw ScenarioError(files[f].file, node_at(n), fmt::format("depends on node {}, which is not in the file", d));
      };
      for (const std::uint64_t d : n.data_deps()) depend(d);
      for (const std::uint64_t d : n.ctrl_deps()) depend(d);
      const AttributeReader a(n.attr(), files[f].file, node_at(n));
      if (const auto remote = a.integers(chakra::kRemoteDeps))
        for (const long long d : *remote) {
          if (d < 0 || d >= tasks)
            throw ScenarioError(files[f].file, node_at(n), fmt::format("\"{}\" names {}, not a task of the trace", chakra::kRemoteDeps, d));
          it.graph.add_dep(id, static_cast<TaskId>(d));
        }
    }
  }
  std::sort(shared.begin(), shared.end());
  for (const auto& [task, instance] : shared) it.graph.share_collective(task, instance);
  return it;
}

// ---- Other tools' traces: node by node ------------------------------------------

constexpr std::string_view kSupported =
    "trainsim maps COMP_NODE (priced from num_ops and tensor_size by the roofline, or timed by duration_micros), "
    "COMM_COLL_NODE (all_reduce, all_gather, reduce_scatter, all_to_all, broadcast, reduce), COMM_SEND_NODE and "
    "COMM_RECV_NODE, and passes over METADATA_NODE and CPU operators (is_cpu_op)";

// A foreign node as the graph will hold it.
struct Mapped {
  enum class Kind { kTask, kRecv, kPass } kind = Kind::kPass;
  TaskId task = 0;  // kTask
  long long src = 0, tag = 0;  // kRecv
};

// The group of `ranks` on the cluster: its shape from the scale-up domains it spans.
net::CommGroup group_of(const std::vector<long long>& ranks, const hw::ClusterSpec& cluster, const std::string& file,
                        const std::string& where) {
  std::map<long long, int> per_domain;
  for (const long long r : ranks) ++per_domain[r / cluster.gpus_per_domain()];
  const int per = per_domain.begin()->second;
  for (const auto& [domain, count] : per_domain)
    if (count != per)
      throw ScenarioError(file, where, fmt::format("the group of ranks {} has {} ranks in one scale-up domain and {} in "
                                                   "another; trainsim models groups with as many ranks in each",
                                                   fmt::join(ranks, ","), per, count));
  net::CommGroup g;
  g.size = static_cast<int>(ranks.size());
  g.nodes = static_cast<int>(per_domain.size());
  g.ranks_per_node = per;
  g.members = std::make_shared<const std::vector<std::vector<long long>>>(std::vector<std::vector<long long>>{ranks});
  return g;
}

// Builds the graph of other tools' traces: each rank's nodes in lane order, mapped to
// tasks, then their dependencies (a receive on its send), then the collectives that
// are one call.
class ForeignGraph {
 public:
  ForeignGraph(const std::vector<DecodedFile>& files, const std::vector<int>& ranks, const hw::ClusterSpec& cluster,
               ChakraTrace& stats)
      : files_(files), ranks_(ranks), cluster_(cluster), stats_(stats), gpus_(cluster.num_gpus()) {}

  workload::IterationGraph build() {
    if (cluster_.heterogeneous())
      throw ScenarioError(files_.front().file, "", "a foreign Chakra trace runs on a cluster of one GPU type; the "
                                                   "scenario's cluster is mixed");
    if (ranks_.back() >= gpus_)
      throw ScenarioError(files_.back().file, "",
                          fmt::format("rank {} is beyond the cluster's {} GPUs", ranks_.back(), gpus_));
    it_.iterations = 1;
    it_.num_microbatches = 1;
    it_.num_gpus = gpus_;
    it_.simulated_ranks = ranks_;
    for (long long r = 0; r < gpus_; ++r)
      it_.representative.push_back(files_.size() == 1 ? ranks_.front() : static_cast<int>(r));
    order_.resize(files_.size());
    index_.resize(files_.size());
    mapped_.resize(files_.size());
    for (std::size_t f = 0; f < files_.size(); ++f) order_lane(f);
    find_group_ranks();
    for (std::size_t f = 0; f < files_.size(); ++f) {
      mapped_[f].resize(files_[f].nodes.size());
      for (const std::size_t i : order_[f]) map_node(f, files_[f].nodes[i], mapped_[f][i]);
    }
    for (std::size_t f = 0; f < files_.size(); ++f) connect(f);
    for (const auto& [key, q] : sends_)
      if (!q.empty())
        throw ScenarioError(files_.front().file, "",
                            fmt::format("{} send(s) from rank {} to rank {} with comm_tag {} have no receive in rank "
                                        "{}'s file",
                                        q.size(), std::get<0>(key), std::get<1>(key), std::get<2>(key), std::get<1>(key)));
    share_calls();
    return std::move(it_);
  }

 private:
  struct Call {
    std::size_t file;
    const Node* node;
    TaskId task;
    long long kind;
  };

  // File f's nodes in a topological order of their dependencies, ties in file order:
  // the order of the rank's lanes.
  void order_lane(std::size_t f) {
    const std::vector<Node>& nodes = files_[f].nodes;
    for (std::size_t i = 0; i < nodes.size(); ++i)
      if (!index_[f].emplace(nodes[i].id(), i).second)
        throw ScenarioError(files_[f].file, node_at(nodes[i]), "the node id is used twice in the file");
    std::vector<std::size_t> waiting(nodes.size(), 0);
    std::vector<std::vector<std::size_t>> dependents(nodes.size());
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      const auto add = [&](std::uint64_t d) {
        const auto at = index_[f].find(d);
        if (at == index_[f].end())
          throw ScenarioError(files_[f].file, node_at(nodes[i]),
                              fmt::format("depends on node {}, which is not in the file", d));
        ++waiting[i];
        dependents[at->second].push_back(i);
      };
      for (const std::uint64_t d : nodes[i].data_deps()) add(d);
    }
    std::priority_queue<std::size_t, std::vector<std::size_t>, std::greater<>> ready;
    for (std::size_t i = 0; i < nodes.size(); ++i)
      if (waiting[i] == 0) ready.push(i);
    while (!ready.empty()) {
      const std::size_t i = ready.top();
      ready.pop();
      order_[f].push_back(i);
      for (const std::size_t d : dependents[i])
        if (--waiting[d] == 0) ready.push(d);
    }
    if (order_[f].size() != nodes.size()) {
      std::size_t stuck = 0;
      while (waiting[stuck] == 0) ++stuck;
      throw ScenarioError(files_[f].file, node_at(nodes[stuck]), "its dependencies form a cycle");
    }
  }

  // Process groups: the ranks that run collectives of each pg_name (none: every rank
  // with a file). One file stands for every GPU of the cluster, and each of its
  // collectives spans them all.
  void find_group_ranks() {
    for (std::size_t f = 0; f < files_.size(); ++f)
      for (const Node& n : files_[f].nodes)
        if (n.type() == ChakraProtoMsg::COMM_COLL_NODE)
          group_ranks_[AttributeReader(n.attr(), files_[f].file, node_at(n)).text(chakra::kPgName).value_or("")]
              .insert(ranks_[f]);
    std::set<long long> everyone(ranks_.begin(), ranks_.end());
    if (files_.size() == 1)
      for (long long r = 0; r < gpus_; ++r) everyone.insert(r);
    for (auto& [pg, members] : group_ranks_)
      if (pg.empty() || files_.size() == 1) members = everyone;
  }

  // Node n of file f as a task (or a receive to match, or nothing), in lane order.
  void map_node(std::size_t f, const Node& n, Mapped& m) {
    const std::string& file = files_[f].file;
    const int rank = ranks_[f];
    const AttributeReader a(n.attr(), file, node_at(n));
    Work w;
    w.name = n.name();
    Task t;
    t.rank = rank;
    switch (n.type()) {
      case ChakraProtoMsg::METADATA_NODE:
        ++stats_.metadata_skipped;
        return;
      case ChakraProtoMsg::COMP_NODE:
        if (a.flag(chakra::kIsCpuOp).value_or(false)) {
          ++stats_.cpu_ops_skipped;
          return;
        }
        map_compute(a, n, w, t);
        break;
      case ChakraProtoMsg::COMM_COLL_NODE:
        if (a.flag(chakra::kIsCpuOp).value_or(false)) {  // the host side of a c10d call
          ++stats_.cpu_ops_skipped;
          return;
        }
        map_collective(f, a, n, w, t);
        break;
      case ChakraProtoMsg::COMM_SEND_NODE:
        map_send(rank, a, n, w, t);
        break;
      case ChakraProtoMsg::COMM_RECV_NODE:
        m.kind = Mapped::Kind::kRecv;
        m.src = a.need_integer(chakra::kCommSrc, "a receive node needs its peer rank (comm_src)");
        m.tag = a.integer(chakra::kCommTag).value_or(0);
        return;
      default:
        throw ScenarioError(file, node_at(n), fmt::format("node type {} is not supported; {}",
                                                          chakra::node_type_name(n.type()), kSupported));
    }
    t.work = it_.graph.add_work(std::move(w));
    m.kind = Mapped::Kind::kTask;
    m.task = it_.graph.add(std::move(t));
  }

  void map_compute(const AttributeReader& a, const Node& n, Work& w, Task& t) {
    const auto ops = a.real(chakra::kNumOps);
    const auto size = a.real(chakra::kTensorSize);
    if (ops || size) {
      w.compute.flops = ops.value_or(0.0);
      w.compute.bytes = size.value_or(0.0);
      w.compute.kind = w.compute.flops > 0.0 ? hw::KernelClass::kMatmul : hw::KernelClass::kMemoryBound;
      w.model_flops = w.compute.flops;
      it_.model_flops_per_iteration += w.compute.flops;
      ++stats_.priced;
    } else {
      w.measured_seconds = static_cast<double>(n.duration_micros()) * 1e-6;
      ++stats_.measured;
    }
    t.stream = workload::Stream::kCompute;
    t.category = workload::Category::kForward;
    t.role = workload::Role::kLayer;
  }

  void map_collective(std::size_t f, const AttributeReader& a, const Node& n, Work& w, Task& t) {
    const std::string& file = files_[f].file;
    const long long type = a.need_integer(chakra::kCommType, "a collective node needs its comm_type");
    const auto kind = chakra::collective_of(type);
    if (!kind)
      throw ScenarioError(file, node_at(n),
                          fmt::format("COMM_COLL_NODE with comm_type {} ({}) is not supported; {}", type,
                                      ChakraProtoMsg::CollectiveCommType_IsValid(static_cast<int>(type))
                                          ? ChakraProtoMsg::CollectiveCommType_Name(
                                                static_cast<ChakraProtoMsg::CollectiveCommType>(type))
                                          : "not a Chakra collective",
                                      kSupported));
    const std::string pg = a.text(chakra::kPgName).value_or("");
    const std::set<long long>& members = group_ranks_.at(pg);
    w.collective = net::Collective{*kind, a.need_real(chakra::kCommSize, "a collective node needs its comm_size (bytes)"),
                                   group_of({members.begin(), members.end()}, cluster_, file, node_at(n))};
    t.stream = workload::Stream::kDpComm;
    t.category = workload::category_of(*kind);
    t.role = workload::Role::kLayerCollective;
    calls_[pg][ranks_[f]].push_back({f, &n, static_cast<TaskId>(it_.graph.size()), type});
  }

  void map_send(int rank, const AttributeReader& a, const Node& n, Work& w, Task& t) {
    const long long dst = a.need_integer(chakra::kCommDst, "a send node needs its peer rank (comm_dst)");
    if (dst < 0 || dst >= gpus_ || dst == rank)
      throw ScenarioError(a.file(), node_at(n),
                          fmt::format("comm_dst {} is not another rank of the cluster's {} GPUs", dst, gpus_));
    const std::vector<long long> pair{rank, dst};
    w.collective = net::Collective{net::CollectiveKind::kSendRecv,
                                   a.need_real(chakra::kCommSize, "a send node needs its comm_size (bytes)"),
                                   group_of(pair, cluster_, a.file(), node_at(n))};
    w.collective->group.size = 2;
    t.stream = workload::Stream::kPpComm;
    t.category = workload::Category::kSend;
    t.role = workload::Role::kActivationSend;
    sends_[{rank, dst, a.integer(chakra::kCommTag).value_or(0)}].push(static_cast<TaskId>(it_.graph.size()));
  }

  // File f's dependencies: a receive becomes a dependency on its send (the k-th receive
  // from a peer with a tag on the k-th such send); a skipped node hands on its own.
  void connect(std::size_t f) {
    const std::vector<Node>& nodes = files_[f].nodes;
    std::vector<std::vector<TaskId>> resolved(nodes.size());  // what depending on the node means
    for (const std::size_t i : order_[f]) {
      const Node& n = nodes[i];
      std::vector<TaskId> deps;
      for (const std::uint64_t d : n.data_deps()) {
        const std::vector<TaskId>& r = resolved[index_[f].at(d)];
        deps.insert(deps.end(), r.begin(), r.end());
      }
      std::sort(deps.begin(), deps.end());
      deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
      const Mapped& m = mapped_[f][i];
      if (m.kind == Mapped::Kind::kTask) {
        for (const TaskId d : deps) it_.graph.add_dep(m.task, d);
        resolved[i] = {m.task};
        continue;
      }
      if (m.kind == Mapped::Kind::kRecv) {
        auto q = sends_.find({m.src, ranks_[f], m.tag});
        if (q == sends_.end() || q->second.empty())
          throw ScenarioError(files_[f].file, node_at(n),
                              fmt::format("no send from rank {} to rank {} with comm_tag {} is left to match this "
                                          "receive",
                                          m.src, ranks_[f], m.tag));
        deps.push_back(q->second.front());
        q->second.pop();
      }
      resolved[i] = std::move(deps);
    }
  }

  // The k-th collective of a process group on each of its ranks is one call.
  void share_calls() {
    std::vector<std::pair<TaskId, std::int64_t>> shared;
    std::int64_t instance = 0;
    for (const auto& [pg, by_rank] : calls_) {
      const std::vector<Call>& first = by_rank.begin()->second;
      for (const auto& [rank, list] : by_rank)
        if (list.size() != first.size())
          throw ScenarioError(files_[list.front().file].file, "",
                              fmt::format("rank {} runs {} collectives of process group \"{}\", rank {} runs {}; each "
                                          "call needs a node on every rank of its group",
                                          rank, list.size(), pg, by_rank.begin()->first, first.size()));
      for (std::size_t k = 0; k < first.size(); ++k, ++instance)
        for (const auto& [rank, list] : by_rank) {
          if (list[k].kind != first[k].kind)
            throw ScenarioError(files_[list[k].file].file, node_at(*list[k].node),
                                fmt::format("collective {} of process group \"{}\" has comm_type {} here and {} on "
                                            "rank {}",
                                            k, pg, list[k].kind, first[k].kind, by_rank.begin()->first));
          shared.emplace_back(list[k].task, instance);
        }
    }
    std::sort(shared.begin(), shared.end());
    for (const auto& [task, inst] : shared) it_.graph.share_collective(task, inst);
  }

  const std::vector<DecodedFile>& files_;
  const std::vector<int>& ranks_;
  const hw::ClusterSpec& cluster_;
  ChakraTrace& stats_;
  const long long gpus_;
  workload::IterationGraph it_;
  std::vector<std::vector<std::size_t>> order_;
  std::vector<std::unordered_map<std::uint64_t, std::size_t>> index_;
  std::vector<std::vector<Mapped>> mapped_;
  std::map<std::string, std::set<long long>> group_ranks_;
  std::map<std::tuple<long long, long long, long long>, std::queue<TaskId>> sends_;  // (src, dst, tag)
  std::map<std::string, std::map<long long, std::vector<Call>>> calls_;  // pg_name, rank: in order
};

}  // namespace

ChakraTrace read_chakra_trace(std::span<const ChakraInput> inputs, const hw::ClusterSpec& cluster) {
  if (inputs.empty()) throw ScenarioError("", "", "no Chakra ET files given");
  std::vector<const ChakraInput*> sorted;
  for (const ChakraInput& in : inputs) sorted.push_back(&in);
  std::sort(sorted.begin(), sorted.end(), [](const auto* a, const auto* b) { return a->rank < b->rank; });
  ChakraTrace trace;
  std::vector<DecodedFile> files;
  std::vector<int> ranks;
  for (const ChakraInput* in : sorted) {
    if (!ranks.empty() && ranks.back() == in->rank)
      throw ScenarioError(in->file, "", fmt::format("rank {} has two files", in->rank));
    files.push_back(chakra::decode_file(in->bytes, in->file));
    ranks.push_back(in->rank);
    trace.files.push_back(in->file);
    trace.nodes += static_cast<long long>(files.back().nodes.size());
  }
  const auto ours = [&](const DecodedFile& f) {
    return AttributeReader(f.metadata.attr(), f.file, "GlobalMetadata").text(chakra::kFormat).has_value();
  };
  trace.written_by_trainsim = ours(files.front());
  for (const DecodedFile& f : files)
    if (ours(f) != trace.written_by_trainsim)
      throw ScenarioError(f.file, "GlobalMetadata",
                          fmt::format("some files of the trace were written by trainsim (\"{}\") and some not; expected "
                                      "one or the other", chakra::kFormat));
  if (trace.written_by_trainsim) {
    const auto format = AttributeReader(files.front().metadata.attr(), files.front().file, "GlobalMetadata").text(chakra::kFormat);
    if (*format != chakra::kFormatVersion)
      throw ScenarioError(files.front().file, "GlobalMetadata",
                          fmt::format("\"{}\": expected \"{}\", found \"{}\"", chakra::kFormat, chakra::kFormatVersion, *format));
    trace.iteration = rebuild_ours(files, ranks);
  } else {
    trace.iteration = ForeignGraph(files, ranks, cluster, trace).build();
  }
  return trace;
}

ChakraTrace read_chakra_folder(const std::filesystem::path& dir, const hw::ClusterSpec& cluster) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    throw ScenarioError(dir.string(), "", "expected a folder of Chakra ET files (PREFIX.RANK.et)");
  static const std::regex kName(R"((.*)\.([0-9]+)\.et)");
  std::vector<ChakraInput> inputs;
  std::string prefix;
  std::vector<std::filesystem::path> paths;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec))
    if (entry.is_regular_file() && entry.path().extension() == ".et") paths.push_back(entry.path());
  std::sort(paths.begin(), paths.end());
  for (const std::filesystem::path& p : paths) {
    std::smatch m;
    const std::string name = p.filename().string();
    if (!std::regex_match(name, m, kName))
      throw ScenarioError(p.string(), "", "expected a name PREFIX.RANK.et (Chakra's converter names a rank's file so)");
    if (inputs.empty()) prefix = m[1];
    else if (m[1] != prefix)
      throw ScenarioError(p.string(), "", fmt::format("expected one trace in the folder; \"{}\" and \"{}\" are two prefixes", prefix, std::string(m[1])));
    std::ifstream in(p, std::ios::binary);
    std::ostringstream bytes;
    bytes << in.rdbuf();
    if (!in) throw ScenarioError(p.string(), "", "cannot read the file");
    const std::string digits = m[2];
    if (digits.size() > 9) throw ScenarioError(p.string(), "", "the rank in the name is out of range");
    inputs.push_back({p.string(), std::stoi(digits), bytes.str()});
  }
  if (inputs.empty()) throw ScenarioError(dir.string(), "", "no Chakra ET files (PREFIX.RANK.et) in the folder");
  return read_chakra_trace(inputs, cluster);
}

}  // namespace trainsim::scenario
