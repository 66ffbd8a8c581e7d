#include "scenario/corpus_reader.h"

#include <algorithm>
#include <fmt/format.h>

#include "scenario/errors.h"
#include "scenario/json_document.h"
#include "scenario/json_fields.h"

namespace trainsim::scenario {

namespace {

constexpr std::string_view kWhat = "validation corpus";
constexpr const char* kHeldOutFile = "held_out.json";
constexpr const char* kFiguresFile = "figures.json";  // the recorded figures (report/corpus_report.h), not cases

std::string source_line(const nlohmann::json& source) {
  if (source.is_string()) return source.get<std::string>();
  if (!source.is_object()) return "";
  std::string out;
  for (const char* key : {"repo", "file", "commit", "table", "row", "document"}) {
    const auto it = source.find(key);
    if (it == source.end() || !it->is_string()) continue;
    if (!out.empty()) out += std::string_view(key) == "commit" ? " @" : ", ";
    out += it->get<std::string>();
  }
  return out;
}

// The tags a case is grouped by, from its scenario when the file gives none:
// the GPU preset's family, the precision, dense or MoE, and the source (the
// id's first word).
std::vector<std::string> derived_tags(const CorpusCase& c) {
  const nlohmann::json& s = c.scenario;
  std::vector<std::string> tags;
  const auto text_at = [&](const char* section, const char* key, std::string fallback) {
    const auto sec = s.find(section);
    if (sec == s.end() || !sec->is_object()) return fallback;
    const auto v = sec->find(key);
    return v != sec->end() && v->is_string() ? v->get<std::string>() : fallback;
  };
  // "gpu": a preset's name, or an override {"preset": ..., "name": ...} named after its preset.
  std::string gpu = text_at("cluster", "gpu", "");
  if (const auto cluster = s.find("cluster"); gpu.empty() && cluster != s.end() && cluster->is_object())
    if (const auto g = cluster->find("gpu"); g != cluster->end() && g->is_object()) gpu = g->value("preset", "");
  tags.push_back(gpu.substr(0, gpu.find('-')));
  tags.push_back(text_at("training", "precision", "bf16"));
  const auto model = s.find("model");
  const bool moe = model != s.end() && model->is_object() && model->value("num_experts", 0) > 0;
  tags.push_back(moe ? "moe" : "dense");
  tags.push_back(c.id.substr(0, c.id.find('-')));
  return tags;
}

std::string model_name(const nlohmann::json& scenario) {
  const auto model = scenario.find("model");
  if (model == scenario.end()) return "";
  if (model->is_string()) return model->get<std::string>();
  if (model->is_object()) return model->value("name", std::string());
  return "";
}

// `ids`: the ids read so far, in every file.
void read_cases(const std::filesystem::path& file, Corpus& out, std::set<std::string>& ids) {
  const std::string name = file.string();
  const nlohmann::json doc = parse_document(read_document_file(file, kWhat), name, kWhat);
  if (!doc.is_array()) throw ScenarioError(name, "", "a list of cases", describe_found(doc));
  for (std::size_t i = 0; i < doc.size(); ++i) {
    const std::string path = fmt::format("/{}", i);
    const ObjectReader r(doc[i], name, path,
                         {"id", "source", "configuration", "note", "measured", "scenario", "tags", "fidelity",
                          "memory_kind", "derivation", "published_parameters", "fallback_scenario", "fallback_note"});
    CorpusCase c;
    c.id = r.text("id");
    if (c.id.empty()) r.fail("id", "a case id", r.raw("id"));
    c.file = name;
    c.source = r.has("source") ? source_line(r.raw("source")) : "";
    const ObjectReader m = r.object("measured", {"iteration_time_s", "tokens_per_s_per_gpu", "tflops_per_gpu", "mfu",
                                                 "peak_memory_bytes", "peak_reserved_bytes", "iteration_time_derivation",
                                                 "hfu"});
    c.measured_iteration_s = m.number("iteration_time_s", 1e-9, 1e9);
    if (m.has_non_null("peak_memory_bytes")) c.measured_peak_bytes = m.number("peak_memory_bytes", 1.0, 1e15);
    c.memory_kind = r.text("memory_kind", "");
    if (!r.has("scenario") || !r.raw("scenario").is_object())
      r.fail("scenario", "the case's scenario (an object)", r.has("scenario") ? r.raw("scenario") : nlohmann::json());
    c.scenario = r.raw("scenario");
    c.model = model_name(c.scenario);
    if (r.has("tags")) {
      const nlohmann::json& t = r.raw("tags");
      if (!t.is_array() || !std::all_of(t.begin(), t.end(), [](const nlohmann::json& x) { return x.is_string(); }))
        r.fail("tags", "a list of strings", t);
      for (const nlohmann::json& x : t) c.tags.push_back(x.get<std::string>());
    } else {
      c.tags = derived_tags(c);
    }
    if (r.has("fidelity")) c.tags.push_back(r.choice("fidelity", {"exact", "approximate"}));
    if (!ids.insert(c.id).second)
      throw ScenarioError(name, r.path_of("id"), fmt::format("case id \"{}\" is already taken by another case", c.id));
    out.cases.push_back(std::move(c));
  }
}

void read_held_out(const std::filesystem::path& file, const std::set<std::string>& ids, Corpus& out) {
  const std::string name = file.string();
  const nlohmann::json doc = parse_document(read_document_file(file, kWhat), name, kWhat);
  const ObjectReader r(doc, name, "", {"rule", "held_out"});
  out.held_out_rule = r.text("rule");
  const nlohmann::json& listed = r.raw("held_out");
  if (!listed.is_array()) r.fail("held_out", "a list of case ids", listed);
  for (std::size_t i = 0; i < listed.size(); ++i) {
    const std::string where = fmt::format("/held_out/{}", i);
    if (!listed[i].is_string()) throw ScenarioError(name, where, "a case id", describe_found(listed[i]));
    const std::string id = listed[i].get<std::string>();
    if (!ids.contains(id))
      throw ScenarioError(name, where, "the id of a case in the corpus", "\"" + id + "\"");
    out.held_out.insert(id);
  }
}

}  // namespace

Corpus read_corpus(const std::filesystem::path& path) {
  Corpus out;
  std::set<std::string> ids;
  std::error_code ec;
  if (!std::filesystem::is_directory(path, ec)) {
    read_cases(path, out, ids);
    return out;
  }
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(path, ec))
    if (entry.path().extension() == ".json" && entry.path().filename() != kHeldOutFile &&
        entry.path().filename() != kFiguresFile)
      files.push_back(entry.path());
  if (ec) throw ScenarioError(path.string(), "", "a readable folder of corpus files", ec.message());
  std::sort(files.begin(), files.end());
  if (files.empty()) throw ScenarioError(path.string(), "", "a folder with corpus files (*.json lists of cases)", "none");
  for (const auto& f : files) read_cases(f, out, ids);
  if (std::filesystem::exists(path / kHeldOutFile, ec)) read_held_out(path / kHeldOutFile, ids, out);
  return out;
}

}  // namespace trainsim::scenario
