// Writes the IR fuzzer's seed corpus: every bundled example, lowered for every declared value
// of its type-level parameters, in the fuzz input format. Run it when lowering or the examples
// change and commit the result (tests/fuzz/corpus/ir/seed-*).
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>

#include "ir_codec.hpp"
#include "stagecraft/registry.hpp"

using namespace stagecraft;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: fuzz_seeds DIRECTORY\n");
    return 64;
  }
  int written = 0;
  for (auto const* e : registry::global().all()) {
    std::vector<param_values> variants{registry::resolve(*e, {})};
    for (auto const& p : e->params)
      for (auto v : p.allowed) variants.push_back(registry::resolve(*e, {{p.name, v}}));
    // And the smallest sizes the kernel builds for: the fuzzer interprets only small kernels
    // (a few CTAs, 2^16 elements per buffer), and mutations of these run in milliseconds.
    param_values small;
    for (auto const& p : e->params)
      if (p.allowed.empty()) small[p.name] = (std::max<std::int64_t>(p.min, 1) + p.multiple_of - 1) / p.multiple_of * p.multiple_of;
    for (int scale = 1; scale <= 64; scale *= 2) {
      param_values v;
      for (auto const& [name, x] : small) v[name] = x * scale;
      try {
        const auto resolved = registry::resolve(*e, v);
        (void)e->build(resolved);
        variants.push_back(resolved);
        break;
      } catch (std::exception const&) {
        // not a size this kernel builds for: try larger ones
      }
    }
    // Each size parameter that may be a launch argument, as one: the run-time extent sections.
    for (std::size_t i = 0, n = variants.size(); i < n; ++i)
      for (auto const& p : e->params)
        if (p.run_time) {
          auto v = variants[i];
          v[p.name + "?"] = 1;
          variants.push_back(v);
        }
    for (std::size_t i = 0; i < variants.size(); ++i) {
      const auto path = std::string(argv[1]) + "/seed-" + e->name + "-" + std::to_string(i);
      std::ofstream out(path, std::ios::binary);
      out << fuzz::encode(e->build(variants[i]));
      if (!out) {
        std::fprintf(stderr, "fuzz_seeds: cannot write %s\n", path.c_str());
        return 1;
      }
      ++written;
    }
  }
  // Shapes the examples do not have and mutations do not reach (they never drop a dimension):
  // a fully indexed SMEM store (a rank-0 tile) and a store to a register accumulator.
  for (auto kind : {ir::AllocKind::smem, ir::AllocKind::accumulator}) {
    ir::Kernel k;
    k.name = kind == ir::AllocKind::smem ? "rank0_store" : "accumulator_store";
    k.params.push_back({"x", ir::DType::f32, {64}, {false}});
    k.allocs.push_back({kind, ir::DType::f32, {2, 64}});
    k.exprs.push_back({ir::ExprOp::constant, 1});
    k.refs.push_back({ir::RefBase::alloc, 0, kind == ir::AllocKind::smem ? std::vector<ir::ExprId>{0, 0} : std::vector<ir::ExprId>{}, {},
                      kind == ir::AllocKind::smem ? std::vector<std::int64_t>{} : std::vector<std::int64_t>{2, 64}});
    ir::Value one{ir::ValueOp::scalar, ir::DType::f32, k.refs[0].shape};
    one.scalar = 1.0;
    k.values.push_back(one);
    ir::Stmt store{ir::StmtOp::store};
    store.refs = {0};
    store.value = 0;
    k.stmts.push_back({ir::StmtOp::seq, {1}});
    k.stmts.push_back(store);
    k.body = 0;
    ir::verify(k);
    const auto path = std::string(argv[1]) + "/seed-" + k.name;
    std::ofstream out(path, std::ios::binary);
    out << fuzz::encode(k);
    if (!out) {
      std::fprintf(stderr, "fuzz_seeds: cannot write %s\n", path.c_str());
      return 1;
    }
    ++written;
  }
  std::fprintf(stderr, "fuzz_seeds: %d seeds in %s\n", written, argv[1]);
  return 0;
}
