// trainsim-calibrate: measures this machine's GEMMs, our kernels, memory copies,
// launch overhead and NCCL collectives, and writes a calibration profile
// (docs/calibration.md). One driver; one descriptor per kind of measurement.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "nccl_tests_import.h"
#include "profile_writer.h"
#include "io/atomic_file.h"
#include "report/utc_time.h"
#include "shape_list.h"

#ifdef TRAINSIM_CALIBRATE_WITH_CUDA
#include <cuda_runtime.h>
#include <unistd.h>

#include "gemm_bench.h"
#include "kernel_bench.h"
#include "measurement_runner.h"
#include "memory_bench.h"
#include "nccl_bench.h"
#include "trainsim/kernels/cuda_check.h"
#include "trainsim/kernels/gemm.h"
#endif
#ifdef TRAINSIM_CALIBRATE_WITH_MPI
#include <mpi.h>
#endif

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace trainsim::calibrate;
using trainsim::report::utc_now;

std::atomic<bool> g_stop{false};
extern "C" void on_signal(int) { g_stop.store(true); }

constexpr int kExitError = 1;
constexpr int kExitUsage = 2;  // bad command-line arguments
constexpr int kExitInterrupted = 130;

// Every GEMM dtype, in the order measured (an interrupted run keeps the first ones).
const std::vector<std::string> kAllDtypes{"bf16", "fp16", "fp8", "fp8_fast", "tf32", "fp32"};

struct Options {
  std::string out = "calibration.json";
  std::vector<std::string> dtypes = kAllDtypes;
  std::string fp8_scaling = "per_tensor";
  std::string shapes_file;
  std::vector<std::string> layouts{"forward"};
  std::string scenario;
  bool list_shapes = false;
  bool gemm = false, kernels = false, copies = false, launch = false, nccl = false, grid = true;
  std::string min_bytes = "8", max_bytes = "4G";
  double factor = 2;
  int iters = 20, warmup = 5, check = 1;
  std::string import_file, import_op;
  std::string command;
  bool resume = false;
};

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Adds the alpha-beta fits of every (op, scope, ranks, nodes) series in the profile.
void refit(json& profile) {
  // One fit per (op, scope, ranks, nodes) series, in order of first appearance. A series
  // that cannot be fitted (one rank moves no data; one size; flat times) is left
  // out with a note, not allowed to lose the rest of the profile.
  std::vector<std::vector<CollectiveRow>> series;
  for (const json& r : profile.value("collectives", json::array())) {
    // "nodes" absent (0): an older profile's row, or a spread the harness could not tell.
    const CollectiveRow row{r.at("op"),      r.at("scope"),      r.at("ranks"),      r.value("nodes", 0),
                            r.at("bytes"),   r.at("seconds"),    r.at("algbw_gbps"), r.at("busbw_gbps"),
                            r.value("wrong", 0LL)};
    auto same = [&](const std::vector<CollectiveRow>& s) {
      return s.front().op == row.op && s.front().scope == row.scope && s.front().ranks == row.ranks &&
             s.front().nodes == row.nodes;
    };
    const auto it = std::find_if(series.begin(), series.end(), same);
    if (it == series.end()) series.push_back({row});
    else it->push_back(row);
  }
  json fits = json::array();
  for (const std::vector<CollectiveRow>& rows : series) {
    try {
      for (const CollectiveFit& f : fit_alpha_beta(rows)) fits.push_back(to_json(f));
    } catch (const std::runtime_error& e) {
      std::fprintf(stderr, "trainsim-calibrate: no alpha-beta fit: %s\n", e.what());
    }
  }
  profile["collective_fits"] = fits;
}

int import_nccl_tests(const Options& o) {
  const std::string text = read_text(o.import_file);
  const std::optional<std::string> op = o.import_op.empty() ? std::nullopt : std::optional(o.import_op);
  const std::vector<CollectiveRow> rows = parse_nccl_tests(text, o.import_file, op);
  json profile;
  if (fs::exists(o.out)) {
    try {
      profile = json::parse(read_text(o.out));
    } catch (const json::exception& e) {
      throw std::runtime_error(o.out + ": not a JSON profile (" + e.what() + "); choose another --out");
    }
  } else {
    profile = {{"trainsim_calibration", 1}, {"complete", true}, {"date", utc_now()}, {"command", o.command},
               {"device", {{"name", "imported from nccl-tests"}}}};
  }
  for (const CollectiveRow& r : rows) profile["collectives"].push_back(to_json(r));
  refit(profile);
  trainsim::io::write_atomically(o.out, [&](std::ostream& os) { os << profile.dump(1) << '\n'; });
  const CollectiveRow& first = rows.front();
  const std::string spread = first.nodes > 0 ? std::to_string(first.nodes) + (first.nodes == 1 ? " node" : " nodes")
                                             : "nodes not known: the rows price nothing";
  std::printf("imported %zu rows of %s (%s, %d ranks, %s) from %s into %s\n", rows.size(), first.op.c_str(),
              first.scope.c_str(), first.ranks, spread.c_str(), o.import_file.c_str(), o.out.c_str());
  return 0;
}

// This process's place among MPI ranks; one rank without MPI or outside mpirun.
struct MpiPlace {
  bool launched = false;  // under mpirun/srun: collectives go through MPI, even with one rank
  int rank = 0;
  int size = 1;
};

#ifdef TRAINSIM_CALIBRATE_WITH_MPI
// MPI is started only under a launcher (mpirun, srun), so the plain command needs none.
class MpiSession {
 public:
  MpiSession(int& argc, char**& argv) {
    for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS"})
      if (std::getenv(v) != nullptr) active_ = true;
    if (!active_) return;
    MPI_Init(&argc, &argv);
    place_.launched = true;
    MPI_Comm_rank(MPI_COMM_WORLD, &place_.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &place_.size);
  }
  ~MpiSession() {
    if (active_) MPI_Finalize();
  }
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
  [[nodiscard]] MpiPlace place() const { return place_; }

 private:
  bool active_ = false;
  MpiPlace place_;
};
#endif

#ifdef TRAINSIM_CALIBRATE_WITH_CUDA
json device_header(const Options& o) {
  int device = 0, count = 0, driver = 0, runtime = 0;
  TRAINSIM_CUDA_CHECK(cudaGetDeviceCount(&count));
  TRAINSIM_CUDA_CHECK(cudaGetDevice(&device));
  cudaDeviceProp p{};
  TRAINSIM_CUDA_CHECK(cudaGetDeviceProperties(&p, device));
  TRAINSIM_CUDA_CHECK(cudaDriverGetVersion(&driver));
  TRAINSIM_CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
  // The context's own memory: cudaFree(nullptr) creates it, nothing is allocated
  // yet, so what the device has in use is the context (and any other process).
  TRAINSIM_CUDA_CHECK(cudaFree(nullptr));
  std::size_t free_bytes = 0, total_bytes = 0;
  TRAINSIM_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  auto version = [](int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); };
  return {{"date", utc_now()},
          {"command", o.command},
          {"host", host},
          {"device",
           {{"name", p.name},
            {"compute_capability", std::to_string(p.major) + "." + std::to_string(p.minor)},
            {"multiprocessors", p.multiProcessorCount},
            {"memory_bytes", p.totalGlobalMem},
            {"l2_bytes", p.l2CacheSize},
            {"count", count},
            {"context_bytes", total_bytes - free_bytes}}},
          {"versions",
           {{"driver_cuda", version(driver)},
            {"cuda_runtime", version(runtime)},
            {"cublaslt", trainsim::kernels::GemmRunner::library_version()},
            {"nccl", nccl_version()}}}};
}

int measure(Options o, MpiPlace mpi) {
  if (!o.gemm && !o.kernels && !o.copies && !o.launch && !o.nccl)
    o.gemm = o.kernels = o.copies = o.launch = o.nccl = true;
  // Under MPI every rank joins the collectives; rank 0 alone measures the rest of
  // its GPU, prints and writes the profile.
  const bool lead = mpi.rank == 0;
  if (!lead) {
    o.gemm = o.kernels = o.copies = o.launch = false;
    o.out.clear();
  }
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess || count == 0)
    throw std::runtime_error(std::string("no usable CUDA device (") +
                             (status != cudaSuccess ? cudaGetErrorString(status) : "none found") +
                             "): trainsim-calibrate measures the GPUs of the machine it runs on");
  ProfileWriter profile(o.out, device_header(o));
  std::FILE* log = lead ? stdout : std::fopen("/dev/null", "w");
  if (log == nullptr) log = stdout;
  cudaStream_t stream = nullptr;
  TRAINSIM_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  Timer timer(stream);
  // Rank 0 keeps the journal (OUT.journal) that --resume continues from.
  const fs::path journal = o.out.empty() ? fs::path() : fs::path(o.out + ".journal");
  MeasurementRunner runner(profile, journal, o.resume, FaultPlan::from_environment());
  if (runner.resumed() > 0)
    std::fprintf(log, "# resumed: %zu measurements from %s\n", runner.resumed(), journal.c_str());
  BenchContext ctx{stream, &timer, &profile, &g_stop, log, &runner};
  try {
    if (o.launch && !ctx.stopped()) bench_launch_overhead(ctx);
    if (o.copies && !ctx.stopped()) bench_copies(ctx, 4.0 * (1ull << 30));
    if (o.gemm) {
      std::vector<GemmShape> exact;
      if (!o.shapes_file.empty()) exact = read_shape_list(o.shapes_file);
      for (const std::string& d : o.dtypes) {
        if (ctx.stopped()) break;
        const auto dtype = trainsim::kernels::parse_gemm_dtype(d);
        std::set<GemmShape> shapes(exact.begin(), exact.end());
        if (o.grid)
          for (const std::string& l : o.layouts)
            for (const GemmShape& s : gemm_grid(dtype, trainsim::kernels::parse_gemm_layout(l))) shapes.insert(s);
        bench_gemms(ctx, dtype, {shapes.begin(), shapes.end()},
                    o.fp8_scaling == "none" ? trainsim::kernels::Fp8Scaling::kNone
                                            : trainsim::kernels::Fp8Scaling::kPerTensor);
      }
    }
    if (o.kernels && !ctx.stopped()) bench_kernels(ctx);
    if (o.nccl && !ctx.stopped()) {
      NcclOptions n;
      n.min_bytes = parse_bytes(o.min_bytes);
      n.max_bytes = parse_bytes(o.max_bytes);
      n.factor = o.factor;
      n.iters = o.iters;
      n.warmup = o.warmup;
      n.check = o.check != 0;
#ifdef TRAINSIM_CALIBRATE_WITH_MPI
      if (mpi.launched)
        bench_nccl_mpi(ctx, n);
      else
#endif
        bench_nccl_local(ctx, n);
      json p = profile.profile();
      refit(p);
      profile.set("collective_fits", p["collective_fits"]);
    }
  } catch (...) {
    profile.flush();  // keep what was measured
    cudaStreamDestroy(stream);
    throw;
  }
  cudaStreamDestroy(stream);
  if (ctx.stopped()) {
    profile.flush();
    std::fprintf(stderr,
                 "interrupted: %s keeps what was measured (\"complete\": false); the same command with --resume "
                 "measures the rest\n",
                 o.out.c_str());
    return kExitInterrupted;
  }
  if (log != stdout) std::fclose(log);
  if (!lead) return 0;
  profile.finish();
  runner.remove_journal();
  std::printf("wrote %s\n", o.out.c_str());
  return 0;
}
#endif

}  // namespace

int main(int argc, char** argv) {
#ifdef TRAINSIM_CALIBRATE_WITH_MPI
  MpiSession mpi_session(argc, argv);
  const MpiPlace mpi = mpi_session.place();
#else
  const MpiPlace mpi;
#endif
  Options o;
  for (int i = 0; i < argc; ++i) o.command += (i ? " " : "") + std::string(i ? argv[i] : "trainsim-calibrate");
  CLI::App app{"trainsim-calibrate: measure GEMMs, kernels, copies and NCCL collectives into a calibration profile"};
  app.add_option("-o,--out", o.out, "profile to write (JSON; written atomically as tables complete)");
  app.add_flag("--gemm", o.gemm, "cuBLASLt GEMMs over a grid of M, N, K per dtype");
  app.add_option("--dtypes", o.dtypes, "GEMM dtypes (fp32 tf32 fp16 bf16 fp8 fp8_fast)")->delimiter(',');
  app.add_option("--shapes", o.shapes_file, "exact GEMM shapes to measure too (JSON [{m, n, k[, layout]}, ...])");
  app.add_option("--layouts", o.layouts, "the grid's GEMM layouts (forward data_gradient weight_gradient)")
      ->delimiter(',')
      ->check(CLI::IsMember({"forward", "data_gradient", "weight_gradient"}));
  app.add_option("--fp8-scaling", o.fp8_scaling,
                 "FP8 GEMMs with Transformer Engine's per-tensor scale pointers (per_tensor, the default) or "
                 "without (none)")
      ->check(CLI::IsMember({"per_tensor", "none"}));
  app.add_flag("!--no-grid", o.grid, "measure only the exact shapes of --shapes / --for");
  app.add_option("--for", o.scenario, "measure the GEMM shapes this scenario needs (see `trainsim shapes`)");
  app.add_flag("--list-shapes", o.list_shapes, "with --for: write the scenario's GEMM shapes (OUT.shapes.json) "
                                              "and stop, measuring nothing (works without a GPU)");
  app.add_flag("--kernels", o.kernels, "our CUDA kernels over sizes");
  app.add_flag("--copies", o.copies, "device and host copies");
  app.add_flag("--launch", o.launch, "kernel launch overhead");
  app.add_flag("--nccl", o.nccl, "NCCL collectives over all local GPUs");
  app.add_option("-b,--minbytes", o.min_bytes, "NCCL: smallest size (nccl-tests -b)");
  app.add_option("-e,--maxbytes", o.max_bytes, "NCCL: largest size (nccl-tests -e)");
  app.add_option("-f,--stepfactor", o.factor, "NCCL: size factor (nccl-tests -f)")->check(CLI::Range(1.01, 1e9));
  app.add_option("-n,--iters", o.iters, "NCCL: timed iterations (nccl-tests -n)")->check(CLI::Range(1, 100000));
  app.add_option("-w,--warmup_iters", o.warmup, "NCCL: warm-up iterations (nccl-tests -w)")
      ->check(CLI::Range(0, 100000));
  app.add_option("-c,--check", o.check, "NCCL: check results (nccl-tests -c)");
  app.add_option("--import-nccl-tests", o.import_file, "turn an nccl-tests output file (text or -J JSON) into "
                                                       "profile rows, added to --out");
  app.add_option("--op", o.import_op, "collective of the imported file, when its name does not say");
  app.add_flag("--resume", o.resume,
               "continue the run --out's journal (OUT.journal) recorded, after Ctrl-C or a crash: its measurements "
               "are kept, not measured again");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help ends here too, with 0; a bad argument is a usage error, 2, as for trainsim.
    return app.exit(e) == 0 ? 0 : kExitUsage;
  }
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  try {
    if (!o.import_file.empty()) return import_nccl_tests(o);
    if (o.list_shapes && o.scenario.empty()) throw std::invalid_argument("--list-shapes needs --for SCENARIO");
    if (!o.scenario.empty()) {
      o.shapes_file = write_scenario_shapes(o.scenario, o.out);
      if (o.list_shapes) return 0;
      if (o.dtypes == kAllDtypes) {
        // An fp8 recipe runs both: fast accumulation forward, promoted backward (gemm.h).
        o.dtypes = {scenario_gemm_dtype(o.scenario)};
        if (o.dtypes.front() == "fp8") o.dtypes.emplace_back("fp8_fast");
      }
    }
#ifdef TRAINSIM_CALIBRATE_WITH_CUDA
    return measure(o, mpi);
#else
    (void)mpi;
    std::fprintf(stderr, "trainsim-calibrate: this build has no CUDA part (the CUDA Toolkit was not found), so it "
                         "can only --import-nccl-tests\n");
    return kExitError;
#endif
  } catch (const std::exception& e) {
    std::fprintf(stderr, "trainsim-calibrate: %s\n", e.what());
    return kExitError;
  }
}
