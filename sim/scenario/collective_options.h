#pragma once
// The text forms of `trainsim collective`'s options, read as nccl-tests reads
// its own (NVIDIA/nccl-tests, src/common.cu): operation names and sizes.
#include <cstdint>
#include <optional>
#include <string_view>

#include "network/collective_kind.h"

namespace trainsim::scenario {

// nccl-tests' operation names as well as trainsim's: "all_reduce" or "allreduce";
// "p2p" for send_recv.
std::optional<net::CollectiveKind> collective_kind_from_string(std::string_view name);
// "8", "64K", "128M", "8G": bytes, the suffix a power of 1024 (nccl-tests' parsesize).
std::optional<std::uint64_t> parse_byte_size(std::string_view text);

}  // namespace trainsim::scenario
