// gzip'd inputs (scenario/gzip_file.h): any JSON document the readers take may be
// gzip'd (torch.profiler's NAME.pt.trace.json.gz, a scenario.json.gz), recognised by
// the magic bytes; a damaged file fails naming the file and the damage.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "report/gzip_stream.h"
#include "scenario/errors.h"
#include "scenario/gzip_file.h"
#include "scenario/json_document.h"

namespace trainsim {
namespace {

namespace fs = std::filesystem;

class GzipFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           (std::string("trainsim_gzip_file_test_") + ::testing::UnitTest::GetInstance()->current_test_info()->name() +
            "_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path gz(const std::string& name, const std::string& text) {
    const fs::path p = dir_ / name;
    report::write_atomically_gz(p, [&](std::ostream& os) { os << text; });
    return p;
  }
  static std::string bytes(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  fs::path dir_;
};

TEST_F(GzipFile, ADocumentIsReadInflatedAndItsHeadAlone) {
  std::string text = R"({"traceEvents": [)";
  for (int i = 0; i < 20000; ++i) text += R"({"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 1},)";
  text += "{}]}";
  const fs::path p = gz("t.json.gz", text);
  ASSERT_TRUE(scenario::is_gzip_file(p));
  EXPECT_LT(fs::file_size(p), text.size() / 10);
  EXPECT_EQ(scenario::read_document_file(p, "trace", std::size_t{1} << 30), text);
  EXPECT_EQ(scenario::read_gzip_head(p, 17), R"({"traceEvents": [)");
  // The readers' size limit holds for the inflated text.
  try {
    (void)scenario::read_document_file(p, "trace", std::size_t{1} << 20);
    FAIL() << "accepted " << text.size() << " bytes";
  } catch (const scenario::ScenarioError& e) {
    EXPECT_NE(std::string(e.what()).find("t.json.gz: expected at most 1 MiB inflated"), std::string::npos) << e.what();
  }
}

TEST_F(GzipFile, ADamagedFileNamesItselfAndTheDamage) {
  const std::string whole = bytes(gz("whole.json.gz", std::string(100000, 'x')));
  std::ofstream(dir_ / "half.json.gz", std::ios::binary) << whole.substr(0, whole.size() / 2);
  try {
    (void)scenario::read_document_file(dir_ / "half.json.gz", "trace", std::size_t{1} << 30);
    FAIL() << "accepted a truncated file";
  } catch (const scenario::ScenarioError& e) {
    EXPECT_NE(std::string(e.what()).find("half.json.gz: truncated gzip data"), std::string::npos) << e.what();
  }
  std::ofstream(dir_ / "plain.json", std::ios::binary) << "{}";
  EXPECT_FALSE(scenario::is_gzip_file(dir_ / "plain.json"));
  EXPECT_THROW((void)scenario::read_gzip_file(dir_ / "plain.json"), scenario::ScenarioError);  // not gzip data
}

}  // namespace
}  // namespace trainsim
