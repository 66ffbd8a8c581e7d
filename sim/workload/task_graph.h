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

namespace trainsim::workload {

enum class Stream : std::uint8_t { kCompute, kTpComm, kDpComm, kPpComm, kCpComm, kEpComm };
enum class Category : std::uint8_t {
  kForward, kBackward, kRecompute, kOptimizer,
  kAllReduce, kAllGather, kReduceScatter, kAllToAll, kSend, kRecv
};
inline constexpr int kNumStreams = 6;

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
};

std::string_view to_string(Stream s);
std::string_view to_string(Category c);
Category category_of(net::CollectiveKind k);

using TaskId = std::uint32_t;

struct Task {
  std::string name;
  int rank = 0;
  Stream stream = Stream::kCompute;
  Category category = Category::kForward;
  Role role = Role::kLayer;
  hw::KernelWork compute;                 // compute tasks
  std::optional<net::Collective> collective;  // communication tasks
  // Tasks of one collective call on different simulated ranks share an instance
  // id and start together once every one of them is ready; -1: not shared.
  std::int64_t collective_instance = -1;
  std::vector<TaskId> deps;
  int iteration = 0;
  int microbatch = -1;
  long long layer = -1;
  double model_flops = 0.0;
};

class TaskGraph {
 public:
  TaskId add(Task task);
  // Room for `n` tasks, so that adding them moves none (a hint; more may be added).
  void reserve(std::size_t n) { tasks_.reserve(n); }
  // A dependency on a task added later (pipeline transfers between stages).
  void add_dep(TaskId task, TaskId dep) { tasks_.at(task).deps.push_back(dep); }
  [[nodiscard]] const std::vector<Task>& tasks() const { return tasks_; }
  [[nodiscard]] const Task& operator[](TaskId id) const { return tasks_[id]; }
  [[nodiscard]] std::size_t size() const { return tasks_.size(); }

 private:
  std::vector<Task> tasks_;
};

}  // namespace trainsim::workload
