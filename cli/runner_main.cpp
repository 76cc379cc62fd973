// A per-kernel runner (stagecraft_add_kernel_runner): the kernels linked into it, each run in
// the interpreter with its default parameters on the CLI's seeded random inputs and checked
// against its reference, with the CLI's verdict lines and exit codes. It links the front end,
// the interpreter and these kernels only, so the edit loop relinks a small program instead of
// the CLI with every backend (docs/edit_loop.md).
//   <runner> [kernel ...]     (no names: every kernel linked in)
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "stagecraft/ir/protocol_error.hpp"
#include "stagecraft/cli.hpp"
#include "stagecraft/interp/interp.hpp"
#include "verdict.hpp"

namespace {

int run_one(stagecraft::kernel_entry const& e) {
  using namespace stagecraft;
  const auto values = registry::resolve(e, {});
  std::optional<ir::Kernel> built;
  try {
    built.emplace(registry::build(e, values));
  } catch (ir::ProtocolError const& err) {  // the user's mistake, as the CLI reports it (exit 2, not 70)
    fmt::print("{}: not run\n{}\nverdict: protocol error ({}, found by the verifier before the run)\n", e.name, err.what(), err.check);
    return cli::exit_protocol;
  }
  const ir::Kernel& k = *built;
  const auto inputs = entry_inputs(e, values, k, 1);
  const interp::result r = interp::run(k, inputs);
  fmt::print("{}: interpreter, policy eager, inputs seeded random (--input-seed 1)\n", e.name);
  if (!r.ok()) {
    for (auto const& d : r.diagnostics) fmt::print("{}\n", d.message);
    fmt::print("verdict: protocol error ({} after {} steps)\n", interp::check_name(r.diagnostics.front().kind), r.steps);
    return cli::exit_protocol;
  }
  auto expected = inputs;
  e.reference(expected, values);
  return cli::compare_with_reference(k, r.buffers, expected, "the reference", r.steps, interp::tolerance_of(k, r, inputs));
}

}  // namespace

int main(int argc, char** argv) {
  using namespace stagecraft;
  try {
    std::vector<kernel_entry const*> selected;
    for (int i = 1; i < argc; ++i) selected.push_back(&registry::global().find(argv[i]));
    if (selected.empty()) selected = registry::global().all();
    if (selected.empty()) {
      fmt::print(stderr, "{}: no kernel is linked into this runner\n", argv[0]);
      return cli::exit_usage;
    }
    int worst = cli::exit_ok;
    for (auto const* e : selected)
      if (int rc = run_one(*e); rc != cli::exit_ok && worst == cli::exit_ok) worst = rc;
    return worst;
  } catch (usage_error const& err) {
    fmt::print(stderr, "{}\n", err.what());
    return cli::exit_usage;
  } catch (std::exception const& err) {
    fmt::print(stderr, "internal error: {}\n", err.what());
    return cli::exit_internal;
  }
}
