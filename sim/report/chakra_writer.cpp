#include "report/chakra_writer.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fmt/format.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <limits>
#include <ostream>
#include <system_error>

#include "io/atomic_file.h"
#include "scenario/chakra_attributes.h"
#include "scenario/chakra_et_def.pb.h"

namespace trainsim::report {

namespace {

namespace ch = scenario::chakra;
using ChakraProtoMsg::AttributeProto;
using workload::Task;
using workload::TaskGraph;
using workload::TaskId;
using workload::Work;

// Appends attributes to a node's or the metadata's list.
template <class Message>
class Attributes {
 public:
  explicit Attributes(Message& m) : m_(m) {}
  void integer(std::string_view name, long long v) { add(name)->set_int64_val(v); }
  void unsigned_integer(std::string_view name, std::uint64_t v) { add(name)->set_uint64_val(v); }
  void int32(std::string_view name, std::int32_t v) { add(name)->set_int32_val(v); }
  void real(std::string_view name, double v) { add(name)->set_double_val(v); }
  void flag(std::string_view name, bool v) { add(name)->set_bool_val(v); }
  void text(std::string_view name, std::string_view v) { add(name)->set_string_val(std::string(v)); }
  template <class Range>
  void integers(std::string_view name, const Range& values) {
    auto* list = add(name)->mutable_int64_list();
    for (const auto v : values) list->add_values(static_cast<std::int64_t>(v));
  }
  void reals(std::string_view name, std::initializer_list<double> values) {
    auto* list = add(name)->mutable_double_list();
    for (const double v : values) list->add_values(v);
  }

 private:
  AttributeProto* add(std::string_view name) {
    AttributeProto* a = m_.add_attr();
    a->set_name(std::string(name));
    return a;
  }
  Message& m_;
};

// A byte or FLOP count as Chakra's integer attributes hold it (trainsim's exact
// double travels beside it).
long long rounded(double v) {
  if (!(v > 0.0)) return 0;
  if (v >= static_cast<double>(std::numeric_limits<long long>::max())) return std::numeric_limits<long long>::max();
  return std::llround(v);
}

bool is_send(const TaskGraph& g, TaskId id) {
  const Work& w = g.work(id);
  return w.collective && w.collective->kind == net::CollectiveKind::kSendRecv;
}

// The peer of a send on `rank`: the other rank of its pair (none: the group
// lists no members, or `rank` is not in it).
std::optional<long long> peer_of(const net::Collective& c, int rank) {
  if (!c.group.members || c.group.members->empty()) return std::nullopt;
  const std::vector<long long>& pair = c.group.members->front();
  if (pair.size() != 2) return std::nullopt;
  if (pair[0] == rank) return pair[1];
  if (pair[1] == rank) return pair[0];
  return std::nullopt;
}

// The process group's name: its ranks, "0,2,4,6" (Chakra leaves the name to the
// framework; trainsim's reader groups collectives by it).
std::string group_name(const net::CommGroup& g) {
  if (!g.members || g.members->empty()) return fmt::format("first {} ranks", g.size);
  return fmt::format("{}", fmt::join(g.members->front(), ","));
}

void describe_work(const Work& w, Attributes<ChakraProtoMsg::Node>& a, ChakraProtoMsg::Node& node) {
  a.real(ch::kWorkModelFlops, w.model_flops);
  if (w.host) {
    node.set_type(w.host->kind == workload::HostWork::Kind::kToHost     ? ChakraProtoMsg::MEM_STORE_NODE
                  : w.host->kind == workload::HostWork::Kind::kToDevice ? ChakraProtoMsg::MEM_LOAD_NODE
                                                                        : ChakraProtoMsg::COMP_NODE);
    if (w.host->kind == workload::HostWork::Kind::kCpuAdam) a.flag(ch::kIsCpuOp, true);
    else a.unsigned_integer(ch::kTensorSize, static_cast<std::uint64_t>(rounded(w.host->amount)));
    a.integer(ch::kHostKind, static_cast<long long>(w.host->kind));
    a.real(ch::kHostAmount, w.host->amount);
    return;
  }
  if (w.collective) {
    const net::Collective& c = *w.collective;
    a.integer(ch::kCommSize, rounded(c.bytes));
    a.integer(ch::kCollective, static_cast<long long>(c.kind));
    a.real(ch::kCommBytes, c.bytes);
    a.integers(ch::kGroupShape, std::initializer_list<long long>{c.group.size, c.group.nodes, c.group.ranks_per_node});
    if (c.group.members) {
      std::vector<long long> flat;
      std::vector<long long> lengths;
      for (const std::vector<long long>& list : *c.group.members) {
        flat.insert(flat.end(), list.begin(), list.end());
        lengths.push_back(static_cast<long long>(list.size()));
      }
      a.integers(ch::kGroupMembers, flat);
      a.integers(ch::kGroupLists, lengths);
    }
    a.flag(ch::kCopyEngine, c.copy_engine);
    return;
  }
  const hw::KernelWork& k = w.compute;
  node.set_type(ChakraProtoMsg::COMP_NODE);
  a.integer(ch::kNumOps, rounded(k.flops));
  a.unsigned_integer(ch::kTensorSize, static_cast<std::uint64_t>(rounded(k.bytes)));
  a.flag(ch::kIsCpuOp, false);
  if (w.measured_seconds) node.set_duration_micros(static_cast<std::uint64_t>(rounded(*w.measured_seconds * 1e6)));
  a.integer(ch::kKernelClass, static_cast<long long>(k.kind));
  a.real(ch::kFlops, k.flops);
  a.real(ch::kBytes, k.bytes);
  a.integer(ch::kCount, k.count);
  a.reals(ch::kGemm, {k.m, k.n, k.k});
  a.flag(ch::kBackward, k.backward);
  a.integer(ch::kGradients, static_cast<long long>(k.gradients));
  a.flag(ch::kGrouped, k.grouped);
  a.flag(ch::kFp8, k.fp8);
  a.integer(ch::kKernel, static_cast<long long>(k.kernel));
  a.integers(ch::kHeadDims, std::initializer_list<long long>{k.head_dim, k.value_head_dim});
  a.integer(ch::kHostPass, static_cast<long long>(k.host_pass));
  a.integer(ch::kAttentionKernel, static_cast<long long>(k.attention_kernel));
}

void put(google::protobuf::io::CodedOutputStream& out, const google::protobuf::MessageLite& m) {
  const std::string bytes = m.SerializeAsString();
  out.WriteVarint32(static_cast<std::uint32_t>(bytes.size()));
  out.WriteString(bytes);
}

ChakraProtoMsg::GlobalMetadata metadata(const workload::IterationGraph& it, int rank) {
  ChakraProtoMsg::GlobalMetadata m;
  m.set_version(std::string(ch::kSchemaVersion));
  Attributes a(m);
  a.text(ch::kFormat, ch::kFormatVersion);
  a.integer(ch::kRank, rank);
  a.integer(ch::kTasks, static_cast<long long>(it.graph.size()));
  a.integer(ch::kIterations, it.iterations);
  a.integer(ch::kMicrobatches, it.num_microbatches);
  a.integer(ch::kNumGpus, it.num_gpus);
  a.integer(ch::kTokens, it.tokens_per_iteration);
  a.real(ch::kModelFlops, it.model_flops_per_iteration);
  a.real(ch::kParametersPerGpu, it.parameters_per_gpu);
  a.integer(ch::kGradientBuckets, it.gradient_buckets);
  a.integers(ch::kLayersPerVirtualStage, it.layers_per_virtual_stage);
  a.integers(ch::kSimulatedRanks, it.simulated_ranks);
  a.integers(ch::kRepresentative, it.representative);
  return m;
}

}  // namespace

std::string chakra_trace_bytes(const workload::IterationGraph& it, int rank) {
  const TaskGraph& g = it.graph;
  std::vector<std::int64_t> instance(g.size(), -1);
  for (const TaskGraph::SharedCollective& sc : g.shared_collectives()) instance[sc.task] = sc.instance;
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream raw(&bytes);
    google::protobuf::io::CodedOutputStream out(&raw);
    put(out, metadata(it, rank));
    // A receive node stands, on the receiving rank, for a send of another rank
    // that a task here waits for; its id is the send's id plus the task count,
    // unique and the same in every file.
    std::vector<bool> received(g.size(), false);
    for (TaskId id = 0; id < g.size(); ++id) {
      const Task& t = g[id];
      if (t.rank != rank) continue;
      ChakraProtoMsg::Node node;
      node.set_id(id);
      node.set_name(g.work(t).name);
      std::vector<TaskId> remote;
      for (const TaskId d : t.deps) {
        if (g[d].rank == rank) {
          node.add_data_deps(d);
          continue;
        }
        if (!is_send(g, d)) {
          remote.push_back(d);
          continue;
        }
        const std::uint64_t recv_id = g.size() + static_cast<std::uint64_t>(d);
        node.add_data_deps(recv_id);
        if (received[d]) continue;
        received[d] = true;
        ChakraProtoMsg::Node recv;
        recv.set_id(recv_id);
        recv.set_name("recv." + g.work(d).name);
        recv.set_type(ChakraProtoMsg::COMM_RECV_NODE);
        Attributes r(recv);
        r.int32(ch::kCommSrc, g[d].rank);
        r.int32(ch::kCommDst, rank);
        r.int32(ch::kCommTag, static_cast<std::int32_t>(d % static_cast<TaskId>(std::numeric_limits<std::int32_t>::max())));
        r.integer(ch::kCommSize, rounded(g.work(d).collective->bytes));
        r.integer(ch::kRecvOf, d);
        put(out, recv);
      }
      const Work& w = g.work(t);
      Attributes a(node);
      if (w.collective && w.collective->kind == net::CollectiveKind::kSendRecv) {
        node.set_type(ChakraProtoMsg::COMM_SEND_NODE);
        a.int32(ch::kCommSrc, rank);
        if (const auto peer = peer_of(*w.collective, rank)) a.int32(ch::kCommDst, static_cast<std::int32_t>(*peer));
        a.int32(ch::kCommTag, static_cast<std::int32_t>(id % static_cast<TaskId>(std::numeric_limits<std::int32_t>::max())));
      } else if (w.collective) {
        node.set_type(ChakraProtoMsg::COMM_COLL_NODE);
        a.integer(ch::kCommType, *ch::comm_type_of(w.collective->kind));
        a.text(ch::kPgName, group_name(w.collective->group));
      }
      describe_work(w, a, node);
      a.integer(ch::kWork, t.work);
      a.integer(ch::kStream, static_cast<long long>(t.stream));
      a.integer(ch::kCategory, static_cast<long long>(t.category));
      a.integer(ch::kRole, static_cast<long long>(t.role));
      a.integer(ch::kIteration, t.iteration);
      a.integer(ch::kMicrobatch, t.microbatch);
      a.integer(ch::kLayer, t.layer);
      if (instance[id] >= 0) a.integer(ch::kInstance, instance[id]);
      if (!remote.empty()) a.integers(ch::kRemoteDeps, remote);
      put(out, node);
    }
  }
  return bytes;
}

std::vector<std::filesystem::path> write_chakra_traces(const std::filesystem::path& dir, std::string_view prefix,
                                                       const workload::IterationGraph& iteration) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw io::OutputError(fmt::format("{}: cannot create the folder: {}", dir.string(), ec.message()));
  std::vector<int> ranks = iteration.simulated_ranks;
  std::sort(ranks.begin(), ranks.end());
  std::vector<std::filesystem::path> written;
  for (const int rank : ranks) {
    const std::filesystem::path path = dir / fmt::format("{}.{}.et", prefix, rank);
    const std::string bytes = chakra_trace_bytes(iteration, rank);
    io::write_atomically(path, [&](std::ostream& os) { os.write(bytes.data(), static_cast<std::streamsize>(bytes.size())); });
    written.push_back(path);
  }
  return written;
}

}  // namespace trainsim::report
