#pragma once
// The fields of a point result, each named once (issue 22, "one schema per
// format"): for_each_field(r, f) calls f(name, field) for every member, in
// declaration order. Each walker takes the struct apart with a structured
// binding, which names every member: a member added to the struct and not here
// stops the build, so what walks these (the MPI codec, sweep/result_codec.cpp)
// cannot drop a field without a compile error.
#include <string_view>

#include "report/metrics.h"
#include "sweep/evaluate.h"

namespace trainsim::sweep {

template <typename B, typename F>
  requires std::is_same_v<std::remove_const_t<B>, report::Breakdown>
void for_each_field(B& b, F&& f) {
  auto& [compute, exposed_communication, pipeline_bubble, optimizer, other] = b;
  f(std::string_view("compute"), compute);
  f(std::string_view("exposed_communication"), exposed_communication);
  f(std::string_view("pipeline_bubble"), pipeline_bubble);
  f(std::string_view("optimizer"), optimizer);
  f(std::string_view("other"), other);
}

template <typename R, typename F>
  requires std::is_same_v<std::remove_const_t<R>, PointReliability>
void for_each_field(R& r, F&& f) {
  auto& [trials, p50, p90, mean, goodput, interruptions, interval, cost_p50, energy] = r;
  f(std::string_view("trials"), trials);
  f(std::string_view("time_to_train_p50_s"), p50);
  f(std::string_view("time_to_train_p90_s"), p90);
  f(std::string_view("time_to_train_mean_s"), mean);
  f(std::string_view("goodput"), goodput);
  f(std::string_view("expected_interruptions"), interruptions);
  f(std::string_view("checkpoint_interval_s"), interval);
  f(std::string_view("cost_p50_usd"), cost_p50);
  f(std::string_view("energy_kwh"), energy);
}

template <typename R, typename F>
  requires std::is_same_v<std::remove_const_t<R>, PointResult>
void for_each_field(R& r, F&& f) {
  auto& [id, status, reason, message, data, num_microbatches, zero_stage, sequence_parallel, recompute, schedule,
         virtual_stage, peak_bytes_per_gpu, capacity_bytes_per_gpu, iteration_time_s, tokens_per_s,
         model_flops_per_iteration, tflops_per_gpu, mfu, breakdown_s, compute_busy_s, compute_ranks, time_to_train_s,
         cost_usd, energy_kwh, exposed_tp_s, exposed_dp_s, exposed_pp_s, recompute_s, reliability, replay_error] = r;
  f(std::string_view("id"), id);
  f(std::string_view("status"), status);
  f(std::string_view("reason"), reason);
  f(std::string_view("message"), message);
  f(std::string_view("data"), data);
  f(std::string_view("num_microbatches"), num_microbatches);
  f(std::string_view("zero_stage"), zero_stage);
  f(std::string_view("sequence_parallel"), sequence_parallel);
  f(std::string_view("recompute"), recompute);
  f(std::string_view("schedule"), schedule);
  f(std::string_view("virtual_stage"), virtual_stage);
  f(std::string_view("peak_bytes_per_gpu"), peak_bytes_per_gpu);
  f(std::string_view("capacity_bytes_per_gpu"), capacity_bytes_per_gpu);
  f(std::string_view("iteration_time_s"), iteration_time_s);
  f(std::string_view("tokens_per_s"), tokens_per_s);
  f(std::string_view("model_flops_per_iteration"), model_flops_per_iteration);
  f(std::string_view("tflops_per_gpu"), tflops_per_gpu);
  f(std::string_view("mfu"), mfu);
  f(std::string_view("breakdown_s"), breakdown_s);
  f(std::string_view("compute_busy_s"), compute_busy_s);
  f(std::string_view("compute_ranks"), compute_ranks);
  f(std::string_view("time_to_train_s"), time_to_train_s);
  f(std::string_view("cost_usd"), cost_usd);
  f(std::string_view("energy_kwh"), energy_kwh);
  f(std::string_view("exposed_tp_s"), exposed_tp_s);
  f(std::string_view("exposed_dp_s"), exposed_dp_s);
  f(std::string_view("exposed_pp_s"), exposed_pp_s);
  f(std::string_view("recompute_s"), recompute_s);
  f(std::string_view("reliability"), reliability);
  f(std::string_view("replay_error"), replay_error);
}

}  // namespace trainsim::sweep
