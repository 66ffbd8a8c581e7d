#pragma once
// The journal of a sweep or plan (docs/sweep.md, "Resuming"): one line per
// finished point, self-contained, so that a run stopped at any moment (Ctrl-C,
// SIGTERM, SIGKILL, a lost node) resumes where it stopped and writes outputs byte
// for byte those of an uninterrupted run. A line is a JSON object:
//   {"journal": "trainsim sweep 1", "key": KEY, "stage": "evaluate" | "replay",
//    "index": I, "result": HEX}
// KEY names what the results depend on (journal_key); I is the point's index
// among the enumerated candidates; HEX is the PointResult as
// sweep/result_codec.h encodes it (every double bit for bit). An "evaluate" line
// holds the point's failure-free evaluation; a "replay" line the same point
// after its replay under failures (sweep/reliability.h).
#include <cstddef>
#include <string>
#include <string_view>

#include "config/sweep_spec.h"
#include "sweep/evaluate.h"

namespace trainsim::sweep {

enum class JournalStage { kEvaluate, kReplay };

struct JournalRecord {
  JournalStage stage = JournalStage::kEvaluate;
  std::size_t index = 0;
  PointResult result;
};

// What a journal's results depend on: the spec file's bytes, the objective the
// run ranks by (it chooses the points replayed under failures) and the
// simulator's version, hashed (FNV-1a, 64 bits, as 16 hex digits).
std::string journal_key(std::string_view spec_bytes, config::Objective objective);

// The record as one line (no newline).
std::string journal_line(std::string_view key, const JournalRecord& record);

// The record of a line; throws std::invalid_argument saying what is wrong with it,
// or that it was written under another key (another spec, objective or version).
JournalRecord parse_journal_line(std::string_view line, std::string_view key);

}  // namespace trainsim::sweep
