#include "execution/memory_timeline.h"

#include <algorithm>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "workload/ddp.h"
#include "workload/memory.h"
#include "workload/parameters.h"
#include "workload/zero3_passes.h"

namespace trainsim::exec {

namespace {

struct Change {
  core::Time time = 0;
  double bytes = 0.0;       // + allocated, - freed
  workload::TaskId task = 0;
};

// A pass of one layer of one micro-batch: (iteration, micro-batch, layer).
using PassKey = std::tuple<int, int, long long>;

struct Window {
  core::Time first_start = 0;
  core::Time last_end = 0;
  workload::TaskId first = 0;
  workload::TaskId last = 0;
  bool seen = false;
  void add(const Span& span) {
    if (!seen || span.start < first_start) {
      first_start = span.start;
      first = span.task;
    }
    if (!seen || span.end >= last_end) {
      last_end = span.end;
      last = span.task;
    }
    seen = true;
  }
};

// The pass a compute task is part of: its decoder layer's, or the embedding's
// (-1), or the head's (-2: final norm to loss).
long long pass_key(const workload::Task& t) {
  switch (t.role) {
    case workload::Role::kEmbedding: return -1;
    case workload::Role::kHead: return -2;
    default: return t.layer;
  }
}

// Megatron-style passes (docs/model.md, "Memory over time").
void add_pass_changes(const config::Scenario& s, const SimulationOutput& out, int rank,
                      std::vector<Change>& changes) {
  const workload::ActivationSplit split{s.parallel.tensor, s.parallel.sequence_parallel, s.parallel.context};
  const long long b = s.training.micro_batch_size;
  // Per layer: dense and MoE layers keep different activations.
  const auto layer = [&](long long l) {
    return workload::layer_activation_bytes(s.model, s.training, s.parallel.recompute, b, split, l);
  };
  const auto recomputed = [&](long long l) {
    return workload::recomputed_activation_bytes(s.model, s.training, s.parallel.recompute, b, split, l);
  };
  const double embedding = workload::embedding_activation_bytes(s.model, s.training, b, split);
  const double head = workload::head_activation_bytes(s.model, s.training, b, split);
  const double loss_transient = workload::loss_backward_transient_bytes(s.model, s.training, b, split);

  std::map<PassKey, Window> forward;
  std::map<PassKey, Window> backward;
  std::map<PassKey, Window> recompute;
  std::map<PassKey, Window> reload;  // CPU offload: the copy back of an offloaded layer
  for (const Span& span : out.timeline.spans) {
    if (span.rank != rank) continue;
    const workload::Task& t = out.iteration.graph[span.task];
    if (const auto& collective = out.iteration.graph.work(t).collective) {
      // Data-parallel reductions work in place on the gradient buffer and ZeRO's
      // gathers land in the weights counted above; other transfers need a buffer
      // for what they receive while they run.
      if (t.stream == workload::Stream::kDpComm || collective->kind == net::CollectiveKind::kAllReduce) continue;
      changes.push_back({span.start, collective->bytes, span.task});
      changes.push_back({span.end, -collective->bytes, span.task});
      continue;
    }
    const PassKey key{t.iteration, t.microbatch, t.layer};
    if (t.layer >= 0) {
      if (t.category == workload::Category::kForward) forward[key].add(span);
      if (t.category == workload::Category::kBackward) backward[key].add(span);
      if (t.category == workload::Category::kRecompute) recompute[key].add(span);
      if (t.category == workload::Category::kReload) reload[key].add(span);
      continue;
    }
    // Outside the layers: the embedding's pass, and the head's (final norm to loss),
    // whose loss backward may allocate beside it while it runs.
    if (loss_transient > 0.0 && t.role == workload::Role::kHead && t.category == workload::Category::kBackward &&
        out.iteration.graph.work(t).name == "loss.backward") {
      changes.push_back({span.start, loss_transient, span.task});
      changes.push_back({span.end, -loss_transient, span.task});
    }
    const PassKey outside{t.iteration, t.microbatch, pass_key(t)};
    if (t.category == workload::Category::kForward) forward[outside].add(span);
    if (t.category == workload::Category::kBackward) backward[outside].add(span);
  }
  // CPU offload (workload/activation_offload.h): an offloaded layer's activations
  // leave when the forward reaches layer L - N + l and return when its reload starts.
  const long long offloaded = s.parallel.offloaded_layers;
  for (const auto& [key, fwd] : forward) {
    const long long l = std::get<2>(key);
    const double bytes = l == -1 ? embedding : l == -2 ? head : layer(l);
    changes.push_back({fwd.first_start, bytes, fwd.first});
    const auto bwd = backward.find(key);
    if (bwd != backward.end()) changes.push_back({bwd->second.last_end, -bytes, bwd->second.last});
    if (l < 0 || l >= offloaded) continue;
    const auto released = forward.find({std::get<0>(key), std::get<1>(key), s.model.num_layers - offloaded + l});
    const auto back = reload.find(key);
    if (released == forward.end() || back == reload.end()) continue;
    changes.push_back({released->second.first_start, -bytes, released->second.first});
    changes.push_back({back->second.first_start, bytes, back->second.first});
  }
  for (const auto& [key, rec] : recompute) {
    const auto bwd = backward.find(key);
    const long long l = std::get<2>(key);
    const double bytes = l >= 0 ? recomputed(l) : 0.0;
    if (bytes <= 0.0 || bwd == backward.end()) continue;
    changes.push_back({rec.first_start, bytes, rec.first});
    changes.push_back({bwd->second.last_end, -bytes, bwd->second.last});
  }
}

// FSDP2 around the eager program (docs/model.md, "PyTorch eager under FSDP2"): a
// block's gathered fp32 weights from its all-gather's start to the end of its forward
// or backward (resharded); a unit's whole gradients until its chunk_cat ends, the
// reduce-scatter's input from the chunk_cat's start to the next unit's chunk_cat's end
// (the root's: to its reduce-scatter's end), the shard from the reduce-scatter's start.
struct Fsdp2Units {
  double shards = 1.0;
  double block_bytes = 0.0;  // a block's parameters (or gradients) in fp32
  double root_bytes = 0.0;
  std::vector<const Span*> gathers;  // the blocks' (layer >= 0)
  // Per iteration: the chunk_cats (sorted by start: backward order, the root's last),
  // and the reduce-scatters by (iteration, layer), -1 the root's.
  std::map<int, std::vector<const Span*>> chunk_cats;
  std::map<std::pair<int, long long>, const Span*> reductions;
};

void note_fsdp2_span(const workload::Task& t, const workload::Work& w, const Span& span, Fsdp2Units& f) {
  if (w.collective && t.stream == workload::Stream::kDpComm) {
    if (w.collective->kind == net::CollectiveKind::kAllGather && t.layer >= 0) f.gathers.push_back(&span);
    if (w.collective->kind == net::CollectiveKind::kReduceScatter) f.reductions[{t.iteration, t.layer}] = &span;
  } else if (w.name.ends_with(workload::kFsdpChunkCat)) {
    f.chunk_cats[t.iteration].push_back(&span);
  }
}

// Fsdp2Units' lifetimes against the passes' windows (`forward`, `backward`).
void add_fsdp2_changes(const SimulationOutput& out, const Fsdp2Units& f, const std::map<PassKey, Window>& forward,
                       const std::map<PassKey, Window>& backward, std::vector<Change>& changes) {
  for (const Span* g : f.gathers) {
    const workload::Task& t = out.iteration.graph[g->task];
    const PassKey key{t.iteration, t.microbatch, t.layer};
    const auto fwd = forward.find(key);
    // The forward's gather starts before its forward ends; the backward's after.
    const bool in_forward = fwd != forward.end() && g->start < fwd->second.last_end;
    const std::map<PassKey, Window>& pass = in_forward ? forward : backward;
    const auto end = pass.find(key);
    if (end == pass.end()) continue;
    changes.push_back({g->start, f.block_bytes, g->task});
    changes.push_back({end->second.last_end, -f.block_bytes, end->second.last});
  }
  for (auto [iteration, cats] : f.chunk_cats) {
    std::sort(cats.begin(), cats.end(), [](const Span* x, const Span* y) { return x->start < y->start; });
    for (std::size_t i = 0; i < cats.size(); ++i) {
      const Span& cat = *cats[i];
      const long long layer = out.iteration.graph[cat.task].layer;
      const double whole = layer < 0 ? f.root_bytes : f.block_bytes;
      changes.push_back({cat.end, -whole, cat.task});   // the gradients, copied in
      changes.push_back({cat.start, whole, cat.task});  // the reduce-scatter's input
      const auto reduction = f.reductions.find({iteration, layer});
      if (reduction != f.reductions.end()) changes.push_back({reduction->second->start, whole / f.shards, cat.task});
      if (i + 1 < cats.size()) changes.push_back({cats[i + 1]->end, -whole, cats[i + 1]->task});
      else if (reduction != f.reductions.end()) changes.push_back({reduction->second->end, -whole, cat.task});
    }
  }
}

// PyTorch eager (docs/model.md, "Memory of a PyTorch eager step", over time):
// a block's saved tensors and its weights' bf16 casts from its forward to its
// backward; gradients from the end of a pass's backward until the next step's
// zero_grad(set_to_none=True); the head's T x V tensors between the ops that
// allocate and free them; the cuBLAS workspaces all along; under FSDP2 its gathered
// blocks and gradient shards too (add_fsdp2_changes).
struct Transient {
  std::string_view allocated_at;  // allocated when this op starts
  std::string_view freed_after;   // freed when this op ends
  double bytes = 0.0;
};

void add_eager_changes(const config::Scenario& s, const SimulationOutput& out, int rank,
                       std::vector<Change>& changes) {
  const workload::EagerMemory e = workload::eager_memory(s.model, s.training);
  Fsdp2Units fsdp;
  if (workload::under_fsdp2(s.training, s.parallel)) {
    fsdp.shards = static_cast<double>(s.parallel.data);
    fsdp.block_bytes = 4.0 * e.block_parameters;
    fsdp.root_bytes = 4.0 * e.root_parameters;
  }
  const std::vector<Transient> transients = {
      {"output_layer", "nll_loss", e.logits_bf16},                  // logits, alive until forward() returns
      {"logits_float", "nll_loss", e.logits_fp32},                  // the .float() argument of cross_entropy
      {"log_softmax", "log_softmax.backward", e.log_probs},         // saved by log_softmax and nll_loss
      {"nll_loss.zero_grad", "log_softmax.backward", e.logits_fp32},  // nll_loss_backward's output
      {"log_softmax.backward", "logits_float.backward", e.logits_fp32},
      {"logits_float.backward", "output_layer.backward", e.logits_bf16},
      {"wte.zero_grad", "wte.tied_sum", e.embedding_grad},           // tied: summed into wte.grad
  };
  // (iteration, micro-batch, layer): -1 embedding, -2 head.
  std::map<PassKey, Window> forward;
  std::map<PassKey, Window> backward;
  std::map<std::tuple<int, int, std::string>, Window> named;
  std::map<int, Window> iterations;
  for (const Span& span : out.timeline.spans) {
    if (span.rank != rank) continue;
    const workload::Task& t = out.iteration.graph[span.task];
    const workload::Work& w = out.iteration.graph.work(t);
    if (fsdp.shards > 1.0) note_fsdp2_span(t, w, span, fsdp);
    if (w.collective) continue;
    iterations[t.iteration].add(span);
    named[{t.iteration, t.microbatch, w.name}].add(span);
    // FSDP2's copies are not the unit's compute: the block is resharded and its
    // gradients are made before the chunk_cat (FSDPParamGroup.post_backward).
    if (w.name.ends_with(workload::kFsdpChunkCat) || w.name.find(workload::kFsdpCopyOut) != std::string::npos) continue;
    // Outside the layers: the embedding's ops (wte, wpe, their sum and their
    // backward) are one pass, the head's (final norm to loss) another.
    const long long key = pass_key(t);
    if (t.category == workload::Category::kForward) forward[{t.iteration, t.microbatch, key}].add(span);
    if (t.category == workload::Category::kBackward) backward[{t.iteration, t.microbatch, key}].add(span);
  }
  const auto next_step = [&](int iteration) {
    const auto it = iterations.find(iteration + 1);
    return it == iterations.end() ? std::optional<Window>{} : std::optional<Window>{it->second};
  };
  for (const auto& [key, fwd] : forward) {
    const long long l = std::get<2>(key);
    // The head holds lm_head's weight cast besides its saved tensors.
    const double head_cast = e.weight_casts - static_cast<double>(s.model.num_layers) * e.layer_casts;
    const double held = l == -1   ? e.token_ids
                        : l == -2 ? e.head_saved + head_cast
                                  : e.layer_saved + e.layer_casts;
    // The fp32 gradients a pass's backward leaves (EagerMemory).
    const double grads = l == -1 ? e.embedding_gradients : l == -2 ? e.head_gradients : 4.0 * e.block_parameters;
    changes.push_back({fwd.first_start, held, fwd.first});
    const auto bwd = backward.find(key);
    if (bwd == backward.end()) continue;
    changes.push_back({bwd->second.last_end, -held, bwd->second.last});
    changes.push_back({bwd->second.last_end, grads, bwd->second.last});
    // Under FSDP2 only the shard stays to the next step (the rest leaves with the
    // unit's reduce-scatter, below).
    if (const auto next = next_step(std::get<0>(key)))
      changes.push_back({next->first_start, -grads / fsdp.shards, next->first});
  }
  add_fsdp2_changes(out, fsdp, forward, backward, changes);
  for (const auto& [key, span] : named) {
    for (const Transient& tr : transients) {
      if (tr.bytes <= 0.0 || std::get<2>(key) != tr.allocated_at) continue;
      const auto end = named.find({std::get<0>(key), std::get<1>(key), std::string(tr.freed_after)});
      if (end == named.end()) continue;
      changes.push_back({span.first_start, tr.bytes, span.first});
      changes.push_back({end->second.last_end, -tr.bytes, end->second.last});
    }
  }
}

}  // namespace

MemoryTimeline track_memory(const config::Scenario& s, const SimulationOutput& out, int rank) {
  const auto& ranks = out.iteration.simulated_ranks;
  const auto at = std::find(ranks.begin(), ranks.end(), rank);
  if (at == ranks.end()) throw std::invalid_argument("track_memory: rank is not simulated");
  const int stage = static_cast<int>(at - ranks.begin());
  const std::vector<workload::MemoryEstimate> stages = workload::memory_per_stage(s.model, s.training, s.parallel);
  const workload::MemoryEstimate& est = stages.at(static_cast<std::size_t>(stage));

  std::vector<Change> changes;
  double states = est.weights + est.gradients + est.optimizer_states;
  if (s.training.framework == workload::Framework::kPytorchEager) {
    // Parameters, AdamW's moments and DDP's buckets all along; casts and gradients
    // come and go.
    states = est.weights - est.weight_casts + est.optimizer_states + est.workspaces + est.ddp_buckets;
    add_eager_changes(s, out, rank, changes);
  } else if (s.training.framework == workload::Framework::kTrainsimTrain) {
    // Every buffer allocated before the first step: flat (workload::memory_per_stage).
    states += est.activations;
  } else {
    add_pass_changes(s, out, rank, changes);
  }
  // Frees before allocations at the same moment (the allocator reuses the block).
  std::stable_sort(changes.begin(), changes.end(), [](const Change& x, const Change& y) {
    return x.time != y.time ? x.time < y.time : x.bytes < y.bytes;
  });

  MemoryTimeline m;
  m.rank = rank;
  m.series.name = "memory rank " + std::to_string(rank);
  double now = states;
  m.series.points.emplace_back(0, now);
  m.peak_bytes = now;
  for (const Change& c : changes) {
    now += c.bytes;
    if (m.series.points.back().first == c.time) m.series.points.back().second = now;
    else m.series.points.emplace_back(c.time, now);
    if (now > m.peak_bytes) {
      m.peak_bytes = now;
      m.peak_time = c.time;
      m.peak_task = out.iteration.graph.work(c.task).name;
    }
  }
  return m;
}

}  // namespace trainsim::exec
