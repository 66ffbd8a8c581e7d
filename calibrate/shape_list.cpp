#include "shape_list.h"

#include <cctype>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <stdexcept>
#include <utility>

namespace trainsim::calibrate {

std::vector<GemmShape> parse_shape_list(const std::string& text, const std::string& source) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw std::runtime_error(source + ": not valid JSON (" + e.what() + ")");
  }
  if (!j.is_array()) throw std::runtime_error(source + ": expected an array of {\"m\", \"n\", \"k\"} objects");
  std::vector<GemmShape> shapes;
  for (std::size_t i = 0; i < j.size(); ++i) {
    GemmShape s;
    for (const char* f : {"m", "n", "k"}) {
      const std::string where = source + ": [" + std::to_string(i) + "]." + f;
      if (!j[i].is_object() || !j[i].contains(f)) throw std::runtime_error(where + ": missing");
      const nlohmann::json& v = j[i][f];
      if (!v.is_number_integer() || v.get<long long>() <= 0 || v.get<long long>() > (1LL << 31) - 1)
        throw std::runtime_error(where + ": expected a positive integer below 2^31, got " + v.dump());
      (f[0] == 'm' ? s.m : f[0] == 'n' ? s.n : s.k) = v.get<long long>();
    }
    if (j[i].contains("layout")) {
      const std::string where = source + ": [" + std::to_string(i) + "].layout";
      const nlohmann::json& v = j[i]["layout"];
      if (!v.is_string()) throw std::runtime_error(where + ": expected a string, got " + v.dump());
      try {
        s.layout = kernels::parse_gemm_layout(v.get<std::string>());
      } catch (const std::invalid_argument& e) {
        throw std::runtime_error(where + ": " + e.what());
      }
    }
    shapes.push_back(s);
  }
  return shapes;
}

std::vector<GemmShape> read_shape_list(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return parse_shape_list(ss.str(), path);
}

std::vector<GemmShape> forward_only(const std::vector<GemmShape>& shapes) {
  std::set<GemmShape> out;
  for (GemmShape s : shapes) {
    if (s.layout == kernels::GemmLayout::kWeightGradient) std::swap(s.m, s.n);  // C^T = B^T A
    s.layout = kernels::GemmLayout::kForward;
    out.insert(s);
  }
  return {out.begin(), out.end()};
}

double parse_bytes(const std::string& text) {
  std::size_t pos = 0;
  double v = 0.0;
  try {
    v = std::stod(text, &pos);
  } catch (const std::exception&) {
    throw std::invalid_argument("size '" + text + "': expected a number with an optional K, M or G suffix");
  }
  const std::string suffix = text.substr(pos);
  double scale = 1.0;
  if (suffix == "K" || suffix == "k") scale = 1024.0;
  else if (suffix == "M" || suffix == "m") scale = 1024.0 * 1024.0;
  else if (suffix == "G" || suffix == "g") scale = 1024.0 * 1024.0 * 1024.0;
  else if (!suffix.empty())
    throw std::invalid_argument("size '" + text + "': unknown suffix '" + suffix + "' (expected K, M or G)");
  if (!(v > 0.0)) throw std::invalid_argument("size '" + text + "': must be positive");
  return v * scale;
}

}  // namespace trainsim::calibrate
