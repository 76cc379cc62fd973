#include "stagecraft/ir/recompute.hpp"

#include <functional>
#include <numeric>
#include <set>

#include <fmt/format.h>

namespace stagecraft::ir {
namespace {

std::int64_t elements(std::vector<std::int64_t> const& shape) {
  return std::accumulate(shape.begin(), shape.end(), std::int64_t{1}, std::multiplies<>());
}

const char* reduction_name(ValueOp op) {
  switch (op) {
    case ValueOp::reduce_sum: return "sum";
    case ValueOp::reduce_max: return "max";
    default: return "min";
  }
}

}  // namespace

std::vector<recomputed_reduction> recomputed_reductions(Kernel const& k) {
  std::vector<recomputed_reduction> out;
  // Values that read a wgmma accumulator: their stores walk the D fragment, which hoists row
  // reductions (a separate path of the code generator).
  auto reads_accumulator = [&](ValueId root) {
    std::function<bool(ValueId)> walk = [&](ValueId id) -> bool {
      if (id == none) return false;
      auto const& v = k.values[id];
      if (v.op == ValueOp::load && v.ref != none) {
        auto const& r = k.refs[v.ref];
        if (r.base == RefBase::alloc && k.allocs[r.id].kind == AllocKind::accumulator) return true;
      }
      return walk(v.a) || walk(v.b) || walk(v.c);
    };
    return walk(root);
  };
  for (StmtId s = 0; s < static_cast<StmtId>(k.stmts.size()); ++s) {
    auto const& st = k.stmts[s];
    if (st.op != StmtOp::store || st.value == none || reads_accumulator(st.value)) continue;
    const std::int64_t stored = elements(k.values[st.value].shape);
    std::set<ValueId> seen;
    std::function<void(ValueId)> walk = [&](ValueId id) {
      if (id == none || !seen.insert(id).second) return;
      auto const& v = k.values[id];
      if (value_is_reduction(v.op)) {
        const std::int64_t results = elements(v.shape), length = elements(k.values[v.a].shape) / std::max<std::int64_t>(results, 1);
        if (results > 0 && stored / results > 1 && length > 1) {
          recomputed_reduction r{.op = s, .reduction = id, .length = length, .times = stored / results};
          const auto at = where(k, s);
          r.message = fmt::format(
              "kernel '{}', op #{} ({}): {}<{}> folds {} elements and is broadcast to {} elements of the store; the generated code "
              "evaluates the stored expression element by element, so it folds them again for each one ({}x the work of folding "
              "them once; the interpreter and the cost model fold them once and do not show it). Store the reduction into a tile "
              "of its own first (store(t, {}<{}>(...))) and read that tile in the expression{}",
              k.name, s, stmt_name(st), reduction_name(v.op), static_cast<int>(v.scalar), length, r.times, r.times,
              reduction_name(v.op), static_cast<int>(v.scalar), at.empty() ? "" : " (" + at + ")");
          out.push_back(std::move(r));
        }
      }
      walk(v.a), walk(v.b), walk(v.c);
    };
    walk(st.value);
  }
  return out;
}

}  // namespace stagecraft::ir
