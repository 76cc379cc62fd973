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
  std::fprintf(stderr, "fuzz_seeds: %d seeds in %s\n", written, argv[1]);
  return 0;
}
