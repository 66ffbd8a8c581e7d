#include "scenario/calibration_reader.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <limits>
#include <set>
#include <span>

#include <nlohmann/json.hpp>

#include "scenario/did_you_mean.h"
#include "scenario/errors.h"
#include "scenario/json_document.h"
#include "scenario/json_fields.h"

namespace trainsim::scenario {

namespace {

constexpr std::string_view kWhat = "calibration profile";
constexpr long long kMaxDimension = 1LL << 40;
constexpr long long kMaxRanks = 1LL << 24;

// An object of the profile. Keys this trainsim does not know are ignored, so that
// a newer harness may record more (e.g. "repeats") without breaking older readers;
// one within typing distance of a known key is an error with a did-you-mean.
ObjectReader fields(const nlohmann::json& value, const std::string& file, const std::string& path,
                    std::vector<std::string_view> known) {
  if (value.is_object()) {
    const std::vector<std::string_view> documented = known;
    for (const auto& item : value.items()) {
      const std::string& key = item.key();
      if (std::find(documented.begin(), documented.end(), key) != documented.end()) continue;
      if (const auto near = closest_match(key, std::span<const std::string_view>(documented)))
        throw ScenarioError(file, path + "/" + json_pointer_escape(key),
                            fmt::format("a known key (did you mean \"{}\"?)", *near), "unknown key \"" + key + "\"");
      known.push_back(key);
    }
  }
  return ObjectReader(value, file, path, std::move(known));
}

[[noreturn]] void missing(const ObjectReader& r, std::string_view key, const std::string& expected) {
  throw ScenarioError(r.file(), r.path_of(key), expected, "nothing (the key is required)");
}

// A measured time or size: a finite number > 0 (or >= 0 with allow_zero). Zero or
// negative seconds mean the measurement went wrong, and the simulator divides by them.
double measured(const ObjectReader& r, std::string_view key, bool allow_zero, std::optional<double> fallback = {}) {
  const std::string expected = allow_zero ? "a number >= 0" : "a positive number";
  if (!r.has(key) || (r.raw(key).is_null() && fallback)) {
    if (!fallback) missing(r, key, expected);
    return *fallback;
  }
  const nlohmann::json& v = r.raw(key);
  if (!v.is_number()) r.fail(key, expected, v);
  const double d = v.get<double>();
  if (!std::isfinite(d) || d < 0.0 || (d == 0.0 && !allow_zero)) r.fail(key, expected, v);
  return d;
}

// {"driver": "580.159.04", "cublas": 130000, ...}: any library names; a number
// (cuBLAS reports an integer) is kept as its text, null means not recorded.
std::vector<std::pair<std::string, std::string>> versions(const ObjectReader& root) {
  std::vector<std::pair<std::string, std::string>> out;
  if (!root.has_non_null("versions")) return out;
  const nlohmann::json& v = root.raw("versions");
  if (!v.is_object()) root.fail("versions", "an object of library versions, e.g. {\"nccl\": \"2.27.7\"}", v);
  for (const auto& [library, value] : v.items()) {
    if (value.is_string()) out.emplace_back(library, value.get<std::string>());
    else if (value.is_number_integer()) out.emplace_back(library, value.dump());
    else if (!value.is_null())
      throw ScenarioError(root.file(), root.path_of("versions") + "/" + json_pointer_escape(library),
                          "a version string such as \"13.0\"", describe_found(value));
  }
  return out;
}

// Calls row(element, path) for each element of the optional array `key`.
template <class Row>
void each_row(const ObjectReader& root, std::string_view key, Row&& row) {
  if (!root.has_non_null(key)) return;
  const nlohmann::json& v = root.raw(key);
  if (!v.is_array()) root.fail(key, "an array of objects (one per measurement)", v);
  for (std::size_t i = 0; i < v.size(); ++i) row(v[i], root.path_of(key) + "/" + std::to_string(i));
}

hw::CollectiveScope scope(const ObjectReader& r) {
  return r.choice("scope", {"intra_node", "inter_node"}) == "intra_node" ? hw::CollectiveScope::kIntraNode
                                                                         : hw::CollectiveScope::kInterNode;
}

// "nodes": the distinct nodes the ranks ran on, ranks / nodes on each. Optional:
// an intra_node row without it ran on one node; an inter_node row without it
// (older harnesses, nccl-tests output without host names) gives 0, not recorded.
long long collective_nodes(const ObjectReader& r, hw::CollectiveScope scope, long long ranks) {
  const bool intra = scope == hw::CollectiveScope::kIntraNode;
  if (!r.has_non_null("nodes")) return intra ? 1 : 0;
  const long long nodes = r.integer("nodes", 1, kMaxRanks);
  if (nodes > ranks)
    r.fail("nodes", fmt::format("at most \"ranks\" ({}) nodes: every node runs at least one rank", ranks),
           r.raw("nodes"));
  if (ranks % nodes != 0)
    r.fail("nodes",
           fmt::format("a divisor of \"ranks\" ({}): the same number of ranks on every node", ranks),
           r.raw("nodes"));
  if (intra && nodes != 1) r.fail("nodes", "1 (an intra_node row ran on one node)", r.raw("nodes"));
  if (!intra && nodes < 2) r.fail("nodes", "at least 2 (an inter_node row ran on several nodes)", r.raw("nodes"));
  return nodes;
}

std::string collective_op(const ObjectReader& r) {
  return r.choice("op", {"all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast", "reduce", "send_recv"});
}

hw::GemmRow gemm_row(const ObjectReader& r) {
  hw::GemmRow g;
  g.dtype = *hw::precision_from_string(r.choice("dtype", {"fp32", "tf32", "fp16", "bf16", "fp8"}));
  g.m = static_cast<double>(r.integer("m", 1, kMaxDimension));
  g.n = static_cast<double>(r.integer("n", 1, kMaxDimension));
  g.k = static_cast<double>(r.integer("k", 1, kMaxDimension));
  g.seconds = measured(r, "seconds", false);
  measured(r, "tflops", true, 0.0);  // derived (2 m n k / seconds); checked, not kept
  return g;
}

hw::KernelRow kernel_row(const ObjectReader& r) {
  hw::KernelRow k;
  k.name = r.text("name");
  k.id = hw::kernel_id_from_string(k.name).value_or(hw::KernelId::kNone);
  if (r.has_non_null("shape")) {
    const nlohmann::json& shape = r.raw("shape");
    if (!shape.is_object()) r.fail("shape", "an object of sizes, e.g. {\"rows\": 8192, \"cols\": 768}", shape);
    for (const auto& [key, value] : shape.items()) {
      if (!value.is_number() || !(value.get<double>() >= 0.0) || !std::isfinite(value.get<double>()))
        throw ScenarioError(r.file(), r.path_of("shape") + "/" + json_pointer_escape(key), "a number >= 0",
                            describe_found(value));
      k.shape.emplace_back(key, value.get<double>());
    }
  }
  k.bytes = measured(r, "bytes", true);
  k.flops = measured(r, "flops", true, 0.0);
  k.seconds = measured(r, "seconds", false);
  if (hw::is_attention(k.id)) {
    // Attention is priced by FLOP/s per head dimension (docs/model.md, "Calibrated costs").
    const std::optional<double> d = k.shape_value("head_dim");
    if (!d || !(*d >= 1.0) || std::trunc(*d) != *d)
      throw ScenarioError(r.file(), r.path_of("shape") + "/head_dim",
                          "the head dimension (a positive integer) of an attention kernel",
                          d ? describe_found(*d) : "nothing (the key is required)");
    const std::string expected = "a positive number (attention kernels are priced by FLOP/s)";
    if (!r.has("flops")) missing(r, "flops", expected);
    if (!(k.flops > 0.0)) r.fail("flops", expected, r.raw("flops"));
  }
  return k;
}

// "device": the GPU the profile was measured on.
void read_device(const ObjectReader& root, const std::string& file, hw::CalibrationProfile& p) {
  if (!root.has("device")) missing(root, "device", "an object");
  const ObjectReader device = fields(root.raw("device"), file, root.path_of("device"),
                                     {"name", "compute_capability", "multiprocessors", "memory_bytes", "l2_bytes", "count",
                                      "context_bytes"});
  p.device.name = device.text("name");
  if (p.device.name.empty()) device.fail("name", "the GPU's name, e.g. \"NVIDIA H200\"", device.raw("name"));
  p.device.compute_capability = device.text("compute_capability", "");
  p.device.multiprocessors = device.integer("multiprocessors", 0, 1LL << 20, 0);
  p.device.memory_bytes = measured(device, "memory_bytes", true, 0.0);
  p.device.l2_bytes = measured(device, "l2_bytes", true, 0.0);
  p.device.count = device.integer("count", 1, kMaxRanks, 1);
  p.device.context_bytes = measured(device, "context_bytes", true, 0.0);
}

// "gemm", "kernels", "copies", "launch_overhead_s" and "host_dispatch": what
// prices compute (docs/calibration.md).
void read_kernel_measurements(const ObjectReader& root, const std::string& file, ProfileReading& out) {
  hw::CalibrationProfile& p = out.profile;
  each_row(root, "gemm", [&](const nlohmann::json& row, const std::string& path) {
    const ObjectReader r =
        fields(row, file, path, {"dtype", "m", "n", "k", "seconds", "tflops", "accumulation", "layout"});
    const hw::GemmRow g = gemm_row(r);
    // docs/calibration.md: "accumulation": "fast" marks fp8 rows with fast accumulation,
    // "layout" the backward layouts of a linear layer's GEMMs.
    const bool fast = r.choice("accumulation", {"default", "fast"}, "default") == "fast";
    if (fast && g.dtype != hw::Precision::kFp8)
      r.fail("accumulation", "\"default\" (only fp8 rows have fast accumulation)", r.raw("accumulation"));
    const std::string layout = r.choice("layout", {"forward", "data_gradient", "weight_gradient"}, "forward");
    if (layout != "forward" && (g.dtype == hw::Precision::kFp8))
      r.fail("layout", "\"forward\" (fp8 GEMMs run in the forward layout only)", r.raw("layout"));
    if (fast) p.gemm_fp8_fast.push_back(g);
    else if (layout == "data_gradient") p.gemm_data_gradient.push_back(g);
    else if (layout == "weight_gradient") p.gemm_weight_gradient.push_back(g);
    else p.gemm.push_back(g);
  });
  std::set<std::string> unknown_kernels;
  each_row(root, "kernels", [&](const nlohmann::json& row, const std::string& path) {
    const ObjectReader r = fields(row, file, path, {"name", "shape", "bytes", "flops", "seconds"});
    p.kernels.push_back(kernel_row(r));
    const std::string& name = p.kernels.back().name;
    if (p.kernels.back().id == hw::KernelId::kNone && unknown_kernels.insert(name).second)
      out.warnings.push_back(fmt::format("{}: {}/name: \"{}\" is not a kernel this trainsim knows; its rows are ignored",
                                         file, path, name));
  });
  each_row(root, "copies", [&](const nlohmann::json& row, const std::string& path) {
    const ObjectReader r = fields(row, file, path, {"kind", "bytes", "seconds", "gbps"});
    hw::CopyRow c;
    const std::string kind = r.choice("kind", {"device_to_device", "host_to_device", "device_to_host"});
    c.kind = kind == "device_to_device" ? hw::CopyKind::kDeviceToDevice
             : kind == "host_to_device" ? hw::CopyKind::kHostToDevice
                                        : hw::CopyKind::kDeviceToHost;
    c.bytes = measured(r, "bytes", false);
    c.seconds = measured(r, "seconds", false);
    c.gbps = measured(r, "gbps", true, 0.0);
    p.copies.push_back(c);
  });
  if (root.has_non_null("launch_overhead_s")) p.launch_overhead_s = measured(root, "launch_overhead_s", false);
  if (root.has_non_null("host_dispatch")) {
    // docs/calibration.md, "host_dispatch": per-kernel host times of a framework's step.
    const ObjectReader h = fields(root.raw("host_dispatch"), file, root.path_of("host_dispatch"),
                                  {"framework", "forward_s", "backward_s", "optimizer_s", "graph_kernel_s", "kernels", "model",
                                   "graph_kernel_model"});
    hw::HostDispatch d;
    d.framework = h.text("framework", "");
    d.forward_s = measured(h, "forward_s", false);
    d.backward_s = measured(h, "backward_s", false);
    d.optimizer_s = measured(h, "optimizer_s", true, 0.0);
    d.graph_kernel_s = measured(h, "graph_kernel_s", true, 0.0);
    p.host_dispatch = d;
  }
}

// "collectives" and "collective_fits": what prices communication.
void read_collective_measurements(const ObjectReader& root, const std::string& file, hw::CalibrationProfile& p) {
  each_row(root, "collectives", [&](const nlohmann::json& row, const std::string& path) {
    const ObjectReader r =
        fields(row, file, path,
               {"op", "scope", "ranks", "nodes", "bytes", "seconds", "algbw_gbps", "busbw_gbps", "wrong"});
    hw::CollectiveRow c;
    c.op = collective_op(r);
    c.scope = scope(r);
    c.ranks = r.integer("ranks", 1, kMaxRanks);
    c.nodes = collective_nodes(r, c.scope, c.ranks);
    c.bytes = measured(r, "bytes", true);
    c.seconds = measured(r, "seconds", false);
    c.algbw_gbps = measured(r, "algbw_gbps", true, 0.0);
    c.busbw_gbps = measured(r, "busbw_gbps", true, 0.0);
    c.wrong = r.integer("wrong", 0, std::numeric_limits<long long>::max(), 0);
    p.collectives.push_back(c);
  });
  each_row(root, "collective_fits", [&](const nlohmann::json& row, const std::string& path) {
    const ObjectReader r = fields(row, file, path, {"op", "scope", "ranks", "nodes", "alpha_s", "busbw_gbps"});
    hw::CollectiveFit f;
    f.op = collective_op(r);
    f.scope = scope(r);
    f.ranks = r.integer("ranks", 1, kMaxRanks);
    f.nodes = collective_nodes(r, f.scope, f.ranks);
    f.alpha_s = measured(r, "alpha_s", true);
    f.busbw_gbps = measured(r, "busbw_gbps", false);
    p.collective_fits.push_back(f);
  });
}

// What the user should know about a profile that reads: collective rows that
// price nothing, an interrupted calibration.
void add_profile_warnings(const std::string& file, ProfileReading& out) {
  const hw::CalibrationProfile& p = out.profile;
  const auto unplaced = std::count_if(p.collectives.begin(), p.collectives.end(), [](const hw::CollectiveRow& c) {
    return c.scope == hw::CollectiveScope::kInterNode && c.nodes == 0;
  });
  if (unplaced > 0)
    out.warnings.push_back(fmt::format("{}: {} inter_node \"collectives\" rows have no \"nodes\" (how many nodes "
                                       "the ranks ran on); they price no collective, the network model does",
                                       file, unplaced));
  if (!p.complete)
    out.warnings.insert(out.warnings.begin(),
                        fmt::format("{}: the profile is incomplete (\"complete\": false): trainsim-calibrate was "
                                    "still running or was interrupted; what it did not measure falls back to the "
                                    "roofline",
                                    file));
}

}  // namespace

ProfileReading parse_calibration_text(std::string_view text, const std::string& file) {
  const nlohmann::json doc = parse_document(text, file, kWhat);
  if (!doc.is_object() || !doc.contains("trainsim_calibration"))
    throw ScenarioError(file, "", "a calibration profile (a JSON object with \"trainsim_calibration\": 1)",
                        doc.is_object() ? "an object without \"trainsim_calibration\"" : describe_found(doc));
  const ObjectReader root = fields(doc, file, "",
                                   {"trainsim_calibration", "complete", "date", "command", "host", "device", "versions", "gemm",
                           "kernels", "copies", "launch_overhead_s", "host_dispatch", "collectives", "collective_fits",
                           "errors"});
  ProfileReading out;
  hw::CalibrationProfile& p = out.profile;
  const nlohmann::json& format = root.raw("trainsim_calibration");
  if (!format.is_number_integer() || format.get<long long>() != 1)
    root.fail("trainsim_calibration", "1 (the profile format this trainsim reads)", format);
  p.format = 1;
  p.complete = root.boolean("complete", true);
  // "errors": measurements the harness could not make (docs/calibration.md); they price nothing.
  if (doc.contains("errors") && !doc["errors"].is_array())
    root.fail("errors", "a list of the measurements that failed ({\"key\", \"section\", \"error\"})", doc["errors"]);
  p.date = root.text("date");
  p.command = root.text("command", "");
  p.host = root.text("host", "");

  read_device(root, file, p);
  p.versions = versions(root);
  read_kernel_measurements(root, file, out);
  read_collective_measurements(root, file, p);
  add_profile_warnings(file, out);
  return out;
}

ProfileReading read_calibration_file(const std::filesystem::path& path) {
  return parse_calibration_text(read_document_file(path, kWhat), path.string());
}

void check_profile_device(const hw::CalibrationProfile& profile, const std::string& profile_file,
                          const hw::GpuSpec& gpu, const std::string& file, const std::string& json_path) {
  // Only a profile that prices kernels must come from this kind of GPU: one holding
  // just collectives (imported from nccl-tests run elsewhere) prices nothing here.
  if (profile.gemm.empty() && profile.kernels.empty()) return;
  if (hw::profile_matches_gpu(profile.device.name, gpu.name)) return;
  const std::string which = file == profile_file ? "the profile" : "calibration profile " + profile_file;
  throw ScenarioError(file, json_path,
                      fmt::format("{} was measured on \"{}\", but the cluster's GPU is \"{}\"; use a profile "
                                  "measured on that GPU",
                                  which, profile.device.name, gpu.name));
}

}  // namespace trainsim::scenario
