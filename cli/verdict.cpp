#include "verdict.hpp"

#include <cmath>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "stagecraft/cli.hpp"
#include "stagecraft/interp/interp.hpp"

namespace stagecraft::cli {
namespace {

std::string index_text(std::vector<std::int64_t> const& shape, std::int64_t flat) {
  std::vector<std::int64_t> idx(shape.size());
  for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
    idx[d] = flat % shape[d];
    flat /= shape[d];
  }
  return fmt::format("[{}]", fmt::join(idx, ", "));
}

}  // namespace

std::vector<host_tensor> random_inputs(ir::Kernel const& k, std::uint64_t seed) {
  std::vector<host_tensor> out;
  std::uint64_t state = seed * 0x9e3779b97f4a7c15ull + 1;
  auto next = [&] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  for (auto const& p : k.params) {
    auto t = host_tensor::zeros(p.dtype, p.shape);
    for (std::int64_t i = 0; i < t.elements(); ++i) {
      const auto r = next();
      if (ir::dtype_is_float(p.dtype)) t.set(i, static_cast<double>(r >> 40) / static_cast<double>(1ull << 24) * 4.0 - 2.0);
      else if (p.dtype == ir::DType::u32) t.set(i, static_cast<double>(r % 200));
      else t.set(i, static_cast<double>(static_cast<std::int64_t>(r % 201) - 100));
    }
    out.push_back(std::move(t));
  }
  return out;
}

int compare_with_reference(ir::Kernel const& k, std::vector<host_tensor> const& got_all, std::vector<host_tensor> const& expected,
                           const char* what, std::uint64_t steps) {
  std::int64_t checked = 0;
  for (int p : interp::written_params(k)) {
    auto const& got = got_all[p];
    auto const& want = expected[p];
    for (std::int64_t i = 0; i < got.elements(); ++i, ++checked) {
      const double g = got.get(i), w = want.get(i);
      if (!(g == w || (std::isnan(g) && std::isnan(w)))) {
        fmt::print("verdict: wrong result: {}{} = {} but {} gives {} ({} elements matched before it)\n", k.params[p].name,
                   index_text(got.shape, i), g, what, w, checked);
        return exit_wrong;
      }
    }
  }
  fmt::print("verdict: correct ({} output elements match {}{})\n", checked, what, steps ? fmt::format("; {} steps", steps) : std::string());
  return exit_ok;
}

}  // namespace stagecraft::cli
