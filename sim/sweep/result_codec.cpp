#include "sweep/result_codec.h"

#include <stdexcept>

#include <nlohmann/json.hpp>

namespace trainsim::sweep {

namespace {

using nlohmann::json;

json optional_json(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }
std::optional<double> optional_of(const json& v) {
  return v.is_null() ? std::nullopt : std::optional<double>(v.get<double>());
}

json reliability_json(const std::optional<PointReliability>& r) {
  if (!r) return nullptr;
  return json::array({r->trials, r->time_to_train_p50_s, r->time_to_train_p90_s, r->time_to_train_mean_s,
                      r->goodput, r->expected_interruptions, r->checkpoint_interval_s, optional_json(r->cost_p50_usd),
                      r->energy_kwh});
}

std::optional<PointReliability> reliability_of(const json& a) {
  if (a.is_null()) return std::nullopt;
  if (!a.is_array() || a.size() != 9) throw std::invalid_argument("sweep results: a malformed replay result");
  PointReliability r;
  r.trials = a[0].get<int>();
  std::size_t i = 1;
  for (double* d : {&r.time_to_train_p50_s, &r.time_to_train_p90_s, &r.time_to_train_mean_s, &r.goodput,
                    &r.expected_interruptions, &r.checkpoint_interval_s})
    *d = a[i++].get<double>();
  r.cost_p50_usd = optional_of(a[i++]);
  r.energy_kwh = a[i].get<double>();
  return r;
}

// Positional arrays: compact, and a field added here is added in one place.
json to_array(const PointResult& r) {
  const report::Breakdown& b = r.breakdown_s;
  return json::array({r.id, static_cast<int>(r.status), r.reason, r.message, r.data, r.num_microbatches,
                      r.zero_stage, r.sequence_parallel, r.recompute, r.schedule, r.virtual_stage,
                      r.peak_bytes_per_gpu, r.capacity_bytes_per_gpu, r.iteration_time_s, r.tokens_per_s,
                      r.model_flops_per_iteration, r.tflops_per_gpu, r.mfu, b.compute, b.exposed_communication,
                      b.pipeline_bubble, b.optimizer, b.other, optional_json(r.time_to_train_s),
                      optional_json(r.cost_usd), optional_json(r.energy_kwh), r.exposed_tp_s, r.exposed_dp_s,
                      r.exposed_pp_s, r.recompute_s, reliability_json(r.reliability), r.replay_error});
}

PointResult from_array(const json& a) {
  constexpr std::size_t kFields = 32;
  if (!a.is_array() || a.size() != kFields) throw std::invalid_argument("sweep results: a malformed point result");
  PointResult r;
  std::size_t i = 0;
  r.id = a[i++].get<std::uint64_t>();
  r.status = static_cast<Status>(a[i++].get<int>());
  r.reason = a[i++].get<std::string>();
  r.message = a[i++].get<std::string>();
  r.data = a[i++].get<int>();
  r.num_microbatches = a[i++].get<long long>();
  r.zero_stage = a[i++].get<int>();
  r.sequence_parallel = a[i++].get<bool>();
  r.recompute = a[i++].get<std::string>();
  r.schedule = a[i++].get<std::string>();
  r.virtual_stage = a[i++].get<int>();
  for (double* d : {&r.peak_bytes_per_gpu, &r.capacity_bytes_per_gpu, &r.iteration_time_s, &r.tokens_per_s,
                    &r.model_flops_per_iteration, &r.tflops_per_gpu, &r.mfu, &r.breakdown_s.compute,
                    &r.breakdown_s.exposed_communication, &r.breakdown_s.pipeline_bubble, &r.breakdown_s.optimizer,
                    &r.breakdown_s.other})
    *d = a[i++].get<double>();
  r.time_to_train_s = optional_of(a[i++]);
  r.cost_usd = optional_of(a[i++]);
  r.energy_kwh = optional_of(a[i++]);
  for (double* d : {&r.exposed_tp_s, &r.exposed_dp_s, &r.exposed_pp_s, &r.recompute_s}) *d = a[i++].get<double>();
  r.reliability = reliability_of(a[i++]);
  r.replay_error = a[i++].get<std::string>();
  return r;
}

}  // namespace

std::vector<std::uint8_t> encode_results(const std::vector<PointResult>& results) {
  json all = json::array();
  for (const PointResult& r : results) all.push_back(to_array(r));
  return json::to_msgpack(all);
}

std::vector<PointResult> decode_results(const std::vector<std::uint8_t>& bytes) {
  json all;
  try {
    all = json::from_msgpack(bytes);
  } catch (const json::exception& e) {
    throw std::invalid_argument(std::string("sweep results: ") + e.what());
  }
  if (!all.is_array()) throw std::invalid_argument("sweep results: not a list");
  std::vector<PointResult> out;
  out.reserve(all.size());
  for (const json& a : all) out.push_back(from_array(a));
  return out;
}

}  // namespace trainsim::sweep
