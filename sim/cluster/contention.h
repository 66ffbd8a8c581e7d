#pragma once
// Jobs that share a leaf group's uplinks (docs/cluster.md, "Contention"). A job's
// duty on a group is the share of time its own traffic would keep the group's
// uplinks busy at their full rate, alone: d = bytes through them / (capacity x
// simulated time). While j sends, each neighbour k sharing the group sends too with
// probability d_k, independently, and max-min fairness gives j 1 / (1 + N) of the
// uplinks when N of them do: j's share is E[1 / (1 + N)], N the sum of Bernoulli(d_k).
// Its simulation then runs with that part of the group's uplink capacity.
#include <map>
#include <span>

namespace trainsim::cluster {

// A job's duty cycle on the uplinks of each leaf group of the cluster it has nodes in
// (only the groups its traffic leaves through), and in a 3-tier tree on each pod's
// uplinks to the cores, keyed pod_key(pod).
using GroupDuty = std::map<int, double>;
inline int pod_key(int pod) { return -1 - pod; }
inline bool is_pod_key(int key) { return key < 0; }
inline int pod_of_key(int key) { return -1 - key; }

// E[1 / (1 + N)], N = sum of independent Bernoulli(d_k); duties clamped to [0, 1].
double expected_share(std::span<const double> neighbour_duties);

// A share rounded to the nearest 1/32 (at least 1/32), so that contended paces are
// simulated once per step.
double quantized_share(double share);

}  // namespace trainsim::cluster
