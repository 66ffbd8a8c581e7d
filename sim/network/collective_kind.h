#pragma once
// The collectives, one descriptor each, as nccl-tests defines them (NVIDIA/nccl-tests,
// doc/PERFORMANCE.md): the name profiles and the CLI use, the spellings nccl-tests'
// programs and users write, how the buffer S is split among the n ranks, and the bus
// factor (busbw = algbw x factor). Header-only and dependency-free, so the simulator,
// `trainsim collective`, the calibration harness and its nccl-tests importer (which
// build without the simulator library on a GPU machine) share one table.
#include <array>
#include <optional>
#include <string_view>

namespace trainsim::net {

enum class CollectiveKind { kAllReduce, kAllGather, kReduceScatter, kAllToAll, kBroadcast, kReduce, kSendRecv };

enum class BusFactor {
  kAllReduce,     // 2 (n - 1) / n: every byte is reduced and then gathered
  kNMinusOneOverN,  // (n - 1) / n: each rank exchanges all but its own share
  kOne,           // 1: S crosses every link once
};

struct CollectiveDescriptor {
  CollectiveKind kind;
  std::string_view name;                     // "all_reduce": profiles, results, CLI
  std::array<std::string_view, 2> spellings;  // nccl-tests' ("allreduce") and short ones; empty when none
  bool split_among_ranks;  // S is the larger buffer and each rank (or peer) gets S / n
  bool reduces;            // applies a reduction operator
  bool rooted;             // has a root rank
  BusFactor bus;
  std::string_view bus_text;  // the factor as nccl-tests writes it
};

// Most specific first, so that a search for names inside a longer string finds
// "all_reduce" before "reduce" and "reduce_scatter" before "reduce".
inline constexpr std::array<CollectiveDescriptor, 7> kCollectives{{
    {CollectiveKind::kAllReduce, "all_reduce", {"allreduce", ""}, false, true, false, BusFactor::kAllReduce,
     "2(n-1)/n"},
    {CollectiveKind::kReduceScatter, "reduce_scatter", {"reducescatter", ""}, true, true, false,
     BusFactor::kNMinusOneOverN, "(n-1)/n"},
    {CollectiveKind::kAllGather, "all_gather", {"allgather", ""}, true, false, false, BusFactor::kNMinusOneOverN,
     "(n-1)/n"},
    {CollectiveKind::kAllToAll, "all_to_all", {"alltoall", ""}, true, false, false, BusFactor::kNMinusOneOverN,
     "(n-1)/n"},
    {CollectiveKind::kSendRecv, "send_recv", {"sendrecv", ""}, false, false, false, BusFactor::kOne, "1"},
    {CollectiveKind::kBroadcast, "broadcast", {"bcast", ""}, false, false, true, BusFactor::kOne, "1"},
    {CollectiveKind::kReduce, "reduce", {"", ""}, false, true, true, BusFactor::kOne, "1"},
}};

[[nodiscard]] constexpr const CollectiveDescriptor& descriptor(CollectiveKind k) {
  for (const CollectiveDescriptor& d : kCollectives)
    if (d.kind == k) return d;
  return kCollectives.front();  // unreachable: every kind has a descriptor
}

[[nodiscard]] constexpr std::string_view to_string(CollectiveKind k) { return descriptor(k).name; }

// The kind `name` (exactly, as written) is the name or a spelling of.
[[nodiscard]] constexpr std::optional<CollectiveKind> collective_from_name(std::string_view name) {
  for (const CollectiveDescriptor& d : kCollectives) {
    if (name == d.name) return d.kind;
    for (std::string_view s : d.spellings)
      if (!s.empty() && name == s) return d.kind;
  }
  return std::nullopt;
}

// busbw / algbw for n ranks (nccl-tests' PERFORMANCE.md).
[[nodiscard]] constexpr double bus_factor(CollectiveKind k, int ranks) {
  const auto n = static_cast<double>(ranks);
  switch (descriptor(k).bus) {
    case BusFactor::kAllReduce: return 2.0 * (n - 1.0) / n;
    case BusFactor::kNMinusOneOverN: return (n - 1.0) / n;
    case BusFactor::kOne: break;
  }
  return 1.0;
}

}  // namespace trainsim::net
