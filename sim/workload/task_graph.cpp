#include "workload/task_graph.h"

#include <stdexcept>
#include <string>
#include <utility>

namespace trainsim::workload {

std::string_view to_string(Stream s) {
  switch (s) {
    case Stream::kCompute: return "compute";
    case Stream::kTpComm: return "tp_comm";
    case Stream::kDpComm: return "dp_comm";
    case Stream::kPpComm: return "pp_comm";
    case Stream::kCpComm: return "cp_comm";
    case Stream::kEpComm: return "ep_comm";
    case Stream::kOffload: return "offload";
    case Stream::kHost: return "host";
  }
  return "unknown";
}

std::string_view to_string(Category c) {
  switch (c) {
    case Category::kForward: return "forward";
    case Category::kBackward: return "backward";
    case Category::kRecompute: return "recompute";
    case Category::kOptimizer: return "optimizer";
    case Category::kAllReduce: return "all_reduce";
    case Category::kAllGather: return "all_gather";
    case Category::kReduceScatter: return "reduce_scatter";
    case Category::kAllToAll: return "all_to_all";
    case Category::kSend: return "send";
    case Category::kRecv: return "recv";
    case Category::kOffload: return "offload";
    case Category::kReload: return "reload";
  }
  return "unknown";
}

Category category_of(net::CollectiveKind k) {
  switch (k) {
    case net::CollectiveKind::kAllReduce: return Category::kAllReduce;
    case net::CollectiveKind::kAllGather: return Category::kAllGather;
    case net::CollectiveKind::kReduceScatter: return Category::kReduceScatter;
    case net::CollectiveKind::kAllToAll: return Category::kAllToAll;
    case net::CollectiveKind::kBroadcast:
    case net::CollectiveKind::kReduce:
    case net::CollectiveKind::kSendRecv: return Category::kSend;
  }
  return Category::kSend;
}

WorkId TaskGraph::add_work(Work work) {
  if (works_.size() >= UINT32_MAX) throw std::length_error("task graph exceeds 2^32 works");
  works_.push_back(std::move(work));
  return static_cast<WorkId>(works_.size() - 1);
}

TaskId TaskGraph::add(Task task) {
  if (tasks_.size() >= UINT32_MAX) throw std::length_error("task graph exceeds 2^32 tasks");
  if (task.work >= works_.size())
    throw std::invalid_argument("task names work " + std::to_string(task.work) + " of " +
                                std::to_string(works_.size()));
  const auto id = static_cast<TaskId>(tasks_.size());
  for (TaskId d : task.deps)
    if (d >= id)
      throw std::invalid_argument("task '" + works_[task.work].name + "' depends on a later task " + std::to_string(d));
  tasks_.push_back(std::move(task));
  return id;
}

void TaskGraph::share_collective(TaskId task, std::int64_t instance) {
  if (task >= tasks_.size() || !works_[tasks_[task].work].collective)
    throw std::invalid_argument("share_collective: task " + std::to_string(task) + " is not a collective of the graph");
  if (instance < 0) throw std::invalid_argument("share_collective: instance must be >= 0");
  if (!shared_.empty() && shared_.back().task >= task)
    throw std::invalid_argument("share_collective: tasks must be marked in the order they were added");
  shared_.push_back({task, instance});
}

}  // namespace trainsim::workload
