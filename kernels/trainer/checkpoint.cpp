#include "checkpoint.h"

#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "io/atomic_file.h"

namespace trainsim::trainer {

namespace {
constexpr char kMagic[8] = {'T', 'S', 'C', 'K', 'P', 'T', '0', '1'};

nlohmann::ordered_json header_of(const CheckpointState& s) {
  nlohmann::ordered_json h;
  h["layers"] = s.model.layers;
  h["hidden"] = s.model.hidden;
  h["heads"] = s.model.heads;
  h["seq"] = s.model.seq;
  h["vocab"] = s.model.vocab;
  h["padded_vocab"] = s.model.padded_vocab;
  h["params"] = s.params.size();
  h["next_step"] = s.next_step;
  h["seed"] = s.seed;
  return h;
}
}  // namespace

void save_checkpoint(const std::filesystem::path& path, const CheckpointState& s) {
  if (s.m.size() != s.params.size() || s.v.size() != s.params.size())
    throw std::invalid_argument("save_checkpoint: params, m and v differ in size");
  const std::string header = header_of(s).dump();
  io::write_atomically(path, [&](std::ostream& os) {
    os.write(kMagic, sizeof kMagic);
    const std::uint64_t len = header.size();
    os.write(reinterpret_cast<const char*>(&len), sizeof len);
    os.write(header.data(), static_cast<std::streamsize>(header.size()));
    for (const auto* a : {&s.params, &s.m, &s.v})
      os.write(reinterpret_cast<const char*>(a->data()), static_cast<std::streamsize>(a->size() * sizeof(float)));
  });
}

CheckpointState load_checkpoint(const std::filesystem::path& path, const kernels::ref::GptConfig& expected) {
  const std::string where = path.string();
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(where + ": cannot open the checkpoint");
  char magic[8] = {};
  std::uint64_t len = 0;
  in.read(magic, sizeof magic);
  in.read(reinterpret_cast<char*>(&len), sizeof len);
  if (!in || std::memcmp(magic, kMagic, sizeof kMagic) != 0 || len > (1u << 20))
    throw std::runtime_error(where + ": not a trainsim-train checkpoint (expected the TSCKPT01 header)");
  std::string text(len, '\0');
  in.read(text.data(), static_cast<std::streamsize>(len));
  const auto h = nlohmann::json::parse(text, nullptr, false);
  if (!in || h.is_discarded() || !h.is_object()) throw std::runtime_error(where + ": the header is not JSON");
  CheckpointState s;
  s.model = expected;
  const auto field = [&](const char* name, long long want) {
    if (!h.contains(name) || !h[name].is_number_integer())
      throw std::runtime_error(where + ": header field \"" + name + "\" missing");
    const long long got = h[name].get<long long>();
    if (want >= 0 && got != want)
      throw std::runtime_error(where + ": header field \"" + name + "\" is " + std::to_string(got) +
                               ", the run expects " + std::to_string(want));
    return got;
  };
  field("layers", expected.layers);
  field("hidden", expected.hidden);
  field("heads", expected.heads);
  field("seq", expected.seq);
  field("vocab", expected.vocab);
  field("padded_vocab", expected.padded_vocab);
  const auto n =
      static_cast<std::size_t>(field("params", static_cast<long long>(kernels::ref::gpt_layout(expected).total)));
  s.next_step = static_cast<int>(field("next_step", -1));
  s.seed = h.value("seed", std::uint64_t{0});
  for (auto* a : {&s.params, &s.m, &s.v}) {
    a->resize(n);
    in.read(reinterpret_cast<char*>(a->data()), static_cast<std::streamsize>(n * sizeof(float)));
  }
  if (!in) throw std::runtime_error(where + ": truncated (expected 3 x " + std::to_string(n) + " fp32 values)");
  return s;
}

}  // namespace trainsim::trainer
