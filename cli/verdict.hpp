// What a run is checked with: seeded random inputs and the comparison with a reference. Shared
// by the CLI and the small per-kernel runners (stagecraft_add_kernel_runner), which must give
// the same verdict on the same inputs without linking the whole CLI.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "stagecraft/host/tensor.hpp"
#include "stagecraft/interp/interp.hpp"
#include "stagecraft/ir/kernel.hpp"

namespace stagecraft::cli {

// Seeded random inputs, never all zeros: floats in [-2, 2), integers in a small range.
std::vector<host_tensor> random_inputs(ir::Kernel const& k, std::uint64_t seed);

// The first output element that differs from `expected`, as "y[3, 4] = 1.5 but the reference
// gives 2.5 (...)", or empty when all match; `checked` gets the number of elements compared.
std::string first_mismatch(ir::Kernel const& k, std::vector<host_tensor> const& got, std::vector<host_tensor> const& expected,
                           const char* what, std::int64_t& checked, std::optional<interp::mma_tolerance> const& tol = std::nullopt);

// Compares every output the kernel writes with `expected` (what `what` computed), prints the
// verdict line and returns exit_ok or exit_wrong. `caveat` ends a "correct" verdict with what it
// does not cover (", after only 12 of the 1000 schedules asked (...)"); a wrong result needs none.
int compare_with_reference(ir::Kernel const& k, std::vector<host_tensor> const& got, std::vector<host_tensor> const& expected,
                           const char* what, std::uint64_t steps, std::optional<interp::mma_tolerance> const& tol = std::nullopt,
                           std::string const& caveat = {});

}  // namespace stagecraft::cli
