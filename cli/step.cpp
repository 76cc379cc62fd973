#include "step.hpp"

#include <cstdio>
#include <string>

#include <fmt/format.h>

namespace stagecraft::cli {
namespace {

struct restart {};  // thrown out of the chooser to replay the kept choices (undo)
struct quit {};     // the learner stopped the run

struct session {
  std::istream& in;
  std::vector<std::size_t> picks;   // every choice of the run so far, in order
  std::vector<bool> learners;       // which of them the learner made (the others moved by themselves)
  std::size_t replayed = 0;         // picks[0, replayed) have been made in this run (replayed silently after an undo)
  bool rest = false;                // "r" or the end of the input: eager from here on
  std::vector<std::string> last_barriers;

  std::size_t record(std::size_t pick, bool by_learner, interp::step_point const& p) {
    picks.push_back(pick);
    learners.push_back(by_learner);
    ++replayed;
    auto const& c = p.choices[pick];
    fmt::print("  step {:>3}: {} moves: {}\n", p.step, c.who, c.what);
    return pick;
  }

  void show(interp::step_point const& p) {
    if (p.barriers != last_barriers) {
      fmt::print("\n  barriers:\n");
      for (auto const& b : p.barriers) fmt::print("    {}\n", b);
      last_barriers = p.barriers;
    }
    for (auto const& b : p.blocked) fmt::print("  blocked: {}\n", b);
    fmt::print("  what moves next?\n");
    for (std::size_t i = 0; i < p.choices.size(); ++i) fmt::print("    {:>2}  {:<8} {}\n", i + 1, p.choices[i].who, p.choices[i].what);
  }

  // The eager schedule's choice: async work first, then the first runnable warpgroup.
  static std::size_t eager(interp::step_point const& p) {
    for (std::size_t i = 0; i < p.choices.size(); ++i)
      if (p.choices[i].async) return i;
    return 0;
  }

  std::size_t operator()(interp::step_point const& p) {
    if (replayed < picks.size()) return picks[replayed++];
    if (p.choices.size() == 1) return record(0, false, p);
    if (rest) return record(eager(p), false, p);
    show(p);
    for (;;) {
      fmt::print("> ");
      std::fflush(stdout);
      std::string line;
      if (!std::getline(in, line)) {
        fmt::print("(end of input: the rest runs under the eager schedule)\n");
        rest = true;
        return record(eager(p), false, p);
      }
      const auto b = line.find_first_not_of(" \t"), e = line.find_last_not_of(" \t\r");
      line = b == std::string::npos ? std::string() : line.substr(b, e - b + 1);
      fmt::print("{}\n", line);  // echoed, so a scripted session reads as a transcript
      if (line == "q") throw quit{};
      if (line == "r") {
        rest = true;
        return record(eager(p), false, p);
      }
      if (line == "u") {
        while (!learners.empty() && !learners.back()) picks.pop_back(), learners.pop_back();
        if (learners.empty()) {
          fmt::print("  nothing to undo\n");
          continue;
        }
        picks.pop_back(), learners.pop_back();
        fmt::print("  undone: the run replays the {} step(s) before it\n", picks.size());
        throw restart{};
      }
      for (std::size_t i = 0; i < p.choices.size(); ++i)
        if (line == p.choices[i].who || line == std::to_string(i + 1)) return record(i, true, p);
      fmt::print("  '{}' is not a choice here: a number 1-{}, a name from the list, u (undo), r (run the rest), q (quit)\n", line,
                 p.choices.size());
    }
  }
};

}  // namespace

std::optional<interp::result> run_stepping(ir::Kernel const& k, std::vector<host_tensor> const& inputs, interp::options o, std::istream& in) {
  session s{in};
  fmt::print("You drive the schedule of '{}'. At each step type what moves next: its number or name; u undoes your last "
             "choice, r runs the rest under the eager schedule, q stops.\n",
             k.name);
  for (;;) {
    s.replayed = 0;
    s.last_barriers.clear();
    o.choose = [&s](interp::step_point const& p) { return s(p); };
    try {
      return interp::run(k, inputs, o);
    } catch (restart const&) {
      continue;
    } catch (quit const&) {
      fmt::print("  stopped by the learner after {} steps\n", s.picks.size());
      return std::nullopt;
    }
  }
}

}  // namespace stagecraft::cli
