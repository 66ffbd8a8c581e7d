// Parses "cluster" and its GPU (preset or inline) into hw::ClusterSpec.
#include <algorithm>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "hardware/kernel_id.h"
#include "hardware/precision.h"
#include "network/topology_builders.h"
#include "scenario/cable_ends.h"
#include "scenario/did_you_mean.h"
#include "scenario/errors.h"
#include "scenario/parse_sections.h"

namespace trainsim::scenario {

namespace {

constexpr double kMaxBandwidth = 1e15;  // 1 PB/s: beyond any link that exists
constexpr double kMaxLatency = 1.0;     // s
constexpr double kMaxFlops = 1e18;
constexpr long long kMaxNodes = 1'000'000;
constexpr long long kMaxGpusPerNode = 1024;
constexpr long long kMaxGpusPerDomain = 4096;  // GPUs one scale-up fabric joins
constexpr long long kMaxGpus = 1'000'000;

std::vector<std::string_view> views(const std::vector<std::string>& names) {
  return {names.begin(), names.end()};
}

// ASCII-only case folding, as in did_you_mean.cpp (preset names are ASCII).
char fold(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

bool iequal_prefix(std::string_view prefix, std::string_view name) {
  if (prefix.size() > name.size()) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i)
    if (fold(prefix[i]) != fold(name[i])) return false;
  return true;
}

// The preset a mistyped name most likely means. A short or differently cased
// name ("a100", "h100") is the start of exactly one preset; an edit distance
// alone would rank "a100" nearer to "B200" than to "A100-SXM4-80GB".
std::optional<std::string> suggest_preset(std::string_view typed, const std::vector<std::string>& names) {
  std::optional<std::string> extension;
  int extensions = 0;
  for (const std::string& name : names) {
    if (iequal_prefix(typed, name)) {
      extension = name;
      ++extensions;
    }
  }
  if (extensions == 1 && typed.size() >= 2) return extension;
  const std::vector<std::string_view> options = views(names);
  return closest_match(typed, std::span<const std::string_view>(options));
}

// A matmul_efficiency point as written, so the message shows the bad number.
std::string describe_point(const nlohmann::json& pt) {
  constexpr std::size_t kMaxLength = 60;
  if (!pt.is_array()) return describe_found(pt);
  std::string text = pt.dump();
  if (text.size() > kMaxLength) text = text.substr(0, kMaxLength) + "...";
  return text;
}

// An array of [flops, efficiency] points under `key` (at least one).
std::vector<hw::EfficiencyPoint> efficiency_points(const ObjectReader& o, std::string_view key,
                                                   const std::string& file) {
  const std::string expected = "a non-empty array of [flops, efficiency] pairs with flops > 0 and 0 < efficiency <= 1";
  if (!o.has(key)) o.missing(key, expected);
  const nlohmann::json& pts = o.raw(key);
  if (!pts.is_array() || pts.empty()) o.fail(key, expected, pts);
  std::vector<hw::EfficiencyPoint> points;
  for (std::size_t i = 0; i < pts.size(); ++i) {
    const nlohmann::json& pt = pts[i];
    const bool ok = pt.is_array() && pt.size() == 2 && pt[0].is_number() && pt[1].is_number() &&
                    pt[0].get<double>() > 0.0 && pt[1].get<double>() > 0.0 && pt[1].get<double>() <= 1.0 &&
                    pt[0].get<double>() < 1e30;
    if (!ok) throw ScenarioError(file, o.path_of(key) + "/" + std::to_string(i), expected, describe_point(pt));
    points.push_back({pt[0].get<double>(), pt[1].get<double>()});
  }
  return points;
}

// attention_efficiency: [{head_dim, value_head_dim, kernel, forward, backward}, ...],
// one entry per head dimensions and kernel ("value_head_dim": the value's width when
// it differs, as multi-head latent attention's; "kernel": "flash2" for
// FlashAttention-2's; none: the GPU's own).
std::vector<hw::AttentionEfficiency> attention_efficiency(const ObjectReader& g, const std::string& file) {
  const nlohmann::json& list = g.raw("attention_efficiency");
  if (!list.is_array() || list.empty())
    g.fail("attention_efficiency", "a non-empty array of {head_dim, kernel, forward, backward} objects", list);
  std::vector<hw::AttentionEfficiency> curves;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const ObjectReader a(list[i], file, g.path_of("attention_efficiency") + "/" + std::to_string(i),
                         {"head_dim", "value_head_dim", "kernel", "forward", "backward"});
    hw::AttentionEfficiency e;
    e.head_dim = static_cast<int>(a.integer("head_dim", 1, 4096));
    if (a.has("value_head_dim")) e.value_head_dim = static_cast<int>(a.integer("value_head_dim", 1, 4096));
    if (e.value_head_dim == e.head_dim) e.value_head_dim = 0;
    if (a.has("kernel")) {
      a.choice("kernel", {"flash2"}, "flash2");
      e.kernel = hw::AttentionKernel::kFlash2;
    }
    for (const hw::AttentionEfficiency& seen : curves)
      if (seen.head_dim == e.head_dim && seen.value_head_dim == e.value_head_dim && seen.kernel == e.kernel)
        throw ScenarioError(file, a.path_of("head_dim"), "one entry per head dimensions and kernel",
                            std::to_string(e.head_dim) + " again");
    e.forward = efficiency_points(a, "forward", file);
    e.backward = efficiency_points(a, "backward", file);
    curves.push_back(std::move(e));
  }
  return curves;
}

// memory_kernel_efficiency: {"moe_permute": 0.281, ...}, a measured memory-bound
// kernel's share of the datasheet bandwidth, by the kernel's name (attention's
// kernels have attention_efficiency instead).
std::map<hw::KernelId, double> memory_kernel_efficiency(const ObjectReader& g) {
  std::vector<std::string_view> names;
  for (std::size_t i = 1; i < hw::kNumKernelIds; ++i) {
    const auto id = static_cast<hw::KernelId>(i);
    if (!hw::is_attention(id)) names.push_back(hw::to_string(id));
  }
  const ObjectReader o = g.object("memory_kernel_efficiency", names);
  std::map<hw::KernelId, double> out;
  for (std::string_view name : names)
    if (o.has(name)) out[*hw::kernel_id_from_string(name)] = o.number(name, 0.01, 1.0);
  return out;
}

hw::GpuSpec parse_gpu_spec(const nlohmann::json& value, const std::string& file, const std::string& path) {
  const ObjectReader g(value, file, path,
                       {"name", "peak_flops", "memory_capacity", "memory_bandwidth", "memory_bandwidth_efficiency",
                        "memory_kernel_efficiency", "tdp", "idle_power", "node_overhead_power", "matmul_efficiency", "matmul_efficiency_fp8",
                        "matmul_efficiency_fp8_fast", "attention_efficiency", "grouped_matmul_efficiency",
                        "kernel_time_cv", "overlap_compute_slowdown", "overlap_memory_slowdown", "training_clock_ratio", "efficiency_basis", "fp4_formats", "platform", "sources", "preset"});
  hw::GpuSpec spec;
  spec.name = g.text("name", "custom GPU");
  const ObjectReader peaks = g.object("peak_flops", {"fp32", "tf32", "fp16", "bf16", "fp8", "fp4"});
  for (std::string_view p : {"fp32", "tf32", "fp16", "bf16", "fp8", "fp4"}) {
    if (!peaks.has(p)) continue;
    spec.peak_flops[*hw::precision_from_string(p)] = peaks.quantity(p, Dimension::kFlopRate, 1e9, kMaxFlops);
  }
  if (spec.peak_flops.empty())
    throw ScenarioError(file, g.path_of("peak_flops"), "at least one of fp32, tf32, fp16, bf16, fp8, fp4", "none");
  spec.memory_capacity_bytes = g.quantity("memory_capacity", Dimension::kBytes, 1e6, 1e15);
  spec.memory_bandwidth = g.quantity("memory_bandwidth", Dimension::kBandwidth, 1e6, kMaxBandwidth);
  spec.memory_bandwidth_efficiency = g.number("memory_bandwidth_efficiency", 0.01, 1.0, 1.0);
  if (g.has("memory_kernel_efficiency")) spec.memory_kernel_efficiency = memory_kernel_efficiency(g);
  spec.tdp_watts = g.quantity("tdp", Dimension::kPower, 1.0, 1e5, 0.0);
  spec.idle_watts = g.quantity("idle_power", Dimension::kPower, 0.0, 1e5, 0.0);
  spec.node_overhead_watts = g.quantity("node_overhead_power", Dimension::kPower, 0.0, 1e7, 0.0);
  if (g.has("matmul_efficiency")) {
    spec.matmul_efficiency = efficiency_points(g, "matmul_efficiency", file);
  } else {
    // Without measurements the model assumes the datasheet peak is reached.
    spec.matmul_efficiency.push_back({1.0, 1.0});
  }
  if (g.has("matmul_efficiency_fp8")) spec.matmul_efficiency_fp8 = efficiency_points(g, "matmul_efficiency_fp8", file);
  if (g.has("matmul_efficiency_fp8_fast"))
    spec.matmul_efficiency_fp8_fast = efficiency_points(g, "matmul_efficiency_fp8_fast", file);
  if (g.has("attention_efficiency")) spec.attention_efficiency = attention_efficiency(g, file);
  if (g.has("grouped_matmul_efficiency")) {
    const ObjectReader grouped =
        g.object("grouped_matmul_efficiency", {"forward", "data_gradient", "weight_gradient"});
    hw::GroupedMatmulEfficiency e;
    e.forward = efficiency_points(grouped, "forward", file);
    e.data_gradient = efficiency_points(grouped, "data_gradient", file);
    e.weight_gradient = efficiency_points(grouped, "weight_gradient", file);
    spec.grouped_matmul_efficiency = std::move(e);
  }
  spec.kernel_time_cv = g.number("kernel_time_cv", 0.0, 1.0, 0.0);
  spec.overlap_compute_slowdown = g.number("overlap_compute_slowdown", 0.0, 4.0, 0.0);
  spec.overlap_memory_slowdown = g.number("overlap_memory_slowdown", 0.0, 4.0, 0.0);
  spec.training_clock_ratio = g.number("training_clock_ratio", 0.1, 1.0, 1.0);
  spec.efficiency_basis = g.text("efficiency_basis", "");
  if (g.has("fp4_formats")) {
    const nlohmann::json& formats = g.raw("fp4_formats");
    const std::string expected = "a non-empty array of fp4 formats, \"nvfp4\" and/or \"mxfp4\"";
    if (!formats.is_array() || formats.empty()) g.fail("fp4_formats", expected, formats);
    for (const nlohmann::json& f : formats) {
      if (!f.is_string() || (f != "nvfp4" && f != "mxfp4")) g.fail("fp4_formats", expected, formats);
      spec.fp4_formats.push_back(f.get<std::string>());
    }
  } else if (spec.supports(hw::Precision::kFp4)) {
    spec.fp4_formats = {"nvfp4"};
  }
  return spec;
}

void parse_intra_node(const ObjectReader& o, hw::IntraNodeFabric& f) {
  f.fabric = o.choice("fabric", {"nvswitch", "pcie", "mesh"}, f.fabric);
  f.bandwidth = o.quantity("bandwidth", Dimension::kBandwidth, 1e6, kMaxBandwidth, f.bandwidth);
  f.latency = o.quantity("latency", Dimension::kTime, 0.0, kMaxLatency, f.latency);
  f.bandwidth_efficiency = o.number("bandwidth_efficiency", 0.01, 1.0, f.bandwidth_efficiency);
  f.nvls_efficiency = o.number("nvls_efficiency", 0.0, 1.0, f.nvls_efficiency);
  f.nvls_latency = o.quantity("nvls_latency", Dimension::kTime, 0.0, kMaxLatency, f.nvls_latency);
  f.nvls_loop_overhead = o.quantity("nvls_loop_overhead", Dimension::kTime, 0.0, kMaxLatency, f.nvls_loop_overhead);
  f.ring_buffer = o.quantity("ring_buffer", Dimension::kBytes, 0.0, 1e12, f.ring_buffer);
  f.gather_scatter_startup =
      o.quantity("gather_scatter_startup", Dimension::kTime, 0.0, kMaxLatency, f.gather_scatter_startup);
  f.all_to_all_efficiency = o.number("all_to_all_efficiency", 0.0, 1.0, f.all_to_all_efficiency);
  f.all_to_all_startup = o.quantity("all_to_all_startup", Dimension::kTime, 0.0, kMaxLatency, f.all_to_all_startup);
}

void parse_inter_node(const ObjectReader& o, hw::InterNodeNetwork& n) {
  n.topology = o.choice("topology", {"fat_tree", "rail_optimized", "torus2d", "torus3d", "dragonfly", "custom"},
                        n.topology);
  n.nics_per_node = static_cast<int>(o.integer("nics_per_node", 1, 64, n.nics_per_node));
  n.nic_bandwidth = o.quantity("nic_bandwidth", Dimension::kBandwidth, 1e6, kMaxBandwidth, n.nic_bandwidth);
  n.latency = o.quantity("latency", Dimension::kTime, 0.0, kMaxLatency, n.latency);
  n.bandwidth_efficiency = o.number("bandwidth_efficiency", 0.01, 1.0, n.bandwidth_efficiency);
  n.oversubscription = o.number("oversubscription", 1.0, 64.0, n.oversubscription);
  n.switch_radix = static_cast<int>(o.integer("switch_radix", 4, 1024, n.switch_radix));
  n.rails = static_cast<int>(o.integer("rails", 0, 64, n.rails));
  n.tiers = static_cast<int>(o.integer("tiers", 0, 3, n.tiers));
  n.switch_latency = o.quantity("switch_latency", Dimension::kTime, 0.0, kMaxLatency, n.switch_latency);
  n.multipath = static_cast<int>(o.integer("multipath", 1, 64, n.multipath));
  n.routing = o.choice("routing", {"ecmp", "d_mod_k"}, n.routing);
  if (o.has("torus_dims")) {
    const nlohmann::json& dims = o.raw("torus_dims");
    const std::string expected = "an array of 2 or 3 positive integers";
    if (!dims.is_array() || dims.size() < 2 || dims.size() > 3) o.fail("torus_dims", expected, dims);
    n.torus_dims.clear();
    for (const nlohmann::json& d : dims) {
      if (!d.is_number_integer() || d.get<long long>() < 1 || d.get<long long>() > kMaxNodes)
        o.fail("torus_dims", expected, dims);
      n.torus_dims.push_back(d.get<int>());
    }
  }
  if (o.has("links")) {
    const nlohmann::json& links = o.raw("links");
    if (!links.is_array() || links.empty()) o.fail("links", "a non-empty array of cables {a, b, bandwidth, latency}", links);
    n.custom_links.clear();
    for (std::size_t i = 0; i < links.size(); ++i) {
      const ObjectReader l(links[i], o.file(), o.path_of("links") + "/" + std::to_string(i),
                           {"a", "b", "bandwidth", "latency"});
      hw::CustomLink cable;
      cable.a.name = l.text("a");
      cable.b.name = l.text("b");
      cable.bandwidth = l.quantity("bandwidth", Dimension::kBandwidth, 1e6, kMaxBandwidth, n.nic_bandwidth);
      cable.latency = l.quantity("latency", Dimension::kTime, 0.0, kMaxLatency, 0.0);
      if (!(cable.bandwidth > 0.0))
        throw ScenarioError(o.file(), l.path_of("bandwidth"), "a bandwidth (or inter_node nic_bandwidth as default)", "none");
      n.custom_links.push_back(std::move(cable));
    }
  }
}

const std::vector<std::string_view> kIntraKeys{"fabric", "bandwidth", "latency", "bandwidth_efficiency",
                                               "nvls_efficiency", "nvls_latency", "nvls_loop_overhead",
                                               "ring_buffer", "gather_scatter_startup",
                                               "all_to_all_efficiency", "all_to_all_startup"};
const std::vector<std::string_view> kInterKeys{"topology",         "nics_per_node", "nic_bandwidth", "latency",
                                               "bandwidth_efficiency", "oversubscription", "switch_radix",
                                               "rails",            "tiers",         "switch_latency", "torus_dims",
                                               "multipath",        "routing",         "links"};

}  // namespace

nlohmann::json resolve_preset(const ObjectReader& parent, std::string_view key, PresetKind kind) {
  const std::string what = kind == PresetKind::kHardware ? "GPU" : "model";
  if (!parent.has_non_null(key))
    throw ScenarioError(parent.file(), parent.path_of(key), fmt::format("a {} preset name or an object", what),
                        parent.has(key) ? "null" : "nothing (the key is required)");
  const nlohmann::json& value = parent.raw(key);
  auto lookup = [&](const std::string& name, const std::string& path) {
    if (auto preset = find_preset(kind, name)) return *preset;
    const std::vector<std::string> names = preset_names(kind);
    std::string expected = fmt::format("one of the {} presets {}", what, fmt::join(names, ", "));
    if (auto near = suggest_preset(name, names)) expected += fmt::format(" (did you mean \"{}\"?)", *near);
    throw ScenarioError(parent.file(), path, expected, "\"" + name + "\"");
  };
  if (value.is_string()) return lookup(value.get<std::string>(), parent.path_of(key));
  if (!value.is_object())
    parent.fail(key, fmt::format("a {} preset name or an object", what), value);
  if (!value.contains("preset")) return value;
  const nlohmann::json& name = value.at("preset");
  const std::string preset_path = parent.path_of(key) + "/preset";
  if (!name.is_string())
    throw ScenarioError(parent.file(), preset_path, fmt::format("a {} preset name", what), describe_found(name));
  nlohmann::json merged = lookup(name.get<std::string>(), preset_path);
  nlohmann::json overrides = value;
  overrides.erase("preset");
  merged.merge_patch(overrides);
  merged.erase("preset");
  return merged;
}

const std::vector<std::string_view> kHostKeys{"host_to_device", "device_to_host", "gpus_per_link", "memory_per_gpu",
                                              "cpu_adam_rate"};

// A platform's or cluster's "host": the GPU's link to host memory and that memory.
void parse_host(const ObjectReader& o, hw::HostSpec& h) {
  h.host_to_device = o.quantity("host_to_device", Dimension::kBandwidth, 1e6, kMaxBandwidth, h.host_to_device);
  h.device_to_host = o.quantity("device_to_host", Dimension::kBandwidth, 1e6, kMaxBandwidth, h.device_to_host);
  h.gpus_per_link = static_cast<int>(o.integer("gpus_per_link", 1, kMaxGpusPerNode, h.gpus_per_link));
  h.memory_per_gpu = o.quantity("memory_per_gpu", Dimension::kBytes, 1e6, 1e15, h.memory_per_gpu);
  h.cpu_adam_rate = o.number("cpu_adam_rate", 1e3, 1e15, h.cpu_adam_rate);
}

namespace {

// Nodes per scale-up domain (docs/model.md, "Scale-up domains"): the domain's GPUs
// over a node's, and all of the job's nodes when it has fewer than one domain (8
// GPUs of an NVL72 rack share its NVLink switches); a job larger than one domain
// takes whole domains.
int nodes_per_domain(const ObjectReader& c, const hw::ClusterSpec& cluster, std::optional<long long> domain_gpus) {
  if (!domain_gpus) return 1;
  const std::string key = c.has("scale_up_domain") ? "scale_up_domain" : "gpu";
  if (*domain_gpus % cluster.gpus_per_node != 0)
    c.fail_message(key, fmt::format("a scale-up domain of {} GPUs is not a whole number of {}-GPU nodes "
                                    "(gpus_per_node)",
                                    *domain_gpus, cluster.gpus_per_node));
  const auto per_domain = static_cast<int>(*domain_gpus / cluster.gpus_per_node);
  if (cluster.num_nodes <= per_domain) return cluster.num_nodes;
  if (cluster.num_nodes % per_domain != 0)
    c.fail_message("num_nodes", fmt::format("{} nodes span scale-up domains of {} nodes ({} GPUs), so they take "
                                            "whole ones: a multiple of {} nodes",
                                            cluster.num_nodes, per_domain, *domain_gpus, per_domain));
  return per_domain;
}

}  // namespace

namespace {

// What a GPU preset's "platform" brings: the usual server around the GPU.
struct Platform {
  int gpus_per_node = 8;
  std::optional<long long> domain_gpus;  // the scale-up domain, GPUs (none: one node)
  hw::IntraNodeFabric intra_node;
  hw::InterNodeNetwork inter_node;
  hw::HostSpec host;
};

Platform platform_of(const nlohmann::json& gpu_json, const ObjectReader& parent, std::string_view gpu_key) {
  Platform p;
  if (!gpu_json.contains("platform")) return p;
  const ObjectReader platform(gpu_json.at("platform"), parent.file(), parent.path_of(gpu_key) + "/platform",
                              {"gpus_per_node", "scale_up_domain", "intra_node", "inter_node", "host"});
  p.gpus_per_node = static_cast<int>(platform.integer("gpus_per_node", 1, kMaxGpusPerNode, 8));
  if (platform.has("scale_up_domain")) p.domain_gpus = platform.integer("scale_up_domain", 1, kMaxGpusPerDomain);
  if (platform.has("intra_node")) parse_intra_node(platform.object("intra_node", kIntraKeys), p.intra_node);
  if (platform.has("inter_node")) parse_inter_node(platform.object("inter_node", kInterKeys), p.inter_node);
  if (platform.has("host")) parse_host(platform.object("host", kHostKeys), p.host);
  return p;
}

constexpr std::size_t kMaxPools = 16;

// The host figures every pool meets (per GPU: the least copy rates and host memory,
// the least CPU Adam rate; 0 where a pool has none): the checks of CPU offload and of
// host memory hold every pool to them; the executor prices each pool's own.
hw::HostSpec weakest_host(const std::vector<hw::GpuPool>& pools) {
  hw::HostSpec h = pools.front().host;
  h.host_to_device = h.host_to_device_per_gpu();
  h.device_to_host = h.device_to_host_per_gpu();
  h.gpus_per_link = 1;
  for (const hw::GpuPool& p : pools) {
    h.host_to_device = std::min(h.host_to_device, p.host.host_to_device_per_gpu());
    h.device_to_host = std::min(h.device_to_host, p.host.device_to_host_per_gpu());
    h.memory_per_gpu = std::min(h.memory_per_gpu, p.host.memory_per_gpu);
    h.cpu_adam_rate = std::min(h.cpu_adam_rate, p.host.cpu_adam_rate);
  }
  return h;
}

// "ownership": an owned cluster's costs; a mixed cluster's pools may give the
// capex per GPU (`pool_capex`, their GPUs' mean), which the object then must not.
hw::Ownership parse_ownership(const ObjectReader& c, std::optional<double> pool_capex) {
  const ObjectReader o = c.object("ownership", {"capex_per_gpu", "amortization_years", "electricity_price"});
  hw::Ownership own;
  if (pool_capex && o.has("capex_per_gpu"))
    o.fail_message("capex_per_gpu", "the pools give their own capex_per_gpu: give it there or here, not both");
  own.capex_per_gpu = pool_capex ? *pool_capex : o.number("capex_per_gpu", 0.0, 1e8);
  own.amortization_years = o.number("amortization_years", 0.1, 50.0);
  own.electricity_price = o.number("electricity_price", 0.0, 10.0);
  return own;
}

// "pools": a mixed cluster's node groups, each {gpu, num_nodes, and optionally
// intra_node, nic_bandwidth, host, price_per_gpu_hour} (docs/scenario.md,
// "Mixed clusters"). Sets the cluster's GPU and fabric to pool 0's, its host to the weakest.
void parse_pools(const ObjectReader& c, hw::ClusterSpec& cluster, std::optional<long long>& domain_gpus) {
  for (std::string_view key : {"gpu", "num_nodes", "price_per_gpu_hour", "intra_node", "host", "scale_up_domain"})
    if (c.has(key))
      c.fail_message(key, fmt::format("with \"pools\" each pool names its own GPU, nodes, fabric, host and price; "
                                      "move \"{}\" into the pools (scale-up domains larger than a node are not "
                                      "modeled for mixed clusters yet)",
                                      key));
  const nlohmann::json& raw = c.raw("pools");
  if (!raw.is_array() || raw.empty() || raw.size() > kMaxPools)
    c.fail("pools", fmt::format("an array of 1 to {} pools {{\"gpu\", \"num_nodes\", ...}}", kMaxPools), raw);
  // cluster.inter_node.nic_bandwidth, when given, is every pool's default (0: none).
  const double shared_nic = c.has("inter_node") ? c.object("inter_node", kInterKeys)
                                                      .quantity("nic_bandwidth", Dimension::kBandwidth, 1e6,
                                                                kMaxBandwidth, 0.0)
                                                : 0.0;
  long long nodes = 0;
  int priced = 0;
  double price_gpus = 0.0;
  int capex_given = 0;
  double capex_gpus = 0.0;
  for (std::size_t i = 0; i < raw.size(); ++i) {
    const ObjectReader o(raw[i], c.file(), c.path_of("pools") + "/" + std::to_string(i),
                         {"gpu", "num_nodes", "intra_node", "nic_bandwidth", "host", "price_per_gpu_hour",
                          "capex_per_gpu"});
    const nlohmann::json gpu_json = resolve_preset(o, "gpu", PresetKind::kHardware);
    hw::GpuPool pool;
    pool.gpu = parse_gpu_spec(gpu_json, o.file(), o.path_of("gpu"));
    const Platform platform = platform_of(gpu_json, o, "gpu");
    if (i == 0) {
      cluster.gpus_per_node = static_cast<int>(c.integer("gpus_per_node", 1, kMaxGpusPerNode, platform.gpus_per_node));
      cluster.inter_node = platform.inter_node;
    } else if (!c.has("gpus_per_node") && platform.gpus_per_node != cluster.gpus_per_node) {
      o.fail_message("gpu", fmt::format("a GPU whose servers hold {} GPUs like pool 0's ({} has {} per node): pools "
                                        "share one node size; give cluster.gpus_per_node to override the presets",
                                        cluster.gpus_per_node, pool.gpu.name, platform.gpus_per_node));
    }
    if (platform.domain_gpus && *platform.domain_gpus > cluster.gpus_per_node)
      o.fail_message("gpu", fmt::format("{}'s NVLink domain spans {} GPUs, more than a node; pools of rack-scale "
                                        "domains (NVL72) are not modeled in a mixed cluster yet: use one GPU type, "
                                        "or a GPU of 8-GPU servers",
                                        pool.gpu.name, *platform.domain_gpus));
    pool.num_nodes = static_cast<int>(o.integer("num_nodes", 1, kMaxNodes));
    pool.intra_node = platform.intra_node;
    if (o.has("intra_node")) parse_intra_node(o.object("intra_node", kIntraKeys), pool.intra_node);
    if (pool.intra_node.fabric == "mesh")
      o.fail_message("gpu", fmt::format("{}'s GPUs are joined by a mesh (Infinity Fabric); mixed clusters are "
                                        "modeled for switched fabrics (\"nvswitch\", \"pcie\") only",
                                        pool.gpu.name));
    pool.nic_bandwidth = shared_nic > 0.0 ? shared_nic : platform.inter_node.nic_bandwidth;
    pool.nic_bandwidth = o.quantity("nic_bandwidth", Dimension::kBandwidth, 1e6, kMaxBandwidth, pool.nic_bandwidth);
    pool.host = platform.host;
    if (o.has("host")) parse_host(o.object("host", kHostKeys), pool.host);
    if (o.has_non_null("capex_per_gpu")) {
      ++capex_given;
      capex_gpus += o.number("capex_per_gpu", 0.0, 1e8) * pool.num_nodes;
    }
    if (o.has_non_null("price_per_gpu_hour")) {
      pool.price_per_gpu_hour = o.number("price_per_gpu_hour", 0.0, 1e6);
      ++priced;
      price_gpus += *pool.price_per_gpu_hour * pool.num_nodes;
    }
    nodes += pool.num_nodes;
    cluster.pools.push_back(std::move(pool));
  }
  if (priced != 0 && priced != static_cast<int>(raw.size()))
    c.fail_message("pools", "a price_per_gpu_hour in every pool or in none");
  if (nodes > kMaxNodes) c.fail_message("pools", fmt::format("{} nodes; at most {}", nodes, kMaxNodes));
  const hw::GpuPool& first = cluster.pools.front();
  cluster.gpu = first.gpu;
  cluster.num_nodes = static_cast<int>(nodes);
  cluster.intra_node = first.intra_node;
  cluster.host = weakest_host(cluster.pools);
  domain_gpus.reset();
  // The job pays each pool's price for its GPUs: one rate per GPU, their mean.
  if (priced != 0) cluster.price_per_gpu_hour = price_gpus / static_cast<double>(nodes);
  // An owned mixed cluster: each pool's purchase per GPU, written off over the same
  // years at one electricity price; owned_cost is linear in it, so the GPUs' mean.
  if (capex_given != 0 && capex_given != static_cast<int>(raw.size()))
    c.fail_message("pools", "a capex_per_gpu in every pool or in none");
  if (capex_given != 0 && !c.has_non_null("ownership"))
    c.fail_message("pools", "capex_per_gpu in the pools needs cluster.ownership (amortization_years, "
                            "electricity_price)");
  if (c.has_non_null("ownership")) {
    if (capex_given == 0)
      cluster.ownership = parse_ownership(c, std::nullopt);
    else
      cluster.ownership = parse_ownership(c, capex_gpus / static_cast<double>(nodes));
  }
}

// The cluster's GPU preset, its platform's defaults, the node count and size.
void parse_single_gpu(const ObjectReader& c, hw::ClusterSpec& cluster, std::optional<long long>& domain_gpus) {
  const nlohmann::json gpu_json = resolve_preset(c, "gpu", PresetKind::kHardware);
  cluster.gpu = parse_gpu_spec(gpu_json, c.file(), c.path_of("gpu"));
  // Platform defaults from the GPU preset, then the scenario's own settings.
  const Platform platform = platform_of(gpu_json, c, "gpu");
  cluster.gpus_per_node = platform.gpus_per_node;
  domain_gpus = platform.domain_gpus;
  cluster.intra_node = platform.intra_node;
  cluster.inter_node = platform.inter_node;
  cluster.host = platform.host;
  cluster.num_nodes = static_cast<int>(c.integer("num_nodes", 1, kMaxNodes));
  cluster.gpus_per_node = static_cast<int>(c.integer("gpus_per_node", 1, kMaxGpusPerNode, cluster.gpus_per_node));
  if (c.has("scale_up_domain")) domain_gpus = c.integer("scale_up_domain", 1, kMaxGpusPerDomain);
  if (c.has("intra_node")) parse_intra_node(c.object("intra_node", kIntraKeys), cluster.intra_node);
  if (c.has("host")) parse_host(c.object("host", kHostKeys), cluster.host);
  if (c.has_non_null("price_per_gpu_hour"))
    cluster.price_per_gpu_hour = c.number("price_per_gpu_hour", 0.0, 1e6);
  if (c.has_non_null("ownership")) cluster.ownership = parse_ownership(c, std::nullopt);
}

}  // namespace

hw::ClusterSpec parse_cluster(const ObjectReader& root) {
  const ObjectReader c = root.object(
      "cluster", {"gpu", "num_nodes", "gpus_per_node", "scale_up_domain", "intra_node", "inter_node", "host",
                  "price_per_gpu_hour", "ownership", "pue", "gpu_speed_spread", "pools"});
  hw::ClusterSpec cluster;
  std::optional<long long> domain_gpus;  // the scale-up domain, GPUs (none: one node)
  if (c.has("pools")) parse_pools(c, cluster, domain_gpus);
  else parse_single_gpu(c, cluster, domain_gpus);
  if (cluster.num_gpus() > kMaxGpus)
    c.fail_message(c.has("pools") ? "pools" : "num_nodes",
                   fmt::format("{} nodes x {} GPUs = {} GPUs; at most {} GPUs are supported", cluster.num_nodes,
                               cluster.gpus_per_node, cluster.num_gpus(), kMaxGpus));
  cluster.nodes_per_domain = nodes_per_domain(c, cluster, domain_gpus);
  if (c.has("inter_node")) parse_inter_node(c.object("inter_node", kInterKeys), cluster.inter_node);
  if (!cluster.pools.empty()) cluster.inter_node.nic_bandwidth = cluster.pools.front().nic_bandwidth;
  cluster.pue = c.number("pue", 1.0, 10.0, hw::kDefaultPue);
  cluster.gpu_speed_spread = c.number("gpu_speed_spread", 0.0, 0.5, 0.0);

  const std::string intra = c.path_of("intra_node");
  const std::string inter = c.path_of("inter_node");
  // Fabrics described node by node do not span servers.
  const auto one_node_domains = [&](const std::string& path, std::string_view what, std::string_view instead,
                                    std::string_view found) {
    if (cluster.nodes_per_domain == 1) return;
    throw ScenarioError(c.file(), path,
                        fmt::format("{}; this cluster's scale-up domains span {} nodes: give cluster.scale_up_domain "
                                    "equal to gpus_per_node, or {}",
                                    what, cluster.nodes_per_domain, instead),
                        fmt::format("\"{}\"", found));
  };
  if (cluster.intra_node.fabric == "mesh")
    one_node_domains(intra + "/fabric", "a mesh joins the GPUs of one node link by link",
                     "a switched fabric (\"nvswitch\")", "mesh");
  if (!(cluster.intra_node.bandwidth > 0.0) && cluster.gpus_per_domain() > 1)
    throw ScenarioError(c.file(), intra + "/bandwidth", "an intra-node bandwidth (the GPU has no platform default)",
                        "none");
  if (!(cluster.inter_node.nic_bandwidth > 0.0) && cluster.num_nodes > 1)
    throw ScenarioError(c.file(), inter + "/nic_bandwidth", "a NIC bandwidth (the GPU has no platform default)",
                        "none");
  for (std::size_t k = 1; k < cluster.pools.size(); ++k) {
    const std::string pool = c.path_of("pools") + "/" + std::to_string(k);
    if (!(cluster.pools[k].intra_node.bandwidth > 0.0) && cluster.gpus_per_node > 1)
      throw ScenarioError(c.file(), pool + "/intra_node/bandwidth",
                          "an intra-node bandwidth (the GPU has no platform default)", "none");
    if (!(cluster.pools[k].nic_bandwidth > 0.0) && cluster.num_nodes > 1)
      throw ScenarioError(c.file(), pool + "/nic_bandwidth", "a NIC bandwidth (the GPU has no platform default)",
                          "none");
  }
  if (cluster.heterogeneous() && cluster.inter_node.topology == "custom")
    throw ScenarioError(c.file(), inter + "/topology",
                        "a built-in topology: a custom one's cables carry their own bandwidths, which a mixed "
                        "cluster's NIC speeds would contradict",
                        "\"custom\"");
  if (cluster.inter_node.topology == "custom")
    one_node_domains(inter + "/topology", "a custom topology names the NICs of nodes, each its own NVLink domain",
                     "a built-in topology", "custom");
  if (cluster.inter_node.topology == "custom" && cluster.num_nodes > 1) {
    if (cluster.inter_node.custom_links.empty())
      throw ScenarioError(c.file(), inter + "/links", "the cables of the custom topology (inter_node \"links\")",
                          "none");
    type_cable_ends(cluster, c.file(), inter + "/links");
  }
  // Sizes and feasibility of the fabric now, so a bad layout names its field.
  try {
    (void)net::plan_topology(cluster);
  } catch (const net::TopologyError& e) {
    const std::string& field = e.field();
    const std::size_t slash = field.find('/');
    const std::string path = slash == std::string::npos ? c.path_of(field)
                                                        : c.path_of(field.substr(0, slash)) + field.substr(slash);
    throw ScenarioError(c.file(), path, e.what());
  }
  return cluster;
}

}  // namespace trainsim::scenario
