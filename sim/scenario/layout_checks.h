#pragma once
// The checks of a parallel layout against its cluster, model and batch
// (docs/scenario.md, "parallelism"), on typed values. The reader runs them as it
// reads "parallelism" (parse_parallelism.cpp), each where it has read what the
// check needs, so its messages point at the key as the user wrote it; the sweep
// runs them all on each point's layout through check_parallelism, with no JSON
// in between. One set of checks, one set of messages.
#include <functional>
#include <string>
#include <string_view>

#include "config/scenario.h"

namespace trainsim::scenario {

class LayoutChecks {
 public:
  // Throws a ScenarioError at /parallelism/<key> with the message.
  using Fail = std::function<void(std::string_view key, std::string message)>;

  LayoutChecks(std::string file, const hw::ClusterSpec& cluster, const workload::ModelConfig& model,
               const workload::TrainingConfig& training, Fail fail);

  // tensor x pipeline x context divides the GPUs.
  void model_parallel(const workload::ParallelConfig& p) const;
  void domain_alignment(const workload::ParallelConfig& p) const;
  // An explicit data-parallel size fills the GPUs.
  void data_fills_cluster(const workload::ParallelConfig& p) const;
  // The batch, heads, layers, experts, sequence and attention backend allow the sizes.
  void sizes(const workload::ParallelConfig& p) const;
  // num_layers_per_virtual_pipeline_stage in range (a typed layout only; the reader
  // reads it in range).
  void virtual_stage_range(const workload::ParallelConfig& p) const;
  // Virtual stages against the layers and micro-batches (p.schedule resolved).
  void schedule(const workload::ParallelConfig& p) const;
  // ZeRO's limits.
  void zero(const workload::ParallelConfig& p) const;
  // torchtitan's selective op recomputation: the dense Llama-style blocks it is modeled for.
  void recompute(const workload::ParallelConfig& p) const;
  // Megatron-Core's asserts on CPU activation offload (transformer_config.py).
  void offload(const workload::ParallelConfig& p) const;
  void zero_offload(const workload::ParallelConfig& p) const;
  // The asynchronous modes' limits.
  void asynchronous(const workload::ParallelConfig& p, std::string_view mode) const;
  // The layouts the single-program frameworks (pytorch_eager, trainsim_train) model.
  void program(const workload::ParallelConfig& p) const;

  [[noreturn]] void fail(std::string_view key, std::string message) const;

 private:
  std::string file_;
  const hw::ClusterSpec& cluster_;
  const workload::ModelConfig& model_;
  const workload::TrainingConfig& training_;
  Fail fail_;
};

// Every check on a typed layout for `base`'s cluster, model and training, in the
// order the reader makes them, and returns the layout with its schedule resolved
// (virtual stages run the interleaved schedule; `schedule_given`: the layout named
// one, which must then be interleaved). Throws ScenarioError naming base's file and
// /parallelism/<key>.
workload::ParallelConfig check_parallelism(workload::ParallelConfig p, bool schedule_given,
                                           const config::Scenario& base);

}  // namespace trainsim::scenario
