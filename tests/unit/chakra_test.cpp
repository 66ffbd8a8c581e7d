// Chakra execution traces (docs/chakra.md): a scenario's graph written and read
// back gives the same simulation; hand-built traces give the times of
// docs/model.md's equations; refused node types and malformed files are errors
// naming the file and the node or byte.
#include <gtest/gtest.h>

#include <cmath>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <string>
#include <vector>

#include "execution/simulate.h"
#include "report/chakra_writer.h"
#include "scenario/chakra_attributes.h"
#include "scenario/chakra_file.h"
#include "scenario/chakra_reader.h"
#include "scenario/errors.h"
#include "scenario/reader.h"

namespace trainsim {
namespace {

namespace ch = scenario::chakra;
using ChakraProtoMsg::Node;

const std::string kRoot = TRAINSIM_SOURCE_DIR;

// Length-delimited messages, as Chakra's protolib.encodeMessage writes them.
std::string encode(const ChakraProtoMsg::GlobalMetadata& meta, const std::vector<Node>& nodes) {
  std::string out;
  {
    google::protobuf::io::StringOutputStream raw(&out);
    google::protobuf::io::CodedOutputStream coded(&raw);
    const auto put = [&](const google::protobuf::MessageLite& m) {
      const std::string b = m.SerializeAsString();
      coded.WriteVarint32(static_cast<std::uint32_t>(b.size()));
      coded.WriteString(b);
    };
    put(meta);
    for (const Node& n : nodes) put(n);
  }
  return out;
}

ChakraProtoMsg::GlobalMetadata metadata() {
  ChakraProtoMsg::GlobalMetadata m;
  m.set_version("0.0.4");
  return m;
}

Node node(std::uint64_t id, ChakraProtoMsg::NodeType type, std::vector<std::uint64_t> deps = {}) {
  Node n;
  n.set_id(id);
  n.set_name("n" + std::to_string(id));
  n.set_type(type);
  for (const auto d : deps) n.add_data_deps(d);
  return n;
}

void attr_int(Node& n, std::string_view name, long long v) {
  auto* a = n.add_attr();
  a->set_name(std::string(name));
  a->set_int64_val(v);
}
void attr_int32(Node& n, std::string_view name, int v) {
  auto* a = n.add_attr();
  a->set_name(std::string(name));
  a->set_int32_val(v);
}

std::vector<scenario::ChakraInput> inputs_of(const workload::IterationGraph& it) {
  std::vector<scenario::ChakraInput> in;
  for (const int r : it.simulated_ranks)
    in.push_back({"t." + std::to_string(r) + ".et", r, report::chakra_trace_bytes(it, r)});
  return in;
}

// A one-node scenario of 8 H100 (the model is the scenario file's; a foreign trace
// does not use it).
config::Scenario h100_node() {
  return scenario::parse_scenario_text(
      R"({"cluster": {"gpu": "H100-SXM5-80GB", "num_nodes": 1}, "model": "gpt2-124m",
          "training": {"global_batch_size": 8, "micro_batch_size": 1, "precision": "bf16"},
          "simulation": {"network_model": "flow"}})",
      "h100.json");
}

TEST(Chakra, ARoundTripOfAPipelineAndDataParallelScenarioGivesTheSameSimulation) {
  // TP 2, PP 2, DP 2 over two nodes: sends between the stages, TP and DP all-reduces.
  const config::Scenario s = scenario::read_scenario_file(kRoot + "/scenarios/gpt2-350m-8xh100-3d.json");
  const exec::SimulationOutput direct = exec::simulate(s);
  const std::vector<scenario::ChakraInput> files = inputs_of(direct.iteration);
  ASSERT_EQ(files.size(), 2U);  // one simulated rank per stage

  long long sends = 0, recvs = 0, collectives = 0, compute = 0;
  for (const scenario::ChakraInput& f : files)
    for (const Node& n : ch::decode_file(f.bytes, f.file).nodes) {
      sends += n.type() == ChakraProtoMsg::COMM_SEND_NODE;
      recvs += n.type() == ChakraProtoMsg::COMM_RECV_NODE;
      collectives += n.type() == ChakraProtoMsg::COMM_COLL_NODE;
      compute += n.type() == ChakraProtoMsg::COMP_NODE;
    }
  EXPECT_GT(sends, 0);
  EXPECT_EQ(recvs, sends);  // every send is waited for on the other stage
  EXPECT_GT(collectives, 0);
  EXPECT_GT(compute, 0);

  const scenario::ChakraTrace trace = scenario::read_chakra_trace(files, s.cluster);
  EXPECT_TRUE(trace.written_by_trainsim);
  ASSERT_EQ(trace.iteration.graph.size(), direct.iteration.graph.size());
  const exec::SimulationOutput back = exec::simulate_graph(s, trace.iteration);
  EXPECT_EQ(back.timeline.makespan, direct.timeline.makespan);  // exact: integer nanoseconds
  ASSERT_EQ(back.timeline.spans.size(), direct.timeline.spans.size());
  for (std::size_t i = 0; i < direct.timeline.spans.size(); ++i) {
    EXPECT_EQ(back.timeline.spans[i].task, direct.timeline.spans[i].task);
    EXPECT_EQ(back.timeline.spans[i].start, direct.timeline.spans[i].start);
    EXPECT_EQ(back.timeline.spans[i].end, direct.timeline.spans[i].end);
  }
}

TEST(Chakra, AHandBuiltTraceTakesTheRooflineAndTheAllReduceOfModelMd) {
  const config::Scenario s = h100_node();
  // Each of 8 ranks: a GEMM of 1e15 FLOPs (beyond the largest point of the matmul
  // efficiency curve, where it stays flat: docs/model.md "Matmul efficiency"), then
  // an all-reduce of the 176,446,464 bytes of docs/model.md's worked example.
  constexpr double kFlops = 1e15;
  constexpr double kBytes = 176'446'464.0;
  std::vector<scenario::ChakraInput> files;
  for (int r = 0; r < 8; ++r) {
    Node gemm = node(1, ChakraProtoMsg::COMP_NODE);
    attr_int(gemm, ch::kNumOps, static_cast<long long>(kFlops));
    Node ar = node(2, ChakraProtoMsg::COMM_COLL_NODE, {1});
    attr_int(ar, ch::kCommType, 0);  // ALL_REDUCE
    attr_int(ar, ch::kCommSize, static_cast<long long>(kBytes));
    files.push_back({"hand." + std::to_string(r) + ".et", r, encode(metadata(), {gemm, ar})});
  }
  const scenario::ChakraTrace trace = scenario::read_chakra_trace(files, s.cluster);
  EXPECT_FALSE(trace.written_by_trainsim);
  EXPECT_EQ(trace.priced, 8);
  const exec::SimulationOutput out = exec::simulate_graph(s, trace.iteration);
  // Compute cost: F / (peak_bf16 x eta(F)), eta the curve's last point.
  const double gemm_s = kFlops / (s.cluster.gpu.peak(hw::Precision::kBf16) * s.cluster.gpu.matmul_efficiency.back().efficiency);
  // NVLS all-reduce of k = 8 GPUs in one node (docs/model.md, "In-switch reduction"),
  // with the H100 preset's numbers: T = alpha_intra + nvls_latency + loops x
  // nvls_loop_overhead + S (k+1)/k / min(450 GB/s x 0.832, 450 GB/s x 0.822). S is
  // 168.3 MiB: 64 KiB chunks (S < 64 x 16k x 128 KiB, not < 8 x 16k x 64 KiB), so
  // loops = ceil(S / (16 x 8 x 64 KiB)) = 22.
  const double loops = std::ceil(kBytes / (16.0 * 8.0 * 64.0 * 1024.0));
  EXPECT_EQ(loops, 22.0);
  const double all_reduce_s = 1.83e-6 + 26.1e-6 + loops * 10.9e-6 + 9.0 / 8.0 * kBytes / (450e9 * 0.822);
  EXPECT_NEAR(all_reduce_s, 804.37e-6, 0.01e-6);
  EXPECT_NEAR(core::to_seconds(out.timeline.makespan), gemm_s + all_reduce_s, 5e-9);
}

TEST(Chakra, AComputeNodeWithOnlyItsDurationTakesItAndAReceiveWaitsForItsSend) {
  const config::Scenario s = h100_node();
  Node work = node(1, ChakraProtoMsg::COMP_NODE);
  work.set_duration_micros(1500);
  Node send = node(2, ChakraProtoMsg::COMM_SEND_NODE, {1});
  attr_int32(send, ch::kCommDst, 1);
  attr_int(send, ch::kCommSize, 1 << 20);
  Node recv = node(1, ChakraProtoMsg::COMM_RECV_NODE);
  attr_int32(recv, ch::kCommSrc, 0);
  Node after = node(2, ChakraProtoMsg::COMP_NODE, {1});
  after.set_duration_micros(250);
  const std::vector<scenario::ChakraInput> files{{"p.0.et", 0, encode(metadata(), {work, send})},
                                                 {"p.1.et", 1, encode(metadata(), {recv, after})}};
  const scenario::ChakraTrace trace = scenario::read_chakra_trace(files, s.cluster);
  EXPECT_EQ(trace.measured, 2);
  const exec::SimulationOutput out = exec::simulate_graph(s, trace.iteration);
  core::Time send_end = 0;
  core::Time after_start = 0;
  for (const exec::Span& sp : out.timeline.spans) {
    const workload::Work& w = out.iteration.graph.work(sp.task);
    if (w.collective) send_end = sp.end;
    if (w.name == "n2" && !w.collective) after_start = sp.start;
  }
  EXPECT_GT(send_end, core::from_seconds(1.5e-3));
  EXPECT_EQ(after_start, send_end);
  EXPECT_EQ(out.timeline.makespan, send_end + core::from_seconds(250e-6));
}

// A trace laid out as Chakra's converter writes one rank's (src/converter/
// pytorch_converter.py at 21585d8, and its test trace tests/data/chakra.0.et): a
// GlobalMetadata of attributes without a version; CPU operators (is_cpu_op true)
// whose ctrl_deps name their callers, which the converter may have dropped; GPU
// kernels that give only their duration and depend on the CPU operator that launched
// them; the host side of a c10d call as a COMM_COLL_NODE with is_cpu_op true and no
// comm_type; its NCCL kernel with comm_type and comm_size (int64), no pg_name.
TEST(Chakra, AConverterTraceOfOneRankRunsOnEveryGpuOfTheCluster) {
  const config::Scenario s = h100_node();
  constexpr double kBytes = 176'446'464.0;
  ChakraProtoMsg::GlobalMetadata meta;
  auto* schema = meta.add_attr();
  schema->set_name("schema");
  schema->set_string_val("1.0.1");
  auto* pid = meta.add_attr();
  pid->set_name("pid");
  pid->set_uint64_val(114598);
  const auto cpu = [](Node& n, bool is_cpu) {
    auto* a = n.add_attr();
    a->set_name(std::string(ch::kIsCpuOp));
    a->set_bool_val(is_cpu);
  };
  Node flatten = node(216, ChakraProtoMsg::COMP_NODE);
  flatten.add_ctrl_deps(3);  // the caller, not in the file
  flatten.set_duration_micros(318);
  cpu(flatten, true);
  Node cat = node(430, ChakraProtoMsg::COMP_NODE, {216});
  cat.add_ctrl_deps(429);
  cat.set_duration_micros(1500);
  cpu(cat, false);
  Node host_allreduce = node(432, ChakraProtoMsg::COMM_COLL_NODE, {216});
  host_allreduce.set_duration_micros(85);
  cpu(host_allreduce, true);
  Node nccl = node(435, ChakraProtoMsg::COMM_COLL_NODE, {432, 430});
  cpu(nccl, false);
  attr_int(nccl, ch::kCommType, 0);  // ALL_REDUCE
  attr_int(nccl, ch::kCommSize, static_cast<long long>(kBytes));
  auto* dims = nccl.add_attr();
  dims->set_name("involved_dim");
  dims->mutable_bool_list();
  Node next_op = node(436, ChakraProtoMsg::COMP_NODE, {432});
  cpu(next_op, true);
  Node next_kernel = node(440, ChakraProtoMsg::COMP_NODE, {436});
  next_kernel.set_duration_micros(600);
  cpu(next_kernel, false);
  const std::vector<scenario::ChakraInput> files{
      {"chakra.0.et", 0, encode(meta, {flatten, cat, host_allreduce, nccl, next_op, next_kernel})}};
  const scenario::ChakraTrace trace = scenario::read_chakra_trace(files, s.cluster);
  EXPECT_FALSE(trace.written_by_trainsim);
  EXPECT_EQ(trace.measured, 2);
  EXPECT_EQ(trace.cpu_ops_skipped, 3);
  const exec::SimulationOutput out = exec::simulate_graph(s, trace.iteration);
  // The kernels run in launch order on the compute stream, 1500 then 600 us, the
  // second beside the all-reduce at its measured time; the all-reduce follows the
  // first and spans the node's 8 GPUs: NVLS, 804.37 us (the test above).
  core::Time kernel_end = 0;
  core::Time reduce_start = -1;
  for (const exec::Span& sp : out.timeline.spans) {
    const workload::Work& w = out.iteration.graph.work(sp.task);
    if (w.collective) {
      EXPECT_EQ(w.collective->group.size, 8);
      reduce_start = sp.start;
    }
    if (w.name == "n440") kernel_end = sp.end;
  }
  EXPECT_EQ(reduce_start, core::from_seconds(1500e-6));
  EXPECT_EQ(kernel_end, core::from_seconds(2100e-6));
  EXPECT_NEAR(core::to_seconds(out.timeline.makespan), 1500e-6 + 804.37e-6, 0.01e-6);
}

// The message of what `read` throws.
template <class Read>
std::string error_of(Read read) {
  try {
    read();
  } catch (const scenario::ScenarioError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Chakra, NodeTypesItDoesNotMapAreRefusedNamingFileNodeAndType) {
  const config::Scenario s = h100_node();
  const std::vector<scenario::ChakraInput> load{{"m.0.et", 0, encode(metadata(), {node(7, ChakraProtoMsg::MEM_LOAD_NODE)})}};
  const std::string e = error_of([&] { (void)scenario::read_chakra_trace(load, s.cluster); });
  EXPECT_NE(e.find("m.0.et"), std::string::npos) << e;
  EXPECT_NE(e.find("node 7"), std::string::npos) << e;
  EXPECT_NE(e.find("MEM_LOAD_NODE"), std::string::npos) << e;
  EXPECT_NE(e.find("COMM_COLL_NODE"), std::string::npos) << e;  // says what is supported

  Node gather = node(3, ChakraProtoMsg::COMM_COLL_NODE);
  attr_int(gather, ch::kCommType, 3);  // GATHER
  attr_int(gather, ch::kCommSize, 1024);
  const std::vector<scenario::ChakraInput> g{{"g.0.et", 0, encode(metadata(), {gather})}};
  const std::string eg = error_of([&] { (void)scenario::read_chakra_trace(g, s.cluster); });
  EXPECT_NE(eg.find("g.0.et: node 3"), std::string::npos) << eg;
  EXPECT_NE(eg.find("GATHER"), std::string::npos) << eg;
}

TEST(Chakra, MalformedFilesAreErrorsNamingTheFileAndByte) {
  const config::Scenario s = h100_node();
  const auto read = [&](std::string bytes) {
    const std::vector<scenario::ChakraInput> in{{"bad.0.et", 0, std::move(bytes)}};
    return error_of([&] { (void)scenario::read_chakra_trace(in, s.cluster); });
  };
  std::string good = encode(metadata(), {node(1, ChakraProtoMsg::COMP_NODE)});
  // A varint whose continuation bit is set on the last byte.
  const std::string truncated_varint = read(good + "\x80");
  EXPECT_NE(truncated_varint.find("bad.0.et: byte " + std::to_string(good.size())), std::string::npos) << truncated_varint;
  EXPECT_NE(truncated_varint.find("truncated varint"), std::string::npos) << truncated_varint;
  // The last message cut short.
  const std::string cut = read(good.substr(0, good.size() - 1));
  EXPECT_NE(cut.find("bad.0.et: byte"), std::string::npos) << cut;
  EXPECT_NE(cut.find("left"), std::string::npos) << cut;
  // A Node where the GlobalMetadata belongs.
  std::string node_first;
  {
    const std::string b = node(1, ChakraProtoMsg::COMP_NODE).SerializeAsString();
    node_first.push_back(static_cast<char>(b.size()));
    node_first += b;
  }
  const std::string wrong = read(node_first);
  EXPECT_NE(wrong.find("bad.0.et: byte 0"), std::string::npos) << wrong;
  EXPECT_NE(wrong.find("not a Chakra GlobalMetadata"), std::string::npos) << wrong;
  EXPECT_NE(read("").find("empty"), std::string::npos);
  // A GlobalMetadata with neither a version nor attributes.
  const std::string bare = read(encode(ChakraProtoMsg::GlobalMetadata{}, {node(1, ChakraProtoMsg::COMP_NODE)}));
  EXPECT_NE(bare.find("bad.0.et: byte 0: the GlobalMetadata is empty"), std::string::npos) << bare;
}

}  // namespace
}  // namespace trainsim
