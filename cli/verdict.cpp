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

// One generator for every path that checks a kernel (run, the runners, bench, shards), so the
// inputs of a seed are the same bits everywhere.
std::vector<host_tensor> random_inputs(ir::Kernel const& k, std::uint64_t seed) { return seeded_inputs(k, seed); }

std::string first_mismatch(ir::Kernel const& k, std::vector<host_tensor> const& got_all, std::vector<host_tensor> const& expected,
                           const char* what, std::int64_t& checked, std::optional<interp::mma_tolerance> const& tol) {
  checked = 0;
  for (int p : interp::written_params(k)) {
    auto const& got = got_all[p];
    auto const& want = expected[p];
    for (std::int64_t i = 0; i < got.elements(); ++i, ++checked) {
      const double g = got.get(i), w = want.get(i);
      if (tol ? !tol->within(g, w, got.dtype, p) : !(g == w || (std::isnan(g) && std::isnan(w))))
        return fmt::format("{}{} = {} but {} gives {} ({} elements {} before it)", k.params[p].name, index_text(got.shape, i), g, what, w,
                           checked, tol ? "within " + tol->rule() : "matched");
    }
  }
  return {};
}

int compare_with_reference(ir::Kernel const& k, std::vector<host_tensor> const& got_all, std::vector<host_tensor> const& expected,
                           const char* what, std::uint64_t steps, std::optional<interp::mma_tolerance> const& tol,
                           std::string const& caveat) {
  std::int64_t checked = 0;
  if (tol) {  // MMA outputs: within the documented bound (interp.hpp), which run prints
    double worst = 0, worst_bound = 0, worst_ratio = -1;
    for (int p : interp::written_params(k)) {
      auto const& got = got_all[p];
      auto const& want = expected[p];
      for (std::int64_t i = 0; i < got.elements(); ++i, ++checked) {
        const double g = got.get(i), w = want.get(i);
        const double bound = tol->bound(w, got.dtype, p);
        const double err = g == w || (std::isnan(g) && std::isnan(w)) ? 0.0 : std::abs(g - w);
        if (!tol->within(g, w, got.dtype, p)) {
          fmt::print("verdict: wrong result: {}{} = {} but {} gives {}: the error {:.3g} exceeds {}: {:.3g} ({} elements within it before)\n",
                     k.params[p].name, index_text(got.shape, i), g, what, w, err, tol->rule(), bound, checked);
          return exit_wrong;
        }
        if (err / bound > worst_ratio) {
          worst_ratio = err / bound;
          worst = err;
          worst_bound = bound;
        }
      }
    }
    // The MMA-only line is unchanged (scripts and tests read it); the fast-math bound names itself.
    const std::string mma_numbers =
        tol->k > 0 ? fmt::format("; K = {}, {} inputs{}", tol->k, tol->input == ir::DType::f32 ? "tf32" : ir::dtype_name(tol->input),
                                 tol->scale_factors > 0 ? fmt::format(" with {} scale factors", tol->scale_factors) : "")
                   : "";
    const std::string rule = tol->math_units > 0 ? (tol->k > 0 ? "the MMA tolerance plus " : "") +
                                                       fmt::format("the fast-math bound (E = {:.4g} units of 2^-24, R up to {:.4g})", tol->math_units, tol->math_scale)
                                                 : std::string("the MMA tolerance");
    fmt::print("verdict: correct ({} output elements within {} of {}: largest error {:.3g} where the bound is {:.3g}{}{}){}\n", checked, rule,
               what, worst, worst_bound, mma_numbers, steps ? fmt::format("; {} steps", steps) : std::string(), caveat);
    return exit_ok;
  }
  if (auto m = first_mismatch(k, got_all, expected, what, checked); !m.empty()) {
    fmt::print("verdict: wrong result: {}\n", m);
    return exit_wrong;
  }
  fmt::print("verdict: correct ({} output elements match {}{}){}\n", checked, what, steps ? fmt::format("; {} steps", steps) : std::string(), caveat);
  return exit_ok;
}

}  // namespace stagecraft::cli
