#include "sweep/space.h"

#include <algorithm>
#include <fmt/format.h>
#include <stdexcept>

namespace trainsim::sweep {

namespace {

std::vector<long long> divisors(long long n) {
  std::vector<long long> out;
  for (long long d = 1; d * d <= n; ++d)
    if (n % d == 0) {
      out.push_back(d);
      if (d != n / d) out.push_back(n / d);
    }
  std::sort(out.begin(), out.end());
  return out;
}

template <typename Keep>
std::vector<long long> divisors_where(long long n, Keep keep) {
  std::vector<long long> out;
  for (long long d : divisors(n))
    if (keep(d)) out.push_back(d);
  return out;
}

bool contains(const std::vector<int>& v, int x) { return std::find(v.begin(), v.end(), x) != v.end(); }

}  // namespace

// "auto": every value that is valid on its own for this cluster and model
// (docs/sweep.md, "auto"); combinations are checked in enumerate().
ResolvedSpace resolve(const config::Space& space, const config::Scenario& base) {
  const long long gpus = base.cluster.num_gpus();
  const workload::ModelConfig& m = base.model;
  ResolvedSpace r;
  r.tensor = space.tensor.automatic ? divisors_where(gpus,
                                                     [&](long long d) {
                                                       return m.num_attention_heads % d == 0 &&
                                                              m.num_query_groups % d == 0;
                                                     })
                                    : space.tensor.values;
  r.pipeline = space.pipeline.automatic
                   ? divisors_where(gpus, [&](long long d) { return d <= m.num_layers && m.num_layers % d == 0; })
                   : space.pipeline.values;
  // Context parallelism splits each sequence in 2 cp chunks (Megatron-LM's load
  // balancing of causal attention).
  r.context = space.context.automatic
                  ? divisors_where(gpus, [&](long long d) { return d == 1 || m.seq_length % (2 * d) == 0; })
                  : space.context.values;
  r.expert = space.expert.automatic
                 ? (m.is_moe() ? divisors_where(m.num_experts, [&](long long d) { return gpus % d == 0; })
                               : std::vector<long long>{1})
                 : space.expert.values;
  r.micro_batch = space.micro_batch.automatic ? divisors(base.training.global_batch_size) : space.micro_batch.values;
  if (space.virtual_stage.automatic) {
    r.virtual_stage = {0};
    for (long long d : divisors(m.num_layers))
      if (d < m.num_layers) r.virtual_stage.push_back(d);
  } else {
    r.virtual_stage = space.virtual_stage.values;
  }
  if (!space.data.automatic) r.data = space.data.values;
  return r;
}

Enumeration enumerate(const config::SweepSpec& spec, std::uint64_t max_combinations) {
  Enumeration e;
  const config::Space& sp = spec.space;
  std::vector<ResolvedSpace> spaces;
  for (const config::ClusterOption& c : spec.clusters) {
    spaces.push_back(resolve(sp, c.base));
    const ResolvedSpace& r = spaces.back();
    const std::uint64_t n = sp.network_model.size() * r.tensor.size() * r.pipeline.size() * r.virtual_stage.size() *
                            r.context.size() * r.expert.size() * r.micro_batch.size() * sp.sequence_parallel.size() *
                            sp.zero_stage.size() * sp.recompute.size() * sp.schedule.size() *
                            sp.overlap_grad_reduce.size() * sp.overlap_param_gather.size();
    e.combinations += n;
  }
  if (e.combinations > max_combinations)
    throw std::length_error(fmt::format("the space has {} combinations, more than {}; narrow it (lists instead of "
                                        "\"auto\")",
                                        e.combinations, max_combinations));
  std::uint64_t id = 0;
  Point p;
  const auto prune = [&](const char* reason) { ++e.pruned[reason]; };
  for (std::size_t c = 0; c < spec.clusters.size(); ++c) {
    const config::Scenario& base = spec.clusters[c].base;
    const ResolvedSpace& r = spaces[c];
    const long long gpus = base.cluster.num_gpus();
    const workload::ModelConfig& m = base.model;
    p.cluster = static_cast<int>(c);
    for (config::NetworkModel net : sp.network_model)
      for (long long tp : r.tensor)
        for (long long pp : r.pipeline)
          for (long long vpp : r.virtual_stage)
            for (long long cp : r.context)
              for (long long ep : r.expert)
                for (long long mbs : r.micro_batch)
                  for (int seq : sp.sequence_parallel)
                    for (int zero : sp.zero_stage)
                      for (int rc : sp.recompute)
                        for (int sched : sp.schedule)
                          for (int ogr : sp.overlap_grad_reduce)
                            for (int opg : sp.overlap_param_gather) {
                              p.id = id++;
                              const long long mp = tp * pp * cp;
                              if (gpus % mp != 0) {
                                prune(kPruneGpus);
                                continue;
                              }
                              const long long dp = gpus / mp;
                              if (r.data && std::find(r.data->begin(), r.data->end(), dp) == r.data->end()) {
                                prune(kPruneData);
                                continue;
                              }
                              if (m.num_attention_heads % tp != 0 || m.num_query_groups % tp != 0) {
                                prune(kPruneHeads);
                                continue;
                              }
                              if (pp > m.num_layers || m.num_layers % pp != 0) {
                                prune(kPruneLayers);
                                continue;
                              }
                              if (base.training.global_batch_size % (mbs * dp) != 0) {
                                prune(kPruneBatch);
                                continue;
                              }
                              if (dp == 1 && zero > 0 && contains(sp.zero_stage, 0)) {
                                prune(kPruneRedundantZero);
                                continue;
                              }
                              if (tp == 1 && seq == 1 && contains(sp.sequence_parallel, 0)) {
                                prune(kPruneRedundantSp);
                                continue;
                              }
                              p.network_model = net;
                              p.tensor = static_cast<int>(tp);
                              p.pipeline = static_cast<int>(pp);
                              p.virtual_stage = static_cast<int>(vpp);
                              p.context = static_cast<int>(cp);
                              p.expert = static_cast<int>(ep);
                              p.data = static_cast<int>(dp);
                              p.micro_batch = mbs;
                              p.sequence_parallel = seq;
                              p.zero_stage = zero;
                              p.recompute = rc;
                              p.schedule = sched;
                              p.overlap_grad_reduce = ogr;
                              p.overlap_param_gather = opg;
                              e.candidates.push_back(p);
                            }
  }
  return e;
}

static_assert(static_cast<int>(workload::Recompute::kFull) == 2 &&
              static_cast<int>(workload::Recompute::kSelectiveOp) == 3 &&
              static_cast<int>(workload::PipelineSchedule::kInterleaved1F1B) == 2,
              "kRecomputeNames and kScheduleNames index the enums");

workload::ParallelConfig parallel_config(const Point& p) {
  workload::ParallelConfig c;
  c.tensor = p.tensor;
  c.pipeline = p.pipeline;
  c.data = p.data;
  c.context = p.context;
  c.expert = p.expert;
  if (p.virtual_stage > 0) c.layers_per_virtual_stage = p.virtual_stage;
  if (p.sequence_parallel >= 0) c.sequence_parallel = p.sequence_parallel == 1;
  if (p.zero_stage >= 0) c.zero_stage = p.zero_stage;
  if (p.recompute >= 0) c.recompute = static_cast<workload::Recompute>(p.recompute);
  if (p.schedule >= 0) c.schedule = static_cast<workload::PipelineSchedule>(p.schedule);
  if (p.overlap_grad_reduce >= 0) c.overlap_grad_reduce = p.overlap_grad_reduce == 1;
  if (p.overlap_param_gather >= 0) c.overlap_param_gather = p.overlap_param_gather == 1;
  return c;
}

std::string layout_label(const Point& p) {
  std::string s = fmt::format("tp{} pp{}", p.tensor, p.pipeline);
  if (p.virtual_stage > 0) s += fmt::format(" vpp{}", p.virtual_stage);
  if (p.context > 1) s += fmt::format(" cp{}", p.context);
  if (p.expert > 1) s += fmt::format(" ep{}", p.expert);
  s += fmt::format(" dp{} mbs{}", p.data, p.micro_batch);
  if (p.sequence_parallel == 1) s += " sp";
  if (p.zero_stage > 0) s += fmt::format(" zero{}", p.zero_stage);
  if (p.recompute >= 0) s += fmt::format(" rc:{}", config::kRecomputeNames[p.recompute]);
  if (p.schedule >= 0) s += fmt::format(" {}", config::kScheduleNames[p.schedule]);
  if (p.overlap_grad_reduce == 1) s += " ogr";
  if (p.overlap_param_gather == 1) s += " opg";
  s += p.network_model == config::NetworkModel::kFlow ? " flow" : " analytic";
  return s;
}

}  // namespace trainsim::sweep
