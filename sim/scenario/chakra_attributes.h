#pragma once
// The names a Chakra execution trace's attributes go by (docs/chakra.md), shared
// by the reader (scenario/chakra_reader) and the writer (report/chakra_writer).
// Chakra's own names are those its feeder reads (mlcommons/chakra,
// src/feeder/et_feeder_node.cpp) and its PyTorch converter writes
// (src/converter/pytorch_converter.py); trainsim's own carry what a round trip
// needs to rebuild the same task graph, under the prefix "trainsim.".
#include <optional>
#include <string_view>

#include "network/collective_kind.h"

namespace trainsim::scenario::chakra {

// Chakra's node attributes (with the value type Chakra gives them).
inline constexpr std::string_view kNumOps = "num_ops";          // int64: a compute node's FLOPs
inline constexpr std::string_view kTensorSize = "tensor_size";  // uint64: its bytes moved
inline constexpr std::string_view kIsCpuOp = "is_cpu_op";       // bool
inline constexpr std::string_view kCommType = "comm_type";      // int64: CollectiveCommType
inline constexpr std::string_view kCommSize = "comm_size";      // int64: bytes
inline constexpr std::string_view kCommSrc = "comm_src";        // int32: a receive's peer
inline constexpr std::string_view kCommDst = "comm_dst";        // int32: a send's peer
inline constexpr std::string_view kCommTag = "comm_tag";        // int32: pairs a send with its receive
inline constexpr std::string_view kPgName = "pg_name";          // string: the process group

// The version trainsim writes in GlobalMetadata (Chakra's converter writes "0.0.4").
inline constexpr std::string_view kSchemaVersion = "0.0.4";
// GlobalMetadata: "trainsim.format" marks a file trainsim wrote, whose nodes all
// carry the attributes below; the iteration graph's own figures follow it.
inline constexpr std::string_view kFormat = "trainsim.format";
inline constexpr std::string_view kFormatVersion = "trainsim-chakra-1";
inline constexpr std::string_view kRank = "trainsim.rank";
inline constexpr std::string_view kTasks = "trainsim.tasks";  // tasks of the whole graph
inline constexpr std::string_view kIterations = "trainsim.iterations";
inline constexpr std::string_view kMicrobatches = "trainsim.num_microbatches";
inline constexpr std::string_view kNumGpus = "trainsim.num_gpus";
inline constexpr std::string_view kTokens = "trainsim.tokens_per_iteration";
inline constexpr std::string_view kModelFlops = "trainsim.model_flops_per_iteration";
inline constexpr std::string_view kParametersPerGpu = "trainsim.parameters_per_gpu";
inline constexpr std::string_view kGradientBuckets = "trainsim.gradient_buckets";
inline constexpr std::string_view kLayersPerVirtualStage = "trainsim.layers_per_virtual_stage";
inline constexpr std::string_view kSimulatedRanks = "trainsim.simulated_ranks";
inline constexpr std::string_view kRepresentative = "trainsim.representative";

// Node attributes: the task (its id is the node's id, its rank the file's).
inline constexpr std::string_view kWork = "trainsim.work";
inline constexpr std::string_view kStream = "trainsim.stream";
inline constexpr std::string_view kCategory = "trainsim.category";
inline constexpr std::string_view kRole = "trainsim.role";
inline constexpr std::string_view kIteration = "trainsim.iteration";
inline constexpr std::string_view kMicrobatch = "trainsim.microbatch";
inline constexpr std::string_view kLayer = "trainsim.layer";
inline constexpr std::string_view kInstance = "trainsim.instance";  // a shared collective's instance
// Dependencies on other ranks' tasks that are not sends (a send's receiver has a
// COMM_RECV_NODE instead).
inline constexpr std::string_view kRemoteDeps = "trainsim.remote_deps";
inline constexpr std::string_view kRecvOf = "trainsim.recv_of";  // a receive node: its send's task id
// Its work: the kernel (hw::KernelWork), the collective, the host work.
inline constexpr std::string_view kWorkModelFlops = "trainsim.model_flops";
inline constexpr std::string_view kKernelClass = "trainsim.kernel_class";
inline constexpr std::string_view kFlops = "trainsim.flops";  // double: num_ops rounds
inline constexpr std::string_view kBytes = "trainsim.bytes";
inline constexpr std::string_view kCount = "trainsim.count";
inline constexpr std::string_view kGemm = "trainsim.gemm";  // double list: m, n, k
inline constexpr std::string_view kBackward = "trainsim.backward";
inline constexpr std::string_view kGradients = "trainsim.gradients";
inline constexpr std::string_view kGrouped = "trainsim.grouped";
inline constexpr std::string_view kFp8 = "trainsim.fp8";
inline constexpr std::string_view kKernel = "trainsim.kernel";
inline constexpr std::string_view kHeadDims = "trainsim.head_dims";  // int64 list: head_dim, value_head_dim
inline constexpr std::string_view kHostPass = "trainsim.host_pass";
inline constexpr std::string_view kAttentionKernel = "trainsim.attention_kernel";
inline constexpr std::string_view kCollective = "trainsim.collective";  // int64: net::CollectiveKind
inline constexpr std::string_view kCommBytes = "trainsim.comm_bytes";   // double: comm_size rounds
inline constexpr std::string_view kGroupShape = "trainsim.group_shape";  // int64 list: size, nodes, ranks per node
inline constexpr std::string_view kGroupMembers = "trainsim.group_members";  // int64 list, the lists one after another
inline constexpr std::string_view kGroupLists = "trainsim.group_lists";  // int64 list: each list's length
inline constexpr std::string_view kCopyEngine = "trainsim.copy_engine";
inline constexpr std::string_view kHostKind = "trainsim.host_kind";  // workload::HostWork::Kind
inline constexpr std::string_view kHostAmount = "trainsim.host_amount";

// Chakra's CollectiveCommType numbers (schema/protobuf/et_def.proto).
enum class CommType : long long {
  kAllReduce = 0, kReduce = 1, kAllGather = 2, kGather = 3, kScatter = 4, kBroadcast = 5,
  kAllToAll = 6, kReduceScatter = 7, kReduceScatterBlock = 8, kBarrier = 9
};

// The Chakra comm_type of a trainsim collective (send_recv has none: it is a
// COMM_SEND_NODE).
[[nodiscard]] constexpr std::optional<long long> comm_type_of(net::CollectiveKind k) {
  switch (k) {
    case net::CollectiveKind::kAllReduce: return static_cast<long long>(CommType::kAllReduce);
    case net::CollectiveKind::kAllGather: return static_cast<long long>(CommType::kAllGather);
    case net::CollectiveKind::kReduceScatter: return static_cast<long long>(CommType::kReduceScatter);
    case net::CollectiveKind::kAllToAll: return static_cast<long long>(CommType::kAllToAll);
    case net::CollectiveKind::kBroadcast: return static_cast<long long>(CommType::kBroadcast);
    case net::CollectiveKind::kReduce: return static_cast<long long>(CommType::kReduce);
    case net::CollectiveKind::kSendRecv: break;
  }
  return std::nullopt;
}

// The trainsim collective a Chakra comm_type maps to; none for those trainsim
// does not model (gather, scatter, reduce_scatter_block, barrier).
[[nodiscard]] constexpr std::optional<net::CollectiveKind> collective_of(long long comm_type) {
  switch (static_cast<CommType>(comm_type)) {
    case CommType::kAllReduce: return net::CollectiveKind::kAllReduce;
    case CommType::kReduce: return net::CollectiveKind::kReduce;
    case CommType::kAllGather: return net::CollectiveKind::kAllGather;
    case CommType::kBroadcast: return net::CollectiveKind::kBroadcast;
    case CommType::kAllToAll: return net::CollectiveKind::kAllToAll;
    case CommType::kReduceScatter: return net::CollectiveKind::kReduceScatter;
    default: break;
  }
  return std::nullopt;
}

}  // namespace trainsim::scenario::chakra
