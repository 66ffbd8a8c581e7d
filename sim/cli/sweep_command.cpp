#include "cli/sweep_command.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <fmt/format.h>
#include <iostream>
#include <limits>
#include <optional>
#include <span>
#include <unistd.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "cli/interrupt.h"
#include "cli/progress_bar.h"
#include "cli/sweep_journal.h"
#include "core/parallel.h"
#include "execution/full_run.h"
#include "execution/simulate.h"
#include "io/atomic_file.h"
#include "report/metrics.h"
#include "report/rank_list.h"
#include "report/result_json.h"
#include "report/timeline_writer.h"
#include "scenario/json_document.h"
#include "scenario/sweep_spec_reader.h"
#include "sweep/evaluate.h"
#include "sweep/outcome.h"
#include "sweep/reliability.h"
#include "sweep/space.h"
#ifdef TRAINSIM_WITH_MPI
#include "cli/mpi_farm.h"
#endif

namespace trainsim::cli {

namespace {

namespace fs = std::filesystem;

// A sweep builds and frees a task graph per point, the large ones hundreds of
// MB. glibc serves blocks over its mmap threshold (32 MB at most) with fresh
// pages that fault in on every point and go back to the kernel when freed;
// keeping them on the heap saves that system time (docs/sweep.md, "Speed": 4%
// of the CPU time of the 1.7B benchmark). Results do not change.
void keep_freed_memory() {
#if defined(__GLIBC__)
  mallopt(M_MMAP_MAX, 0);
  mallopt(M_TRIM_THRESHOLD, std::numeric_limits<int>::max());
#endif
}

// The top points re-simulated in full: result, timeline and trace files.
void write_top(const config::SweepSpec& spec, const sweep::Outcome& o, int top, const fs::path& dir) {
  if (top <= 0 || o.ranking.empty()) return;
  fs::create_directories(dir);
  for (std::size_t k = 0; k < o.ranking.size() && k < static_cast<std::size_t>(top); ++k) {
    const sweep::Point& p = o.points[o.ranking[k]];
    const config::Scenario s = sweep::scenario_of(spec, p);
    const exec::SimulationOutput out = exec::simulate(s);
    report::Metrics m = report::compute_metrics(s, out);
    // Under failures, the result file has the replay's keys, as `trainsim run` writes them.
    if (s.failures && o.results[o.ranking[k]].reliability)
      report::add_reliability(m, exec::simulate_full_run(s, out));
    const std::string stem = fmt::format("{:02d}-point{}", k + 1, p.id);
    report::write_timeline(dir / (stem + ".timeline.json"), s, out);
    report::write_result(dir / (stem + ".json"), report::result_json(s, m, stem + ".timeline.json"));
    report::write_trace(dir / (stem + ".trace.json"), s, out,
                        report::default_trace_ranks(s.cluster.num_gpus(), s.cluster.gpus_per_node));
  }
}

void write_text(const fs::path& path, const std::string& text) {
  io::write_atomically(path, [&](std::ostream& out) { out << text; });
}


template <class Options>
void write_plan(const config::SweepSpec& spec, const sweep::Outcome& outcome, const Options& o) {
  if (!o.quiet) std::cout << sweep::plan_table(spec, outcome) << std::flush;
  if (o.out.empty()) return;
  write_text(o.out, sweep::plan_json(spec, outcome).dump(2) + "\n");
  if (!o.quiet) std::cout << fmt::format("\nwrote {}\n", o.out);
}

// points.csv, sweep.json and (a run that finished) the --top files in `dir`.
template <class Options>
void write_sweep(const config::SweepSpec& spec, const sweep::Outcome& outcome, const Options& o, const fs::path& dir) {
  fs::create_directories(dir);
  write_text(dir / "points.csv", sweep::points_csv(spec, outcome));
  write_text(dir / "sweep.json", sweep::sweep_json(spec, outcome).dump(2) + "\n");
  const bool top = o.top > 0 && !outcome.partial;
  if (top) write_top(spec, outcome, o.top, dir / "top");
  if (o.quiet) return;
  std::cout << sweep::sweep_table(spec, outcome, static_cast<std::size_t>(o.show));
  std::cout << fmt::format("\nwrote {}/points.csv and {}/sweep.json{}\n", dir.string(), dir.string(),
                           top ? fmt::format(" and the best {} in {}/top", o.top, dir.string()) : "")
            << std::flush;
}

// DIR/journal.jsonl for a sweep; PLAN.json.journal (SPEC-name.plan.journal without --out) for a plan.
template <class Options>
fs::path journal_file(const Options& o, bool planning, const fs::path& dir) {
  if (!planning) return dir / "journal.jsonl";
  return fs::path((o.out.empty() ? fs::path(o.spec).stem().string() + ".plan" : o.out) + ".journal");
}

// How the points are computed: by this process's threads, or by the MPI farm
// (rank 0's side). `finished(i)` follows each point's result in `results`, from
// any thread but one call at a time per point; `stop()` asks for no new work.
struct PointRunner {
  using Finished = std::function<void(std::size_t)>;
  std::function<void(std::span<const std::size_t> todo, std::vector<sweep::PointResult>& results,
                     const Finished& finished, const std::function<bool()>& stop)>
      evaluate;
  // The full-run replays of `selection` under failures, into their results.
  std::function<void(std::span<const std::size_t> selection, std::vector<sweep::PointResult>& results,
                     const Finished& finished, const std::function<bool()>& stop)>
      replay;
};

PointRunner local_runner(const config::SweepSpec& spec, std::span<const sweep::Point> points, int jobs,
                         int replay_threads, const std::function<void(std::size_t)>& progress) {
  return {[=, &spec](std::span<const std::size_t> todo, std::vector<sweep::PointResult>& results,
                     const PointRunner::Finished& finished, const std::function<bool()>& stop) {
            sweep::evaluate_listed(spec, points, todo, jobs, results, finished, progress, stop);
          },
          [=, &spec](std::span<const std::size_t> selection, std::vector<sweep::PointResult>& results,
                     const PointRunner::Finished& finished, const std::function<bool()>& stop) {
            sweep::replay_points(spec, points, results, selection, replay_threads, {}, finished, stop);
          }};
}

#ifdef TRAINSIM_WITH_MPI
PointRunner farm_runner(sweep::mpi::Dispatcher& farm, const std::function<void(std::size_t)>& progress) {
  return {[&farm, progress](std::span<const std::size_t> todo, std::vector<sweep::PointResult>& results,
                            const PointRunner::Finished& finished, const std::function<bool()>& stop) {
            farm.run(
                sweep::mpi::Phase::kEvaluate, todo,
                [&](std::size_t i, sweep::PointResult&& r) {
                  results[i] = std::move(r);
                  finished(i);
                },
                stop, progress);
          },
          [&farm](std::span<const std::size_t> selection, std::vector<sweep::PointResult>& results,
                  const PointRunner::Finished& finished, const std::function<bool()>& stop) {
            // Only the replay's fields travel back.
            farm.run(
                sweep::mpi::Phase::kReplay, selection,
                [&](std::size_t i, sweep::PointResult&& r) {
                  results[i].reliability = std::move(r.reliability);
                  results[i].replay_error = std::move(r.replay_error);
                  finished(i);
                },
                stop);
          }};
}
#endif

// The results of a run with a journal: the points an earlier run recorded are
// taken from it, the others evaluated (and, under failures, the best replayed)
// and recorded as they finish, until done or interrupted (InterruptGuard).
struct Journaled {
  std::vector<sweep::PointResult> results;
  std::size_t resumed = 0;  // points taken from the journal
  // Interrupted during the evaluation: the candidates and results evaluated,
  // in id order; during the replays: every point, and how many were replayed.
  std::optional<sweep::Outcome::Partial> partial;
  std::vector<sweep::Point> candidates;
};

// Why a run stopped early: the signal that came, else --stop-after.
std::string stop_reason(long long stop_after) {
  const int signal = InterruptGuard::signal();
  return signal != 0 ? InterruptGuard::name(signal) : fmt::format("--stop-after {}", stop_after);
}

Journaled run_journaled(const config::SweepSpec& spec, const sweep::Enumeration& e, SweepJournal& journal,
                        const PointRunner& runner, long long stop_after,
                        const std::function<void(std::size_t)>& announce_replays) {
  const std::size_t n = e.candidates.size();
  Journaled out;
  out.results.resize(n);
  const std::vector<std::size_t> todo = journal.restore_evaluated(out.results);
  out.resumed = n - todo.size();
  std::vector<std::uint8_t> done(n, 1);  // each slot written by the one thread that evaluates it
  for (const std::size_t i : todo) done[i] = 0;
  // Points finished by this run: --stop-after counts them.
  std::atomic<long long> finished{0};
  const auto stop = [&] { return InterruptGuard::signal() != 0 || (stop_after > 0 && finished.load() >= stop_after); };
  runner.evaluate(
      todo, out.results,
      [&](std::size_t i) {
        journal.record(sweep::JournalStage::kEvaluate, i, out.results[i]);
        done[i] = 1;
        ++finished;
      },
      stop);
  const auto points_done = static_cast<std::size_t>(std::count(done.begin(), done.end(), 1));
  if (points_done < n) {
    out.partial = sweep::Outcome::Partial{points_done, n, 0, 0, stop_reason(stop_after)};
    std::vector<sweep::PointResult> results;
    for (std::size_t i = 0; i < n; ++i)
      if (done[i] != 0) {
        out.candidates.push_back(e.candidates[i]);
        results.push_back(std::move(out.results[i]));
      }
    out.results = std::move(results);
    return out;
  }
  const std::vector<std::size_t> replay = sweep::replay_selection(spec, e.candidates, out.results);
  const std::vector<std::size_t> to_replay = journal.restore_replayed(replay, out.results);
  announce_replays(to_replay.size());
  std::atomic<std::size_t> replayed = replay.size() - to_replay.size();
  runner.replay(
      to_replay, out.results,
      [&](std::size_t i) {
        journal.record(sweep::JournalStage::kReplay, i, out.results[i]);
        ++replayed;
        ++finished;
      },
      stop);
  if (replayed < replay.size())
    out.partial = sweep::Outcome::Partial{n, n, replayed, replay.size(), stop_reason(stop_after)};
  return out;
}

// The sweep's or plan's files from a run that finished or was stopped, and the
// exit status: 0, or after a stop the signal's status (kExitPartial without one),
// the journal kept for --resume.
template <class Options>
int write_outcome(const config::SweepSpec& spec, sweep::Enumeration e, Journaled run, const Options& o, bool planning,
                  const fs::path& dir, SweepJournal& journal) {
  std::vector<sweep::PointResult> results = std::move(run.results);
  const std::optional<sweep::Outcome::Partial> partial = std::move(run.partial);
  if (partial && partial->points_done < partial->points_total) e.candidates = std::move(run.candidates);
  sweep::Outcome outcome = sweep::summarize(spec, std::move(e), std::move(results));
  outcome.partial = partial;
  if (planning) {
    write_plan(spec, outcome, o);
  } else {
    write_sweep(spec, outcome, o, dir);
  }
  if (partial) {
    std::cerr << fmt::format("stopped by {}: the outputs cover what was done; {} keeps it, and the same command "
                             "with --resume finishes the run\n",
                             partial->stopped_by, journal.path().string());
    const int signal = InterruptGuard::signal();
    return signal != 0 ? InterruptGuard::exit_status(signal) : kExitPartial;
  }
  journal.remove();
  return 0;
}

}  // namespace

SweepCommands::SweepCommands(CLI::App& app) {
  sweep_ = app.add_subcommand("sweep", "Search a space of parallel layouts on one or more clusters (docs/sweep.md)");
  sweep_->add_option("spec", sweep_options_.spec, "Sweep spec JSON file")->required();
  sweep_->add_option("--out", sweep_options_.out,
                     "Folder for points.csv, sweep.json and top/ (default: SPEC's name + .sweep, here)");
  sweep_->add_option("--top", sweep_options_.top, "Re-simulate the best K points: result, timeline and trace files")
      ->check(CLI::Range(0, 1000));
  sweep_->add_option("--rank-by", sweep_options_.rank_by, "time (time-to-train) or cost (overrides the spec)")
      ->check(CLI::IsMember({"time", "cost"}));
  sweep_->add_option("--show", sweep_options_.show, "Rows of the ranked table")->check(CLI::Range(0, 100000));
  plan_ = app.add_subcommand("plan", "Best layout, time-to-train, cost, energy and bottleneck per cluster option");
  plan_->add_option("spec", plan_options_.spec, "Sweep spec JSON file")->required();
  plan_->add_option("--out", plan_options_.out, "Write the plan as JSON here");
  plan_->add_option("--rank-by", plan_options_.rank_by, "time (time-to-train) or cost (overrides the spec)")
      ->check(CLI::IsMember({"time", "cost"}));
  for (auto [cmd, o] : {std::pair{sweep_, &sweep_options_}, std::pair{plan_, &plan_options_}}) {
    cmd->add_option("--jobs,-j", o->jobs, "Threads (default: every core; under MPI 1 per rank)")
        ->check(CLI::Range(1, 4096));
    cmd->add_flag("--quiet,-q", o->quiet, "Print nothing but errors");
    cmd->add_option("--stop-after", o->stop_after,
                    "Stop as Ctrl-C would once this run has finished N points (for time-limited batch jobs): partial "
                    "outputs, exit status 3, --resume goes on")
        ->check(CLI::Range(1LL, 1LL << 62));
    cmd->add_flag("--resume", o->resume,
                  "Continue the run this command's journal recorded (after Ctrl-C, SIGTERM or a crash), instead of "
                  "starting over");
  }
}

bool SweepCommands::parsed() const { return sweep_->parsed() || plan_->parsed(); }

int SweepCommands::run(int* argc, char*** argv) {
  keep_freed_memory();
  const bool planning = plan_->parsed();
  const Options& o = planning ? plan_options_ : sweep_options_;
  int rank = 0;
  int jobs = core::threads_or_every_core(o.jobs);
#ifdef TRAINSIM_WITH_MPI
  std::optional<sweep::mpi::Session> session;
  if (sweep::mpi::launched_by_mpi()) {
    session.emplace(argc, argv);
    rank = session->rank();
    if (o.jobs == 0 && session->size() > 1) jobs = 1;
  }
#else
  (void)argc;
  (void)argv;
#endif
  const auto run_points = [&]() -> int {
    try {
      // Read once: the spec's text is parsed and keys the journal.
      const std::string spec_text = scenario::read_document_file(o.spec, "sweep spec");
      config::SweepSpec spec = scenario::parse_sweep_spec(spec_text, o.spec);
      if (o.rank_by == "cost") spec.objective = config::Objective::kCost;
      if (o.rank_by == "time") spec.objective = config::Objective::kTimeToTrain;
      sweep::Enumeration e = sweep::enumerate(spec);
      const std::size_t n = e.candidates.size();
      cli::ProgressBar bar(rank == 0 && !o.quiet);
      std::size_t resumed = 0;  // points the journal had: the bar counts them as done
      const auto progress = [&](std::size_t done) {
        done += resumed;
        const double fraction = n > 0 ? static_cast<double>(done) / static_cast<double>(n) : 1.0;
        const double elapsed = bar.elapsed_s();
        bar.update(fraction, fmt::format("{}/{} points {:3.0f}%  {:.0f} points/s", done, n, 100.0 * fraction,
                                         elapsed > 0 ? static_cast<double>(done - resumed) / elapsed : 0.0));
      };
      // Under failures, the best points of each cluster option are then replayed,
      // on every core (the Monte Carlo does not depend on the thread count).
      const int replay_threads = core::threads_or_every_core(o.jobs);
      const auto announce_replays = [&](std::size_t count) {
        if (count > 0 && !o.quiet && isatty(fileno(stderr)) != 0)
          std::cerr << fmt::format("replaying the best {} points under failures\n", count);
      };
      const fs::path dir = o.out.empty() ? fs::path(fs::path(o.spec).stem().string() + ".sweep") : fs::path(o.out);
      if (!planning && rank == 0) fs::create_directories(dir);
      std::optional<SweepJournal> journal;
      if (rank == 0) {
        journal.emplace(journal_file(o, planning, dir), sweep::journal_key(spec_text, spec.objective), o.resume, n);
        if (journal->replaced_earlier() && !o.quiet)
          std::cerr << fmt::format("note: starting over; {} held an earlier run (--resume continues one)\n",
                                   journal->path().string());
      }
      // Every rank keeps working through a first SIGINT/SIGTERM (a launcher signals
      // them all); rank 0 stops handing out work, and the outputs cover what is done.
      const InterruptGuard guard;
      Journaled run;
  #ifdef TRAINSIM_WITH_MPI
      if (session) {
        const sweep::mpi::Threads threads{jobs, replay_threads};
        if (rank != 0) {
          sweep::mpi::serve(spec, e.candidates, threads);
          return 0;
        }
        sweep::mpi::Dispatcher farm(*session, spec, e.candidates, threads);
        run = run_journaled(spec, e, *journal, farm_runner(farm, progress), o.stop_after, announce_replays);
        farm.finish();
      } else {
        run = run_journaled(spec, e, *journal, local_runner(spec, e.candidates, jobs, replay_threads, progress),
                            o.stop_after, announce_replays);
      }
  #else
      run = run_journaled(spec, e, *journal, local_runner(spec, e.candidates, jobs, replay_threads, progress),
                          o.stop_after, announce_replays);
  #endif
      resumed = run.resumed;
      return write_outcome(spec, std::move(e), std::move(run), o, planning, dir, *journal);
    } catch (...) {
      // Every rank reads the same spec and fails alike; rank 0 alone reports it.
      if (rank != 0) return 1;
      throw;
    }
  };
#ifdef TRAINSIM_WITH_MPI
  const int status = run_points();
  if (session) session->finalize(status);
  return status;
#else
  return run_points();
#endif
}

}  // namespace trainsim::cli
