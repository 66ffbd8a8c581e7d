#pragma once
// The per-iteration task graph: kernels and collectives placed on (rank, stream)
// lanes with dependencies. Tasks on one lane run in the order they were added
// (like a CUDA stream); `deps` adds cross-lane ordering.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hardware/compute_model.h"
#include "network/collective.h"
#include "workload/task_deps.h"

namespace trainsim::workload {

// kOffload: copies between the GPU and host memory on a copy engine (Transformer
// Engine's offload stream).
// kHost: the host CPU's own work for a GPU (CPU optimizer offload's update).
enum class Stream : std::uint8_t { kCompute, kTpComm, kDpComm, kPpComm, kCpComm, kEpComm, kOffload, kHost };
enum class Category : std::uint8_t {
  kForward, kBackward, kRecompute, kOptimizer,
  kAllReduce, kAllGather, kReduceScatter, kAllToAll, kSend, kRecv,
  kOffload, kReload  // device to host, host to device
};
inline constexpr int kNumStreams = 8;

// What a task does in the training step, so that the code reading a graph
// (execution, memory timeline, reports) never recognises a task by its name.
// A compute task says which part of the model it computes (its Category says
// which pass); a communication task says what it carries.
enum class Role : std::uint8_t {
  kEmbedding,          // the token and position lookup, and its backward
  kLayer,              // a decoder layer's kernels
  kHead,               // the final norm, the output layer and the loss
  kOptimizerStep,      // the parameter update
  kLayerCollective,    // a tensor-, context- or expert-parallel collective inside a pass
  kActivationSend,     // pipeline: activations to the next virtual stage
  kGradientSend,       // pipeline: activation gradients to the previous one
  kGradientReduction,  // data-parallel all-reduce or ZeRO reduce-scatter of weight gradients
  kParameterGather,    // ZeRO: all-gather of parameters
  kParameterAverage,   // local SGD: the replicas average their parameters
  kPsPush,             // async_ps: gradients to the parameter servers
  kPsPull,             // async_ps: parameters back from them
  kActivationOffload,  // a layer's saved activations to host memory
  kActivationReload,   // and back for its backward
};

std::string_view to_string(Stream s);
std::string_view to_string(Category c);
Category category_of(net::CollectiveKind k);

// What a task computes or communicates. The tasks that repeat an op (every
// micro-batch's copy of a layer's kernel on one rank) share one Work, so a task
// itself stays small (docs/architecture.md, "Engine speed").
// Work off the GPU's engines: a copy between the GPU and its host's memory
// (pinned, on a copy engine), or the host CPU's Adam update of a GPU's optimizer
// shard (CPU optimizer offload).
struct HostWork {
  enum class Kind : std::uint8_t { kToHost, kToDevice, kCpuAdam };
  Kind kind = Kind::kToHost;
  double amount = 0.0;  // bytes copied, or parameters updated
};

struct Work {
  std::string name;
  hw::KernelWork compute;                     // compute tasks
  std::optional<net::Collective> collective;  // communication tasks
  double model_flops = 0.0;
  std::optional<HostWork> host;               // host copies and CPU updates
  // A kernel whose time was measured, not derived from its work: a Chakra trace's
  // compute node that gives only its duration (docs/chakra.md). Priced as given.
  std::optional<double> measured_seconds;
};
using WorkId = std::uint32_t;

struct Task {
  WorkId work = 0;  // TaskGraph::work(task)
  int rank = 0;
  Stream stream = Stream::kCompute;
  Category category = Category::kForward;
  Role role = Role::kLayer;
  int iteration = 0;
  int microbatch = -1;
  // -1: none. 32 bits (the reader bounds num_layers far below): with the shared
  // collectives kept apart (TaskGraph::share_collective) a task takes 40 bytes,
  // and a large graph holds millions of them.
  std::int32_t layer = -1;
  TaskDeps deps;
};
static_assert(sizeof(Task) == 40, "a task's size sets a large graph's memory (docs/architecture.md, \"Engine speed\")");

class TaskGraph {
 public:
  // Registers what one or more tasks do; add() then names it in Task::work.
  WorkId add_work(Work work);
  // `task.work` must be a work of this graph and its deps earlier tasks.
  TaskId add(Task task);
  // Room for `n` tasks, so that adding them moves none (a hint; more may be added).
  void reserve(std::size_t n) { tasks_.reserve(n); }
  // A dependency on a task added later (pipeline transfers between stages).
  void add_dep(TaskId task, TaskId dep) { tasks_.at(task).deps.push_back(dep); }
  // Collective tasks of one call on different simulated ranks share an instance
  // and start together once every one of them is ready. Tasks are marked in the
  // order they were added (the executor starts an instance's members in it).
  void share_collective(TaskId task, std::int64_t instance);
  struct SharedCollective {
    TaskId task;
    std::int64_t instance;
  };
  [[nodiscard]] const std::vector<SharedCollective>& shared_collectives() const { return shared_; }
  [[nodiscard]] const std::vector<Task>& tasks() const { return tasks_; }
  [[nodiscard]] const Task& operator[](TaskId id) const { return tasks_[id]; }
  [[nodiscard]] std::size_t size() const { return tasks_.size(); }
  [[nodiscard]] const Work& work(const Task& task) const { return works_[task.work]; }
  [[nodiscard]] const Work& work(TaskId id) const { return works_[tasks_[id].work]; }
  [[nodiscard]] const std::vector<Work>& works() const { return works_; }

 private:
  std::vector<Task> tasks_;
  std::vector<Work> works_;
  std::vector<SharedCollective> shared_;  // by task, ascending
};

}  // namespace trainsim::workload
