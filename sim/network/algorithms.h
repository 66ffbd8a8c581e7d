#pragma once
// Collective algorithms as schedules of transfers (docs/model.md, "Collective
// algorithms"). A schedule is a list of phases run one after another; a phase is
// a set of transfers that run at once (a pipelined algorithm is one phase whose
// transfers carry the whole volume, as a chunked pipeline does in steady state)
// plus `steps` sequential latencies of its slowest path.
//
// Bytes follow nccl-tests: S is the buffer of all_reduce, broadcast, reduce and
// send_recv; the total (all ranks) of all_gather and reduce_scatter; the send
// buffer of all_to_all, of which S/n goes to every rank.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "network/collective.h"
#include "network/topology.h"

namespace trainsim::net {

enum class Algorithm { kAuto, kRing, kTree, kHalvingDoubling, kHierarchical, kNvls, kDirect, kPairwise };

std::string_view to_string(Algorithm a);
std::optional<Algorithm> algorithm_from_string(std::string_view name);

struct Transfer {
  enum class Ends : std::uint8_t { kGpuToGpu, kGpuToSwitch, kSwitchToGpu };
  long long src = 0;  // global ranks; for the switch ends, the GPU's node switch
  long long dst = 0;
  double bytes = 0.0;
  int rail = -1;  // NIC used between nodes; < 0: the destination GPU's own
  Ends ends = Ends::kGpuToGpu;
  double rate_cap = 0.0;  // B/s; 0 = none
};

// Start-up time that grows with the message size S (docs/model.md): the ring's
// pipeline inside a node, and the iterations of NCCL's NVLS chunk loop.
struct SizeLatency {
  // Ring: each of `fill_steps` steps waits for min(buffer, S x slice) bytes at `rate`.
  double fill_steps = 0.0;
  double slice = 0.0;   // a rank's slice per byte of S (1/n)
  double buffer = 0.0;  // B a step pipelines through (NCCL_BUFFSIZE)
  double rate = 0.0;    // B/s of a ring edge
  // NVLS: `loop_overhead` s per iteration over `loop_heads` x 16 channels of chunks.
  double loop_overhead = 0.0;
  double loop_heads = 0.0;
  [[nodiscard]] double at(double bytes) const;  // s
};

struct Phase {
  std::vector<Transfer> transfers;
  int steps = 1;  // sequential latencies of the phase's slowest path
  double fixed_latency = 0.0;  // s on top (in-switch reduction start-up)
  SizeLatency sized;
};

struct Schedule {
  Algorithm algorithm = Algorithm::kRing;
  std::vector<Phase> phases;
};

// Why `algorithm` cannot run `kind` over `members` on `topology`, or nothing
// when it can.
std::optional<std::string> unavailable(CollectiveKind kind, Algorithm algorithm, std::span<const long long> members,
                                       const Topology& topology);

// The algorithms automatic choice considers for `kind` over `members` (NCCL's:
// ring, tree across nodes, NVLS, direct point-to-point), in the order ties are
// broken in.
std::vector<Algorithm> candidates(CollectiveKind kind, std::span<const long long> members, const Topology& topology);

// The schedule of one collective. `members` are global ranks in group order
// (members[0] is the root of broadcast and reduce, the sender of send_recv).
// Throws std::invalid_argument when unavailable() says why.
Schedule build_schedule(CollectiveKind kind, Algorithm algorithm, std::span<const long long> members, double bytes,
                        const Topology& topology);

}  // namespace trainsim::net
