#include "workload/heterogeneous.h"

#include <algorithm>
#include <cstddef>
#include <limits>
#include <cmath>
#include <functional>
#include <map>
#include <queue>
#include <utility>
#include <stdexcept>

#include "workload/pipeline_schedule.h"
#include "workload/transformer_ops.h"

namespace trainsim::workload {

namespace {

TransformerOps stage_ops(const ModelConfig& m, const TrainingConfig& t, const ParallelConfig& p) {
  return {m, t, t.micro_batch_size, p.tensor, p.sequence_parallel, p.context, p.expert, p.folded_experts(),
          p.context_comm, p.tp_overlap, p.zero_stage >= 3, p.shared_expert_overlap};
}

double ops_seconds(const std::vector<Op>& ops, const hw::ComputeModel& compute, hw::Precision precision) {
  double s = 0.0;
  for (const Op& op : ops)
    if (!op.comm_marker) s += compute.seconds(op.work, precision);
  return s;
}

}  // namespace

std::vector<std::vector<int>> stage_pools(const ParallelConfig& p, const hw::ClusterSpec& cluster) {
  const int pp = std::max(1, p.pipeline);
  std::vector<std::vector<int>> out(static_cast<std::size_t>(pp));
  // tp-cp-ep-dp-pp: stage s holds ranks [s tp cp dp, (s + 1) tp cp dp); tp-pp-dp:
  // rank r is on stage (r / tp) mod pp (iteration_layout.h).
  const long long stride = p.rank_order == RankOrder::kTpPpDp
                               ? static_cast<long long>(p.tensor)
                               : static_cast<long long>(p.tensor) * p.context * p.data;
  const long long gpus = static_cast<long long>(p.tensor) * p.context * p.data * pp;
  for (long long r = 0; r < gpus; ++r) {
    const int pool = cluster.pool_of_rank(r);
    std::vector<int>& list = out[static_cast<std::size_t>(r / stride % pp)];
    if (std::find(list.begin(), list.end(), pool) == list.end()) list.push_back(pool);
  }
  for (std::vector<int>& list : out) std::sort(list.begin(), list.end());
  return out;
}

std::vector<std::vector<std::vector<int>>> replica_pools(const ParallelConfig& p, const hw::ClusterSpec& cluster) {
  const int pp = std::max(1, p.pipeline);
  const long long block = static_cast<long long>(p.tensor) * p.context;
  const bool tp_pp_dp = p.rank_order == RankOrder::kTpPpDp;
  const long long pp_stride = tp_pp_dp ? static_cast<long long>(p.tensor) : block * p.data;
  const long long dp_stride = tp_pp_dp ? static_cast<long long>(p.tensor) * pp : block;
  std::vector<std::vector<std::vector<int>>> out(static_cast<std::size_t>(p.data),
                                                 std::vector<std::vector<int>>(static_cast<std::size_t>(pp)));
  for (int x = 0; x < p.data; ++x)
    for (int s = 0; s < pp; ++s) {
      std::vector<int>& list = out[static_cast<std::size_t>(x)][static_cast<std::size_t>(s)];
      for (long long i = 0; i < block; ++i) {
        const int pool = cluster.pool_of_rank(s * pp_stride + i + x * dp_stride);
        if (std::find(list.begin(), list.end(), pool) == list.end()) list.push_back(pool);
      }
      std::sort(list.begin(), list.end());
    }
  return out;
}

std::vector<long long> proportional_microbatches(long long total, const std::vector<double>& t) {
  const std::size_t n = t.size();
  if (n == 0 || total < static_cast<long long>(n))
    throw std::invalid_argument("proportional_microbatches: at least one micro-batch per replica");
  // Start from the continuous optimum's whole parts, m_x = floor(M / (t_x sum_y 1/t_y))
  // (at least 1; the greedy from ones passes through them), then place the rest.
  double speed = 0.0;
  for (const double tx : t) speed += 1.0 / tx;
  std::vector<long long> m(n, 1);
  long long placed = 0;
  for (std::size_t x = 0; x < n; ++x) {
    m[x] = std::max(1LL, static_cast<long long>(std::floor(static_cast<double>(total) / (t[x] * speed))));
    placed += m[x];
  }
  if (placed > total) std::fill(m.begin(), m.end(), 1), placed = static_cast<long long>(n);
  // (time with one more, replica): the least first, ties to the lower index.
  using Next = std::pair<double, std::size_t>;
  std::priority_queue<Next, std::vector<Next>, std::greater<>> next;
  for (std::size_t x = 0; x < n; ++x) next.emplace(static_cast<double>(m[x] + 1) * t[x], x);
  for (long long left = total - placed; left > 0; --left) {
    const std::size_t x = next.top().second;
    next.pop();
    ++m[x];
    next.emplace(static_cast<double>(m[x] + 1) * t[x], x);
  }
  return m;
}

StageSeconds::StageSeconds(const ModelConfig& model, const TrainingConfig& training, const ParallelConfig& parallel)
    : ops_(stage_ops(model, training, parallel)), precision_(training.precision), recompute_(parallel.recompute) {}

double StageSeconds::layer(long long l, const hw::ComputeModel& compute) const {
  return ops_seconds(ops_.layer_forward(l), compute, precision_) +
         ops_seconds(ops_.layer_backward(l), compute, precision_) +
         ops_seconds(ops_.layer_recompute(l, recompute_), compute, precision_);
}

double StageSeconds::operator()(const StageWork& work, const hw::ComputeModel& compute) const {
  const TransformerOps& ops = ops_;
  const hw::Precision precision = precision_;
  double s = 0.0;
  for (long long l = work.first; l < work.end; ++l) s += layer(l, compute);
  if (work.embedding)
    s += ops_seconds(ops.embedding_forward(), compute, precision) +
         ops_seconds(ops.embedding_backward(), compute, precision);
  if (work.head)
    s += ops_seconds(ops.head_forward(), compute, precision) + ops_seconds(ops.head_backward(), compute, precision);
  return s;
}

std::vector<int> pacing_pools(const StageSeconds& seconds, const std::vector<std::vector<int>>& pools,
                              const std::vector<long long>& stage_layers,
                              const std::vector<const hw::ComputeModel*>& models) {
  const std::size_t pp = pools.size();
  if (stage_layers.size() != pp) throw std::invalid_argument("pacing_pools: one layer count per stage");
  std::vector<int> pace(pp, 0);
  long long first = 0;
  for (std::size_t s = 0; s < pp; ++s) {
    const StageWork work{first, first + stage_layers[s], s == 0, s + 1 == pp};
    first = work.end;
    double slowest = -1.0;
    for (const int k : pools[s]) {
      const double t = seconds(work, *models.at(static_cast<std::size_t>(k)));
      if (t > slowest) slowest = t, pace[s] = k;
    }
  }
  return pace;
}

std::vector<long long> speed_balanced_layers(const StageSeconds& seconds, long long layers,
                                             const std::vector<int>& pace,
                                             const std::vector<const hw::ComputeModel*>& models) {
  const std::size_t pp = pace.size();
  const auto n = static_cast<std::size_t>(layers);
  if (pp == 0 || static_cast<long long>(pp) > layers)
    throw std::invalid_argument("speed_balanced_layers: every stage needs a layer");
  // prefix[k][i]: layers [0, i) on pool k; the embedding and the head apart.
  std::map<int, std::vector<double>> prefix;
  std::map<int, std::pair<double, double>> ends;  // pool: (embedding, head)
  for (const int k : pace) {
    if (prefix.contains(k)) continue;
    const hw::ComputeModel& m = *models.at(static_cast<std::size_t>(k));
    std::vector<double>& p = prefix[k];
    p.assign(n + 1, 0.0);
    for (std::size_t i = 0; i < n; ++i) p[i + 1] = p[i] + seconds.layer(static_cast<long long>(i), m);
    ends[k] = {seconds({0, 0, true, false}, m), seconds({0, 0, false, true}, m)};
  }
  const auto cost = [&](std::size_t s, std::size_t a, std::size_t b) {
    const int k = pace[s];
    const std::vector<double>& p = prefix.at(k);
    double t = p[b] - p[a];
    if (s == 0) t += ends.at(k).first;
    if (s + 1 == pp) t += ends.at(k).second;
    return t;
  };
  struct Best {
    double max = std::numeric_limits<double>::infinity();
    double squares = std::numeric_limits<double>::infinity();
    std::size_t cut = 0;
  };
  // best[s][j]: stages 0..s over layers [0, j).
  std::vector<std::vector<Best>> best(pp, std::vector<Best>(n + 1));
  for (std::size_t j = 1; j <= n; ++j) {
    const double t = cost(0, 0, j);
    best[0][j] = {t, t * t, 0};
  }
  for (std::size_t s = 1; s < pp; ++s)
    for (std::size_t j = s + 1; j <= n; ++j)
      for (std::size_t i = s; i < j; ++i) {
        const Best& prev = best[s - 1][i];
        const double t = cost(s, i, j);
        const Best c{std::max(prev.max, t), prev.squares + t * t, i};
        Best& b = best[s][j];
        if (c.max < b.max || (c.max == b.max && c.squares < b.squares)) b = c;
      }
  std::vector<long long> out(pp, 0);
  std::size_t end = n;
  for (std::size_t s = pp; s-- > 0;) {
    const std::size_t cut = best[s][end].cut;
    out[s] = static_cast<long long>(end - cut);
    end = cut;
  }
  return out;
}

}  // namespace trainsim::workload
