// `--for SCENARIO`: the GEMM shapes one iteration of the scenario runs on one GPU,
// taken from the simulator's own operation lists, so the profile measures exactly
// what the prediction will look up.
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>

#include "hardware/precision.h"
#include "io/atomic_file.h"
#include "scenario/reader.h"
#include "shape_list.h"
#include "workload/transformer_ops.h"

namespace trainsim::calibrate {

namespace {

void add_shapes(const workload::Op& op, std::set<GemmShape>& out) {
  const hw::KernelWork& w = op.work;
  if (w.kind != hw::KernelClass::kMatmul || !(w.m > 0.0 && w.n > 0.0 && w.k > 0.0)) return;
  const auto m = static_cast<long long>(w.m), n = static_cast<long long>(w.n), k = static_cast<long long>(w.k);
  if (!w.backward) {
    out.insert({m, n, k});
  } else {  // the layouts of gemm.h: dX = dY W, dW = dY^T X
    if (w.gradients != hw::Gradients::kWeight) out.insert({m, k, n, kernels::GemmLayout::kDataGradient});
    if (w.gradients != hw::Gradients::kData) out.insert({n, k, m, kernels::GemmLayout::kWeightGradient});
  }
}

}  // namespace

std::string write_scenario_shapes(const std::string& scenario, const std::string& profile) {
  const config::Scenario s = scenario::read_scenario_file(scenario);
  const workload::TransformerOps ops(s.model, s.training, s.training.micro_batch_size, s.parallel.tensor,
                                     s.parallel.sequence_parallel);
  std::set<GemmShape> shapes;
  auto add_all = [&](const std::vector<workload::Op>& list) {
    for (const workload::Op& op : list) add_shapes(op, shapes);
  };
  // Every layer has the same shapes: layer 0 stands for all.
  add_all(ops.embedding_forward());
  add_all(ops.layer_forward(0));
  add_all(ops.head_forward());
  add_all(ops.head_backward());
  add_all(ops.layer_backward(0));
  add_all(ops.embedding_backward());
  nlohmann::json list = nlohmann::json::array();
  for (const GemmShape& g : shapes) {
    nlohmann::json e{{"m", g.m}, {"n", g.n}, {"k", g.k}};
    if (g.layout != kernels::GemmLayout::kForward) e["layout"] = kernels::to_string(g.layout);
    list.push_back(std::move(e));
  }
  const std::string path = profile + ".shapes.json";
  io::write_atomically(path, [&](std::ostream& os) { os << list.dump(1) << '\n'; });
  std::printf("%s: %zu GEMM shapes per GPU, listed in %s\n", scenario.c_str(), shapes.size(), path.c_str());
  return path;
}

std::string scenario_gemm_dtype(const std::string& scenario) {
  const config::Scenario s = scenario::read_scenario_file(scenario);
  return std::string(hw::to_string(s.training.precision));
}

}  // namespace trainsim::calibrate
