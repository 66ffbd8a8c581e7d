// workload::TaskDeps: a task's dependency list, two ids inside the task and any
// more on the heap. Every operation the graph builders use keeps the ids in order.
#include "workload/task_deps.h"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

namespace trainsim {
namespace {

using workload::TaskDeps;
using workload::TaskId;

std::vector<TaskId> ids(const TaskDeps& d) { return {d.begin(), d.end()}; }

TEST(TaskDeps, GrowsPastTheInlineIdsInOrder) {
  TaskDeps d;
  EXPECT_TRUE(d.empty());
  for (TaskId i = 0; i < 9; ++i) d.push_back(10 * i);
  EXPECT_EQ(ids(d), (std::vector<TaskId>{0, 10, 20, 30, 40, 50, 60, 70, 80}));
  d = {7};
  EXPECT_EQ(ids(d), (std::vector<TaskId>{7}));
  d.append(std::vector<TaskId>{8, 9, 10});
  EXPECT_EQ(ids(d), (std::vector<TaskId>{7, 8, 9, 10}));
}

TEST(TaskDeps, CopiesAndMovesKeepTheIds) {
  for (std::size_t n : {1U, 2U, 3U, 40U}) {
    std::vector<TaskId> want;
    for (std::size_t i = 0; i < n; ++i) want.push_back(static_cast<TaskId>(3 * i + 1));
    TaskDeps a;
    a = want;
    const TaskDeps copy = a;
    EXPECT_EQ(ids(copy), want);
    TaskDeps moved = std::move(a);
    EXPECT_EQ(ids(moved), want);
    EXPECT_TRUE(a.empty());  // NOLINT(bugprone-use-after-move): a moved-from list is empty
    a = moved;
    EXPECT_EQ(ids(a), want);
    TaskDeps other{5, 6, 7};
    other = std::move(moved);
    EXPECT_EQ(ids(other), want);
    EXPECT_EQ(other.size(), n);
  }
}

}  // namespace
}  // namespace trainsim
