// Timing helpers shared by the benchmark programs.
#pragma once
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

namespace stagecraft::bench {

// Median wall time of `reps` calls of f, in seconds.
template <class F>
double median_seconds(int reps, F&& f) {
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    const auto a = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// The size argument argv[1] (or `fallback`), and a kernel's parameters resolved from it by
// `resolve(n)`: a malformed number or a size the kernel refuses prints `usage` and the reason,
// and exits with 64, instead of escaping main as an exception.
template <class Resolve>
auto sized_params(int argc, char** argv, std::int64_t fallback, const char* usage, Resolve&& resolve) {
  try {
    std::int64_t n = fallback;
    if (argc > 1) {
      char* end = nullptr;
      n = std::strtoll(argv[1], &end, 10);
      if (end == argv[1] || *end != '\0') throw std::invalid_argument(std::string("not a size: '") + argv[1] + "'");
    }
    return resolve(n);
  } catch (std::exception const& e) {
    std::fprintf(stderr, "usage: %s\n%s\n", usage, e.what());
    std::exit(64);
  }
}

}  // namespace stagecraft::bench
