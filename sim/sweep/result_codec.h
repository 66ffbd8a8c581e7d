#pragma once
// Point results as bytes, for evaluating a sweep across processes (the MPI task
// farm, sim/cli/mpi_farm.h): MessagePack keeps every double bit for bit, so
// the collected results equal the ones a single process computes. Every field
// of PointResult travels, in the order sweep/point_fields.h walks them.
#include <cstdint>
#include <vector>

#include "sweep/evaluate.h"

namespace trainsim::sweep {

std::vector<std::uint8_t> encode_results(const std::vector<PointResult>& results);
// Throws std::invalid_argument on bytes encode_results() did not write.
std::vector<PointResult> decode_results(const std::vector<std::uint8_t>& bytes);

}  // namespace trainsim::sweep
