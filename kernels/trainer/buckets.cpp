#include "buckets.h"

#include <stdexcept>

namespace trainsim::trainer {

std::vector<GradBucket> plan_buckets(const kernels::ref::GptLayout& layout, std::size_t bucket_elements) {
  if (bucket_elements == 0) throw std::invalid_argument("plan_buckets: bucket size must be positive");
  std::vector<GradBucket> buckets;
  std::size_t end = layout.total;  // the open bucket runs from a layer's begin to here
  for (std::size_t l = layout.layer.size(); l-- > 0;) {
    const std::size_t begin = layout.layer[l].begin;
    if (end - begin >= bucket_elements || l == 0) {
      buckets.push_back({begin, end, static_cast<int>(l)});
      end = begin;
    }
  }
  buckets.push_back({0, end, -1});
  return buckets;
}

}  // namespace trainsim::trainer
