#pragma once
// Memory of one GPU over the simulated time (docs/model.md, "Memory over time"):
// the model states all along, each layer's activations from the start of its
// forward pass to the end of its backward pass (plus recomputed ones during the
// backward), and the buffers of communication received on the TP, PP, CP and EP
// streams while they are in flight. It follows the executed timeline, so the
// peak has a moment and an op.
#include "execution/simulate.h"

namespace trainsim::exec {

// `rank` must be one of the simulated ranks; its pipeline stage sets the states.
MemoryTimeline track_memory(const config::Scenario& s, const SimulationOutput& out, int rank);

}  // namespace trainsim::exec
