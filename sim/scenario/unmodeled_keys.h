#pragma once
// Recipe switches that published jobs set and trainsim does not model yet
// (issue 24, item 5; docs/scenario.md, "Switches not modeled yet"). Each is a
// known key of its section that is refused with what the framework means by it
// and what to do instead, rather than reported as an unknown key.
#include <span>
#include <string_view>
#include <vector>

#include "scenario/json_fields.h"

namespace trainsim::scenario {

struct UnmodeledKey {
  std::string_view key;
  std::string_view meaning;  // the framework's switch and what it does
  std::string_view instead;  // what to do, and what the simulation then is
};

std::span<const UnmodeledKey> unmodeled_parallelism_keys();
std::span<const UnmodeledKey> unmodeled_training_keys();

// `known` with the keys of `unmodeled` added, for ObjectReader::object.
std::vector<std::string_view> with_unmodeled(std::vector<std::string_view> known,
                                             std::span<const UnmodeledKey> unmodeled);

// Refuses (ObjectReader::fail_message) the first key of `unmodeled` that `o` holds
// with a value other than false (the switch off, which is what trainsim simulates).
void refuse_unmodeled(const ObjectReader& o, std::span<const UnmodeledKey> unmodeled);

}  // namespace trainsim::scenario
