#include "model/categories.h"

namespace trainsim::gui {

namespace {

struct Entry {
  std::string_view name;
  Rgb color;
};

// Indexed by Category.
constexpr std::array<Entry, kNumCategories> kEntries{{
    {"forward", {76, 175, 80}},
    {"backward", {33, 150, 243}},
    {"recompute", {0, 150, 136}},
    {"optimizer", {156, 39, 176}},
    {"all_reduce", {255, 152, 0}},
    {"all_gather", {255, 193, 7}},
    {"reduce_scatter", {233, 30, 99}},
    {"all_to_all", {121, 85, 72}},
    {"send", {0, 188, 212}},
    {"recv", {63, 81, 181}},
    {"offload", {141, 110, 99}},
    {"reload", {188, 170, 164}},
    {"idle", {224, 224, 224}},
    {"checkpoint", {96, 125, 139}},
    {"failure", {211, 47, 47}},
    {"restart", {255, 87, 34}},
    {"train", {165, 214, 167}},
    {"maintenance", {149, 117, 205}},
    {"degraded", {255, 241, 118}},
    {"other", {97, 97, 97}},
}};

}  // namespace

std::string_view category_name(Category c) { return kEntries[static_cast<std::size_t>(c)].name; }

Rgb category_color(Category c) { return kEntries[static_cast<std::size_t>(c)].color; }

Category category_from_name(std::string_view name) {
  for (std::size_t i = 0; i < kEntries.size(); ++i)
    if (kEntries[i].name == name) return static_cast<Category>(i);
  if (name == "bubble") return Category::kIdle;
  return Category::kOther;
}

std::array<Category, kNumCategories> all_categories() {
  std::array<Category, kNumCategories> all{};
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<Category>(i);
  return all;
}

}  // namespace trainsim::gui
