// What the CLI's subcommands in other files (shard.cpp, bench.cpp) share with cli.cpp: the
// seeded inputs every run uses, the policy names, and an output file that fails early.
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

// Opened (truncated) at construction, so a bad path fails before a long run; written once,
// with every error checked (a full disk must not end in exit 0 with a short file).
class output_file {
 public:
  output_file(const char* flag, std::string path);
  output_file(output_file const&) = delete;
  output_file& operator=(output_file const&) = delete;
  ~output_file();
  void write(std::string const& text);
  std::string const& path() const { return path_; }

 private:
  const char* flag_;
  std::string path_;
  std::FILE* f_ = nullptr;
};

}  // namespace stagecraft::cli::detail
