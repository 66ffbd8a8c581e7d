#pragma once
// Span categories of the timeline contract (DESIGN.md, "Timeline file") and the
// colour each is drawn in. Unknown category names map to kOther.
#include <array>
#include <cstdint>
#include <string_view>

namespace trainsim::gui {

enum class Category : std::uint8_t {
  kForward, kBackward, kRecompute, kOptimizer,
  kAllReduce, kAllGather, kReduceScatter, kAllToAll, kSend, kRecv,
  kOffload, kReload,  // copies to host memory and back (CPU activation offload)
  kIdle, kCheckpoint, kFailure, kRestart,
  // The run timeline of a full-run replay (docs/results.md, "Run timeline").
  kTrain, kMaintenance, kDegraded, kOther
};
inline constexpr int kNumCategories = 20;

struct Rgb {
  std::uint8_t r, g, b;
  friend bool operator==(const Rgb&, const Rgb&) = default;
};

std::string_view category_name(Category c);
Category category_from_name(std::string_view name);
// Colours: compute in warm (forward green, backward blue, recompute teal),
// collectives each in their own hue, waiting in greys, failures in red.
Rgb category_color(Category c);
// Colour of a block that folds several spans narrower than a few pixels.
inline constexpr Rgb kFoldedColor{150, 150, 150};

std::array<Category, kNumCategories> all_categories();

}  // namespace trainsim::gui
