// Timing helpers shared by the benchmark programs.
#pragma once
#include <algorithm>
#include <chrono>
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

}  // namespace stagecraft::bench
