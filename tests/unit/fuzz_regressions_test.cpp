// Every input that once made a fuzz target fail (fuzz/regressions/TARGET/) is
// read again by its reader, in the ordinary test build too: it must be accepted
// or rejected with a ScenarioError that names the file (fuzz/fuzz_target.h).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>

#include "scenario/calibration_reader.h"
#include "scenario/errors.h"
#include "scenario/measured_run.h"
#include "scenario/reader.h"
#include "scenario/sweep_spec_reader.h"

namespace trainsim::scenario {
namespace {

namespace fs = std::filesystem;

TEST(FuzzRegressions, EachInputIsAcceptedOrRejectedNamingTheFile) {
  const std::map<std::string, std::function<void(const std::string&, const std::string&)>> readers{
      {"fuzz_scenario", [](const std::string& t, const std::string& f) { (void)parse_scenario_text(t, f); }},
      {"fuzz_calibration", [](const std::string& t, const std::string& f) { (void)parse_calibration_text(t, f); }},
      {"fuzz_measured_run", [](const std::string& t, const std::string& f) { (void)parse_measured_run(t, f); }},
      {"fuzz_sweep_spec", [](const std::string& t, const std::string& f) { (void)parse_sweep_spec(t, f); }},
  };
  int inputs = 0;
  for (const auto& [target, read] : readers) {
    const fs::path dir = fs::path(TRAINSIM_SOURCE_DIR) / "fuzz" / "regressions" / target;
    if (!fs::exists(dir)) continue;
    for (const fs::directory_entry& e : fs::directory_iterator(dir)) {
      std::ifstream in(e.path(), std::ios::binary);
      std::ostringstream text;
      text << in.rdbuf();
      const std::string file = e.path().filename().string();
      try {
        read(text.str(), file);
      } catch (const ScenarioError& error) {
        EXPECT_NE(std::string(error.what()).find(file), std::string::npos) << error.what();
      } catch (const std::exception& error) {
        ADD_FAILURE() << target << " " << file << ": an undocumented exception: " << error.what();
      }
      ++inputs;
    }
  }
  EXPECT_GE(inputs, 2);  // fuzz/regressions/ holds the measured-run and scenario findings at least
}

TEST(FuzzRegressions, NumberBeyondADoubleIsAScenarioErrorSayingSo) {
  try {
    (void)parse_scenario_text(R"({"training": {"global_batch_size": 1e400}})", "big.json");
    FAIL() << "accepted";
  } catch (const ScenarioError& e) {
    EXPECT_NE(std::string(e.what()).find("big.json"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("number overflow parsing '1e400'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace trainsim::scenario
