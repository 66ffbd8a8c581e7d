// trainsim-train: trains the GPT-2-style model of gpt_model.h on a byte-level corpus over
// every local GPU (one data-parallel rank per GPU, driven from one host thread; NCCL
// all-reduce of gradient buckets on a separate stream per GPU, each bucket launched as
// soon as the last micro-batch's backward has produced it), and writes RUN.json and its
// timeline (docs/validation.md "Running trainsim-train"). Built with MPI and started by
// mpirun with more than one process, each process is one rank on one GPU (its local rank
// on its node) and rank 0 broadcasts the NCCL unique id; rank 0 prints and writes files.
#include <cublasLt.h>
#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "buckets.h"
#include "checkpoint.h"
#include "corpus.h"
#include "gpt_model.h"
#include "options.h"
#include "report/utc_time.h"
#include "run_file.h"
#include "trainsim/kernels/cuda_check.h"

#ifdef TRAINSIM_TRAIN_WITH_MPI
#include <mpi.h>
#endif

namespace {

using namespace trainsim;
using trainer::GpuModel;

void check_nccl(ncclResult_t r, const char* what, const char* file, int line) {
  if (r != ncclSuccess) kernels::throw_cuda_error(what, ncclGetErrorString(r), file, line);
}
#define TRAINER_NCCL_CHECK(call) check_nccl((call), #call, __FILE__, __LINE__)

std::string version_text(int v, int major_div, int minor_div) {
  return std::to_string(v / major_div) + "." + std::to_string((v % major_div) / minor_div);
}

trainer::DeviceInfo device_info(int count) {
  trainer::DeviceInfo d;
  cudaDeviceProp prop{};
  TRAINSIM_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  d.name = prop.name;
  d.count = count;
  d.nodes = 1;
  int driver = 0, runtime = 0, nccl = 0;
  TRAINSIM_CUDA_CHECK(cudaDriverGetVersion(&driver));
  TRAINSIM_CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
  d.driver = "CUDA driver API " + version_text(driver, 1000, 10);
  d.cuda = version_text(runtime, 1000, 10);
  const std::size_t lt = cublasLtGetVersion();  // major*10000 + minor*100 + patch
  d.cublas = std::to_string(lt / 10000) + "." + std::to_string((lt % 10000) / 100) + "." + std::to_string(lt % 100);
  TRAINER_NCCL_CHECK(ncclGetVersion(&nccl));
  d.nccl = std::to_string(nccl / 10000) + "." + std::to_string((nccl % 10000) / 100) + "." + std::to_string(nccl % 100);
  return d;
}

// Device memory in use on the current device (total - free: our buffers, the CUDA context,
// cuBLAS and NCCL internals, and anything else on the GPU).
double used_device_bytes() {
  std::size_t free_b = 0, total_b = 0;
  TRAINSIM_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  return static_cast<double>(total_b - free_b);
}

struct Trainer {
  trainer::TrainOptions o;
  kernels::ref::GptConfig cfg;
  kernels::ref::GptLayout layout;
  trainer::Corpus corpus;
  std::vector<std::unique_ptr<GpuModel>> ranks;
  std::vector<ncclComm_t> comms;
  std::vector<trainer::GradBucket> buckets;
  int R = 1;           // ranks (GPUs) this process drives
  int world = 1;       // data-parallel ranks in all
  int first_rank = 0;  // global index of ranks[0]
  int gpus_per_node = 1;
  bool mpi = false;  // one process per GPU under MPI
  bool root = true;  // global rank 0: prints, evaluates, writes

  Trainer(const trainer::TrainOptions& opts)
      : o(opts),
        cfg(opts.model()),
        layout(kernels::ref::gpt_layout(cfg)),
        corpus(opts.data, opts.held_out_fraction, opts.seq) {}

  [[nodiscard]] std::size_t tokens_per_micro() const {
    return static_cast<std::size_t>(o.micro_batch) * static_cast<std::size_t>(o.seq);
  }

  // All-reduce (sum) of one bucket on every rank's comm stream once the rank's compute
  // stream has produced it.
  void launch_bucket(const trainer::GradBucket& b) {
    std::vector<int> ops(ranks.size());
    for (std::size_t r = 0; r < ranks.size(); ++r) {
      GpuModel& g = *ranks[r];
      g.make_current();
      TRAINSIM_CUDA_CHECK(cudaStreamWaitEvent(g.comm(), g.recorder().marker(g.compute()), 0));
      const std::string name = b.ready_after_layer >= 0 ? "grad_bucket.layer" + std::to_string(b.ready_after_layer)
                                                        : std::string("grad_bucket.embedding");
      ops[r] =
          g.recorder().begin(g.comm(), trainer::kTimelineOnly, "dp_comm", "all_reduce", name, -1, b.ready_after_layer);
    }
    TRAINER_NCCL_CHECK(ncclGroupStart());
    for (std::size_t r = 0; r < ranks.size(); ++r) {
      float* g = ranks[r]->grads() + b.begin;
      TRAINER_NCCL_CHECK(ncclAllReduce(g, g, b.end - b.begin, ncclFloat, ncclSum, comms[r], ranks[r]->comm()));
    }
    TRAINER_NCCL_CHECK(ncclGroupEnd());
    for (std::size_t r = 0; r < ranks.size(); ++r) {
      ranks[r]->make_current();
      ranks[r]->recorder().end(ops[r], ranks[r]->comm());
    }
  }

  // One optimizer step; returns the mean loss over every rank and micro-batch.
  double step(int s, bool record) {
    const int A = o.grad_accum;
    const float scale = 1.0f / static_cast<float>(tokens_per_micro() * static_cast<std::size_t>(A * world));
    std::vector<int> tokens(tokens_per_micro()), targets(tokens_per_micro());
    for (auto& g : ranks) {
      g->make_current();
      g->recorder().set_enabled(record);
      g->recorder().begin_step(g->compute());
      g->zero_grads();
    }
    for (int a = 0; a < A; ++a) {
      const bool last = a == A - 1;
      for (std::size_t r = 0; r < ranks.size(); ++r) {
        corpus.train_batch(o.seed, s, a, first_rank + static_cast<int>(r), o.micro_batch, tokens, targets);
        ranks[r]->upload_batch(a, tokens, targets);
        ranks[r]->forward(a, scale);
      }
      for (auto& g : ranks) g->backward_head(a);
      for (int l = cfg.layers - 1; l >= 0; --l) {
        for (auto& g : ranks) g->backward_layer(a, l);
        if (last && world > 1)
          for (const auto& b : buckets)
            if (b.ready_after_layer == l) launch_bucket(b);
      }
      for (auto& g : ranks) g->backward_embedding(a);
      if (last && world > 1) launch_bucket(buckets.back());
    }
    const auto lr = static_cast<float>(trainer::learning_rate(o, s));
    for (auto& g : ranks) {
      g->make_current();
      if (world > 1) {  // the exposed part of the gradient all-reduce
        const int id = g->recorder().begin(g->compute(), trainer::kernel_class_index("all_reduce"), "compute",
                                           "all_reduce", "grad_sync_wait", -1, -1);
        TRAINSIM_CUDA_CHECK(cudaStreamWaitEvent(g->compute(), g->recorder().marker(g->comm()), 0));
        g->recorder().end(id, g->compute());
      }
      g->optimizer_step(lr, s + 1, static_cast<float>(o.beta1), static_cast<float>(o.beta2), static_cast<float>(o.eps),
                        static_cast<float>(o.weight_decay));
      g->recorder().end_step(g->compute());
    }
    double loss = 0.0;
    for (auto& g : ranks)
      for (int a = 0; a < A; ++a)
        for (const float x : g->download_losses(a)) loss += static_cast<double>(x);
#ifdef TRAINSIM_TRAIN_WITH_MPI
    if (mpi) MPI_Allreduce(MPI_IN_PLACE, &loss, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
#endif
    return loss / static_cast<double>(tokens_per_micro() * static_cast<std::size_t>(A * world));
  }

  // Mean held-out loss over eval_batches micro-batches of windows (rank 0), and its tokens.
  std::pair<double, long long> evaluate() {
    GpuModel& g = *ranks[0];
    g.recorder().set_enabled(false);
    const std::size_t windows = corpus.held_out_windows();
    const std::size_t batches = std::min<std::size_t>(static_cast<std::size_t>(o.eval_batches),
                                                      windows / static_cast<std::size_t>(o.micro_batch));
    if (batches == 0)
      throw std::runtime_error(o.data + ": the held-out split has " + std::to_string(windows) +
                               " windows, fewer than one micro-batch of " + std::to_string(o.micro_batch));
    std::vector<int> tokens(tokens_per_micro()), targets(tokens_per_micro());
    double sum = 0.0;
    for (std::size_t i = 0; i < batches; ++i) {
      corpus.held_out_batch(i * static_cast<std::size_t>(o.micro_batch), o.micro_batch, tokens, targets);
      g.upload_batch(0, tokens, targets);
      g.forward(0, 0.0f);
      for (const float x : g.download_losses(0)) sum += static_cast<double>(x);
    }
    const auto n = static_cast<long long>(batches * tokens_per_micro());
    return {sum / static_cast<double>(n), n};
  }

  void save(int next_step) {
    trainer::CheckpointState st;
    st.model = cfg;
    st.next_step = next_step;
    st.seed = o.seed;
    ranks[0]->download_state(st.params, st.m, st.v);
    trainer::save_checkpoint(o.checkpoint, st);
    std::printf("checkpoint %s (next step %d)\n", o.checkpoint.c_str(), next_step);
  }

  // Local GPUs and NCCL communicators: one process over every local GPU, or (MPI, more
  // than one process) one GPU per process. Returns the CUDA context's bytes on GPU 0.
  double setup_devices() {
    int devices = 0;
    TRAINSIM_CUDA_CHECK(cudaGetDeviceCount(&devices));
    if (devices == 0) throw std::runtime_error("no CUDA device");
    int device0 = 0;
#ifdef TRAINSIM_TRAIN_WITH_MPI
    int size = 1, rank = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (size > 1) {
      MPI_Comm node;
      MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
      int local = 0, local_size = 1;
      MPI_Comm_rank(node, &local);
      MPI_Comm_size(node, &local_size);
      MPI_Comm_free(&node);
      if (local_size > devices)
        throw std::runtime_error(std::to_string(local_size) + " processes on a node with " + std::to_string(devices) +
                                 " GPUs (one GPU per process)");
      mpi = true;
      world = size;
      first_rank = rank;
      root = rank == 0;
      gpus_per_node = local_size;
      device0 = local;
    }
#endif
    if (!mpi) {
      if (o.gpus > devices)
        throw std::invalid_argument("--gpus: " + std::to_string(o.gpus) + " requested, " + std::to_string(devices) +
                                    " present");
      R = o.gpus > 0 ? o.gpus : devices;
      world = R;
      gpus_per_node = R;
    }
    TRAINSIM_CUDA_CHECK(cudaSetDevice(device0));
    TRAINSIM_CUDA_CHECK(cudaFree(nullptr));  // create the context
    const double context_bytes = used_device_bytes();
    for (int r = 0; r < R; ++r)
      ranks.push_back(std::make_unique<GpuModel>(cfg, o.micro_batch, o.grad_accum, device0 + r, first_rank + r));
    if (world > 1) {
      comms.resize(static_cast<std::size_t>(R));
      if (!mpi) {
        std::vector<int> devs(static_cast<std::size_t>(R));
        for (int r = 0; r < R; ++r) devs[static_cast<std::size_t>(r)] = r;
        TRAINER_NCCL_CHECK(ncclCommInitAll(comms.data(), R, devs.data()));
      }
#ifdef TRAINSIM_TRAIN_WITH_MPI
      if (mpi) {
        ncclUniqueId id;
        if (root) TRAINER_NCCL_CHECK(ncclGetUniqueId(&id));
        MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
        ranks[0]->make_current();
        TRAINER_NCCL_CHECK(ncclCommInitRank(&comms[0], world, id, first_rank));
      }
#endif
    }
    return context_bytes;
  }

  int run() {
    const double context_bytes = setup_devices();
    buckets = trainer::plan_buckets(layout, static_cast<std::size_t>(o.bucket_mb * 1048576.0 / sizeof(float)));

    int first_step = 0;
    std::vector<float> master, m, v;
    if (!o.resume) {
      master = kernels::ref::gpt_init(cfg, o.seed);
      m.assign(layout.total, 0.0f);
      v.assign(layout.total, 0.0f);
    } else {
      trainer::CheckpointState st = trainer::load_checkpoint(o.checkpoint, cfg);
      master = std::move(st.params);
      m = std::move(st.m);
      v = std::move(st.v);
      first_step = st.next_step;
      // Batches are a function of the seed: another seed would silently train the resumed
      // steps on other data than the uninterrupted run.
      if (st.seed != o.seed)
        throw std::runtime_error(o.checkpoint + ": written with --seed " + std::to_string(st.seed) +
                                 ", this run has --seed " + std::to_string(o.seed));
      std::printf("resumed from %s at step %d\n", o.checkpoint.c_str(), first_step);
    }
    for (auto& g : ranks) g->load_state(master, m, v);
    master = {};  // the host copies (3 x 4 bytes per parameter) are not needed any more
    m = {};
    v = {};

    trainer::MeasuredRun run;
    run.date = report::utc_now();
    run.options = o;
    // Warm-up counts from the first step this process runs: a resumed run's first steps
    // (cuBLASLt heuristics, event pool, caches) are as cold as a fresh run's. RUN.json's
    // warmup_steps is the first timed step index.
    const int first_timed = first_step + o.warmup_steps;
    run.options.warmup_steps = first_timed;
    run.device = device_info(world);
    run.device.nodes = world / gpus_per_node;
    run.data_parallel = world;
    run.gpus_per_node = gpus_per_node;
    if (root)
      std::printf(
          "trainsim-train: %zu parameters (vocab %d padded to %d), %d GPU(s), %zu gradient bucket(s), "
          "%zu tokens/step; corpus %zu train + %zu held-out bytes\n",
          layout.total, cfg.vocab, cfg.padded_vocab, world, buckets.size(),
          tokens_per_micro() * static_cast<std::size_t>(o.grad_accum * world), corpus.train_bytes(),
          corpus.held_out_bytes());
    double peak = 0.0;
    int timed = 0;
    const int end = o.stop_at > 0 ? o.stop_at : o.steps;
    // Up front, not after the last step: a run with nothing to do or no held-out batch would
    // otherwise train to the end and then fail without writing RUN.json.
    if (first_step >= end)
      throw std::invalid_argument("--resume: the checkpoint is at step " + std::to_string(first_step) +
                                  ", nothing is left before step " + std::to_string(end) + " (--steps/--stop-at)");
    if (root && corpus.held_out_windows() < static_cast<std::size_t>(o.micro_batch))
      throw std::invalid_argument(o.data + ": the held-out split has " + std::to_string(corpus.held_out_windows()) +
                                  " windows of seq + 1 bytes, fewer than one micro-batch of " +
                                  std::to_string(o.micro_batch) + " (--held-out, --seq, --micro-batch)");
    for (int s = first_step; s < end; ++s) {
      const bool is_last = s == end - 1;
      const double loss = step(s, true);
      ranks[0]->make_current();  // step() leaves the last rank's device current
      const double t = ranks[0]->recorder().step_seconds();
      run.steps.push_back(
          {s, t, loss, static_cast<long long>(tokens_per_micro() * static_cast<std::size_t>(o.grad_accum * world))});
      if (s >= first_timed) {
        ranks[0]->recorder().add_class_seconds(run.kernel_class_s);
        ++timed;
      }
      if (is_last && o.timeline)
        for (auto& g : ranks) {
          g->make_current();
          g->recorder().append_spans(run.spans, s);
        }
      ranks[0]->make_current();
      peak = std::max(peak, used_device_bytes());
      if (root)
        std::printf("step %d  loss %.4f  time %.2f ms  lr %.3g\n", s, loss, t * 1e3, trainer::learning_rate(o, s));
      if (!std::isfinite(loss)) throw std::runtime_error("loss is not finite at step " + std::to_string(s));
      if (root && o.eval_interval > 0 && (s + 1) % o.eval_interval == 0 && !is_last) {
        const auto [held, n] = evaluate();
        std::printf("step %d  held-out loss %.4f over %lld tokens\n", s, held, n);
      }
      if (root && !o.checkpoint.empty() && o.checkpoint_interval > 0 && (s + 1) % o.checkpoint_interval == 0 &&
          !is_last)
        save(s + 1);
    }
    if (timed > 0)
      for (double& c : run.kernel_class_s) c /= timed;
    if (!root) {
      for (ncclComm_t c : comms) ncclCommDestroy(c);
      return 0;
    }
    const auto [held, n] = evaluate();
    run.held_out_loss = held;
    run.held_out_tokens = n;
    std::printf("held-out loss %.4f over %lld tokens\n", held, n);
    if (!o.checkpoint.empty()) save(std::max(end, first_step));
    run.peak_memory_bytes = peak;
    std::size_t ours = ranks[0]->allocated_bytes();
    run.peak_memory_source =
        "cudaMemGetInfo (total - free) on GPU 0 after each step, maximum over the run: the "
        "trainer's buffers (" +
        std::to_string(ours) +
        " bytes, allocated once up front), the "
        "CUDA context (" +
        std::to_string(static_cast<long long>(context_bytes)) +
        " bytes before any allocation), cuBLAS/cuBLASLt and NCCL internals";
    trainer::write_measured_run(o.out, run);
    std::printf("wrote %s\n", o.out.c_str());
    for (ncclComm_t c : comms) ncclCommDestroy(c);
    return 0;
  }
};

}  // namespace

int main(int argc, char** argv) {
#ifdef TRAINSIM_TRAIN_WITH_MPI
  MPI_Init(&argc, &argv);
  int code = 0;
  try {
    trainer::TrainOptions o;
    if (trainer::parse_options(argc, argv, o)) {
      Trainer t(o);
      code = t.run();
    }
  } catch (const trainer::UsageError& e) {
    std::cerr << "trainsim-train: " << e.what() << " (--help lists the options)\n";
    code = 2;
  } catch (const std::exception& e) {
    std::cerr << "trainsim-train: " << e.what() << "\n";
    int size = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size > 1) MPI_Abort(MPI_COMM_WORLD, 1);  // the other ranks would wait in NCCL forever
    code = 1;
  }
  MPI_Finalize();
  return code;
#else
  try {
    trainer::TrainOptions o;
    if (!trainer::parse_options(argc, argv, o)) return 0;
    Trainer t(o);
    return t.run();
  } catch (const trainer::UsageError& e) {
    std::cerr << "trainsim-train: " << e.what() << " (--help lists the options)\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "trainsim-train: " << e.what() << "\n";
    return 1;
  }
#endif
}
