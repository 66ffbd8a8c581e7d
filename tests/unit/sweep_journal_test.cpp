// The sweep journal (sweep/journal.h) and the log it lives in (io/append_log.h):
// a record read back is the record written, bit for bit; a record of another
// run, a damaged one and a torn last line are told apart.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "io/append_log.h"
#include "sweep/journal.h"

namespace trainsim::sweep {
namespace {

namespace fs = std::filesystem;

PointResult sample() {
  PointResult r;
  r.id = 42;
  r.status = Status::kEvaluated;
  r.data = 16;
  r.num_microbatches = 64;
  r.iteration_time_s = 1.0 / 3.0;  // not a short decimal: every bit must come back
  r.time_to_train_s = 7.0e6 / 3.0;
  r.schedule = "interleaved_1f1b";
  r.reliability = PointReliability{100, 1.0 / 7.0, 2.0 / 7.0, 0.2, 0.97, 12.5, 3600.0, 123.25, 1e-7};
  return r;
}

TEST(SweepJournal, RecordReadBackIsTheRecordWritten) {
  const std::string key = journal_key("{\"name\": \"x\"}", config::Objective::kTimeToTrain);
  ASSERT_EQ(key.size(), 16u);
  const std::string line = journal_line(key, JournalRecord{JournalStage::kReplay, 7, sample()});
  EXPECT_EQ(line.find('\n'), std::string::npos);
  const JournalRecord back = parse_journal_line(line, key);
  EXPECT_EQ(back.stage, JournalStage::kReplay);
  EXPECT_EQ(back.index, 7u);
  EXPECT_EQ(back.result.id, 42u);
  EXPECT_EQ(back.result.iteration_time_s, 1.0 / 3.0);
  EXPECT_EQ(*back.result.time_to_train_s, 7.0e6 / 3.0);
  EXPECT_EQ(back.result.schedule, "interleaved_1f1b");
  ASSERT_TRUE(back.result.reliability);
  EXPECT_EQ(back.result.reliability->time_to_train_p50_s, 1.0 / 7.0);
  EXPECT_EQ(*back.result.reliability->cost_p50_usd, 123.25);
}

TEST(SweepJournal, KeyChangesWithTheSpecAndTheObjective) {
  const std::string a = journal_key("spec a", config::Objective::kTimeToTrain);
  EXPECT_EQ(a, journal_key("spec a", config::Objective::kTimeToTrain));
  EXPECT_NE(a, journal_key("spec b", config::Objective::kTimeToTrain));
  EXPECT_NE(a, journal_key("spec a", config::Objective::kCost));
}

TEST(SweepJournal, RefusesRecordsOfAnotherRunOrDamaged) {
  const std::string key = journal_key("spec a", config::Objective::kTimeToTrain);
  const std::string other = journal_key("spec b", config::Objective::kTimeToTrain);
  const std::string line = journal_line(other, JournalRecord{JournalStage::kEvaluate, 0, sample()});
  const auto message = [&](const std::string& text) -> std::string {
    try {
      (void)parse_journal_line(text, key);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "accepted";
  };
  EXPECT_NE(message(line).find("another spec"), std::string::npos) << message(line);
  EXPECT_NE(message("{\"journal\": 1").find("not a JSON object"), std::string::npos);
  std::string bad_hex = journal_line(key, JournalRecord{JournalStage::kEvaluate, 0, sample()});
  bad_hex.replace(bad_hex.find("\"result\":\"") + 10, 2, "zz");
  EXPECT_NE(message(bad_hex).find("hex"), std::string::npos) << message(bad_hex);
  std::string bad_stage = journal_line(key, JournalRecord{JournalStage::kEvaluate, 0, sample()});
  bad_stage.replace(bad_stage.find("evaluate"), 8, "finished");
  EXPECT_NE(message(bad_stage).find("\"stage\""), std::string::npos) << message(bad_stage);
}

TEST(AppendLog, KeepsCompleteLinesAndDropsATornLastOne) {
  const fs::path path = fs::temp_directory_path() / ("trainsim_append_log_test_" + std::to_string(::getpid()) + ".jsonl");
  fs::remove(path);
  EXPECT_TRUE(io::read_log(path).lines.empty());  // no file: nothing recorded
  {
    io::AppendLog log(path, true);
    log.append("one");
    log.append("two");
  }
  {
    io::AppendLog log(path, false);  // appends after what is there
    log.append("three");
  }
  { std::ofstream(path, std::ios::app) << "fou"; }  // a writer killed mid-line
  const io::LogLines read = io::read_log(path);
  EXPECT_EQ(read.lines, (std::vector<std::string>{"one", "two", "three"}));
  EXPECT_TRUE(read.torn);
  {
    io::AppendLog log(path, false);  // continuing cuts the torn line off first
    log.append("four");
  }
  EXPECT_EQ(io::read_log(path).lines, (std::vector<std::string>{"one", "two", "three", "four"}));
  EXPECT_FALSE(io::read_log(path).torn);
  {
    io::AppendLog log(path, true);  // truncates
    log.append("fresh");
  }
  EXPECT_EQ(io::read_log(path).lines, std::vector<std::string>{"fresh"});
  EXPECT_FALSE(io::read_log(path).torn);
  fs::remove(path);
  EXPECT_THROW(io::AppendLog(fs::path("/nonexistent-dir/journal.jsonl"), true), io::OutputError);
}

}  // namespace
}  // namespace trainsim::sweep
