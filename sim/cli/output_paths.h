#pragma once
// Names of the files a command writes beside its result file.
#include <filesystem>
#include <string>

namespace trainsim::cli {

// "result.json" -> "result.timeline.json" (or "result.timeline.json.gz"), beside it;
// `kind` "run_timeline" for the full-run timeline.
inline std::filesystem::path timeline_path_for(const std::filesystem::path& result, const std::string& kind,
                                               bool gzip) {
  std::filesystem::path p = result;
  p.replace_extension();
  return p.string() + "." + kind + ".json" + (gzip ? ".gz" : "");
}

}  // namespace trainsim::cli
