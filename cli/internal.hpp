// What the CLI's subcommands in other files (shard.cpp, bench.cpp) share with cli.cpp: the
// seeded inputs every run uses, the policy names, and output files written whole or not at all.
#pragma once
#include <cstdint>
#include <cstdio>
#include <optional>
#include <utility>
#include <string>
#include <vector>

#include "stagecraft/host/tensor.hpp"
#include "stagecraft/interp/interp.hpp"
#include "stagecraft/ir/kernel.hpp"
#include "stagecraft/registry.hpp"

namespace stagecraft::cli::detail {

// The very inputs `stagecraft run --input-seed S` uses (floats in [-2, 2), never all zeros).
std::vector<host_tensor> random_inputs(ir::Kernel const& k, std::uint64_t seed);
interp::policy parse_policy(std::string const& p);
std::uint64_t parse_seed(const char* flag, std::string const& text);
// The first output element that differs from `expected`, as "y[3, 4] = 1.5 but the reference
// gives 2.5", or empty when all match; `checked` gets the number of elements compared.
std::string first_mismatch(ir::Kernel const& k, std::vector<host_tensor> const& got, std::vector<host_tensor> const& expected,
                           const char* what, std::int64_t& checked, std::optional<interp::mma_tolerance> const& tol = std::nullopt);
std::string describe_values(param_values const& v);  // "K=4 M=512 N=1024"
// Two output flags naming one file would leave only the last writer's bytes in it: a usage_error.
void check_distinct(std::vector<std::pair<const char*, std::optional<std::string> const*>> const& outputs);

// An output of the CLI (--trace, --results, -o, ...), written whole or not at all, so a failed
// or interrupted run never costs the user the file they had. The construction creates a
// temporary beside the target (its directory, O_EXCL, the umask's permissions, or those of the
// file it replaces), so a path that cannot be written fails before a long run without touching
// the target; write() puts the text in it, fsyncs and renames it over the target. The temporary
// is removed when the object dies unwritten (any error, a usage error found after the files were
// opened) and on SIGINT, SIGTERM and SIGHUP. Streams and devices (/dev/stdout, /dev/null, a
// FIFO) have nothing to replace and are written in place.
// Errors: a usage_error for a path the user got wrong (no such directory, a directory, an empty
// name); an environment_error for one the machine refuses (permissions, a read-only or full file
// system): the CLI's exit codes 64 and 69.
class output_file {
 public:
  output_file(const char* flag, std::string path);
  output_file(output_file const&) = delete;
  output_file& operator=(output_file const&) = delete;
  ~output_file();
  void write(std::string const& text);  // once
  std::string const& path() const { return path_; }

 private:
  void discard() noexcept;

  const char* flag_;
  std::string path_;    // as the user wrote it, for messages
  std::string target_;  // the file replaced: path_ with symbolic links followed
  std::string temp_;    // the temporary beside target_; empty when written in place or done
  int fd_ = -1;
  int signal_slot_ = -1;  // where the SIGINT handler finds temp_ (-1: not registered)
};

// `run --explore`'s clock: the --time-budget, checked between schedules, and on a terminal a
// progress line on stderr, rewritten in place (none when stderr is a file or a pipe, so logs and
// tests stay clean). One clock serves a whole command: `run --all`'s budget is for all kernels.
class explore_clock {
 public:
  explore_clock(std::optional<double> budget_seconds, bool show_progress);
  explore_clock(explore_clock const&) = delete;
  explore_clock& operator=(explore_clock const&) = delete;
  ~explore_clock() { clear(); }
  // Whether a kernel's schedule number `done` (from 0) may start. A kernel's first schedule
  // always runs, so every kernel gets a verdict however little budget is left.
  bool may_run(std::int64_t done) const;
  // After a schedule: the progress line "explore KERNEL: done/total schedules, 3.2 s".
  void ran(std::string const& kernel, std::int64_t done, std::int64_t total);
  void clear();  // the progress line erased, before the kernel's result lines
  double elapsed() const;
  std::optional<double> budget() const { return budget_; }
  // ", after only 12 of the 1000 schedules asked (the --time-budget of 2 s ran out)" when fewer
  // than `asked` ran, else "": the end of a verdict that covers fewer schedules than asked.
  std::string caveat(std::int64_t ran, std::int64_t asked) const;

 private:
  std::optional<double> budget_;
  bool progress_;
  bool shown_ = false;  // a progress line is on the terminal
  std::int64_t start_ns_, last_shown_ns_ = 0;
};

}  // namespace stagecraft::cli::detail
