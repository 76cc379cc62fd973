// `run --explore`'s time budget and progress line (internal.hpp, class explore_clock).
#include <chrono>
#include <cstdio>

#include <fmt/format.h>

#include "internal.hpp"

namespace stagecraft::cli::detail {
namespace {

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

explore_clock::explore_clock(std::optional<double> budget_seconds, bool show_progress)
    : budget_(budget_seconds), progress_(show_progress), start_ns_(now_ns()) {}

double explore_clock::elapsed() const { return static_cast<double>(now_ns() - start_ns_) * 1e-9; }

bool explore_clock::may_run(std::int64_t done) const { return done == 0 || !budget_ || elapsed() < *budget_; }

void explore_clock::ran(std::string const& kernel, std::int64_t done, std::int64_t total) {
  if (!progress_) return;
  // Ten updates a second are readable; one per schedule (thousands a second) would cost more
  // terminal writes than schedules. The first is shown at once, so a slow kernel says so.
  const std::int64_t t = now_ns();
  if (shown_ && t - last_shown_ns_ < 100'000'000 && done != total) return;
  last_shown_ns_ = t;
  const std::string budget = budget_ ? fmt::format(" of the {:g} s budget", *budget_) : "";
  // \r and erase-line: the line is rewritten in place, and a shorter one leaves no tail.
  fmt::print(stderr, "\r\033[Kexplore {}: {}/{} schedules, {:.1f} s{}", kernel, done, total, elapsed(), budget);
  std::fflush(stderr);
  shown_ = true;
}

void explore_clock::clear() {
  if (!shown_) return;
  fmt::print(stderr, "\r\033[K");
  std::fflush(stderr);
  shown_ = false;
}

std::string explore_clock::caveat(std::int64_t ran, std::int64_t asked) const {
  if (ran >= asked) return {};
  return fmt::format(", after only {} of the {} schedules asked (the --time-budget of {:g} s ran out)", ran, asked, budget_.value_or(0));
}

}  // namespace stagecraft::cli::detail
