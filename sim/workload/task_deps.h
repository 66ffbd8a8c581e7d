#pragma once
// A task's dependencies: the ids of earlier tasks it waits for. Two thirds of a
// large graph's tasks have none and nearly all the rest one (the previous
// stage's transfer, a pass's collective), so up to two live inside the task and
// only longer lists take memory of their own (docs/architecture.md, "Engine speed").
#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <vector>

namespace trainsim::workload {

using TaskId = std::uint32_t;

class TaskDeps {
 public:
  TaskDeps() = default;
  TaskDeps(std::initializer_list<TaskId> ids) { append(ids); }
  explicit TaskDeps(std::span<const TaskId> ids) { append(ids); }
  TaskDeps(const TaskDeps& other) { append(other); }
  TaskDeps(TaskDeps&& other) noexcept { take(other); }
  TaskDeps& operator=(const TaskDeps& other) {
    if (this != &other) {
      clear();
      append(other);
    }
    return *this;
  }
  TaskDeps& operator=(TaskDeps&& other) noexcept {
    if (this != &other) {
      release();
      take(other);
    }
    return *this;
  }
  TaskDeps& operator=(std::initializer_list<TaskId> ids) {
    clear();
    append(ids);
    return *this;
  }
  TaskDeps& operator=(const std::vector<TaskId>& ids) {
    clear();
    append(ids);
    return *this;
  }
  ~TaskDeps() { release(); }

  void push_back(TaskId id) {
    if (size_ == capacity_) grow(size_ + 1);
    data()[size_++] = id;
  }
  void append(std::span<const TaskId> ids) {
    if (size_ + ids.size() > capacity_) grow(size_ + ids.size());
    std::copy(ids.begin(), ids.end(), data() + size_);
    size_ += static_cast<std::uint32_t>(ids.size());
  }
  void append(std::initializer_list<TaskId> ids) { append(std::span<const TaskId>(ids.begin(), ids.size())); }
  void clear() { size_ = 0; }

  [[nodiscard]] std::size_t size() const { return size_; }
  [[nodiscard]] bool empty() const { return size_ == 0; }
  [[nodiscard]] const TaskId* begin() const { return data(); }
  [[nodiscard]] const TaskId* end() const { return data() + size_; }
  [[nodiscard]] TaskId operator[](std::size_t i) const { return data()[i]; }
  operator std::span<const TaskId>() const { return {data(), size_}; }  // NOLINT: a view, as vector's

 private:
  static constexpr std::uint32_t kInline = 2;
  [[nodiscard]] bool on_heap() const { return capacity_ > kInline; }
  [[nodiscard]] TaskId* data() { return on_heap() ? heap_ : inline_; }
  [[nodiscard]] const TaskId* data() const { return on_heap() ? heap_ : inline_; }
  void grow(std::size_t need) {
    const auto capacity = static_cast<std::uint32_t>(std::max<std::size_t>(need, 2 * std::size_t{capacity_}));
    auto* bigger = new TaskId[capacity];
    std::copy(data(), data() + size_, bigger);
    release();
    heap_ = bigger;
    capacity_ = capacity;
  }
  void release() {
    if (on_heap()) delete[] heap_;
    capacity_ = kInline;
  }
  // Moves `other`'s ids here (this holds nothing) and leaves it empty.
  void take(TaskDeps& other) {
    size_ = other.size_;
    capacity_ = other.capacity_;
    if (other.on_heap()) heap_ = other.heap_;
    else std::copy(other.inline_, other.inline_ + other.size_, inline_);
    other.size_ = 0;
    other.capacity_ = kInline;
  }

  std::uint32_t size_ = 0;
  std::uint32_t capacity_ = kInline;
  union {
    TaskId inline_[kInline] = {};
    TaskId* heap_;
  };
};

}  // namespace trainsim::workload
