// Fuzz target: mutated IR through the whole pipeline a kernel takes.
//
// The verifier is the contract: whatever it rejects must be rejected with a VerifyError (never a
// crash), and whatever it accepts must print, hash, generate and interpret without undefined
// behaviour or an unexpected exception. The seed corpus is the lowered examples
// (corpus/ir/seed-*, written by fuzz_seeds), so mutations start from real kernels.
#include <cstdint>
#include <cstdlib>
#include <cstdio>

#include "ir_codec.hpp"
#include "stagecraft/interp/interp.hpp"
#include "stagecraft/nvrtc/codegen.hpp"

using namespace stagecraft;

namespace {

[[noreturn]] void violated(const char* what) {
  std::fprintf(stderr, "fuzz_ir: property violated: %s\n", what);
  std::abort();
}

// What the interpreter is given, kept small so one input runs in milliseconds: the verifier
// bounds what is legal, not what is quick.
bool small_enough_to_interpret(ir::Kernel const& k) {
  std::int64_t ctas = k.grid[0] * k.grid[1] * k.grid[2];
  if (ctas > 16 || k.num_vars > 256) return false;
  for (auto const& p : k.params) {
    std::int64_t n = 1;
    for (auto e : p.shape) n *= e;  // verified: at most 2^48 bytes
    if (n > (1 << 16)) return false;
  }
  std::int64_t barriers = 0;
  for (auto const& a : k.allocs)
    if (a.kind == ir::AllocKind::barrier || a.kind == ir::AllocKind::cluster_barrier) {
      std::int64_t n = 1;
      for (auto e : a.shape) n *= e;
      barriers += n;
    }
  return barriers <= 64;
}

// FUZZ_IR_VERBOSE=1: say how far each input got (to see what a corpus exercises).
void reached(const char* stage) {
  static const bool verbose = std::getenv("FUZZ_IR_VERBOSE") != nullptr;
  if (verbose) std::fprintf(stderr, "fuzz_ir: %s\n", stage);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
  const ir::Kernel k = fuzz::decode(data, size);
  // The codec is canonical: what it writes reads back to the same bytes.
  const std::string bytes = fuzz::encode(k);
  if (fuzz::encode(fuzz::decode(bytes)) != bytes) violated("encode(decode(encode(k))) != encode(k)");

  try {
    ir::verify(k);
  } catch (ir::VerifyError const& e) {
    reached(e.what());
    // Rejected IR must still be printable (error reports show it), without blowing up.
    (void)ir::print(k);
    return 0;
  }

  const std::string listing = ir::print(k);
  const ir::Kernel copy = fuzz::decode(bytes);
  if (ir::print(copy) != listing || ir::hash(copy) != ir::hash(k)) violated("print / hash differ between equal kernels");

  try {
    const auto g = nvrtc::generate(k);
    if (g.source.empty() || g.entry != k.name) violated("generated code without a source or with another entry name");
  } catch (nvrtc::unsupported const&) {
    // Something the IR may say but this backend does not express yet: a clean refusal.
  }

  if (!small_enough_to_interpret(k)) {
    reached("verified and generated; too large to interpret here");
    return 0;
  }
  std::vector<host_tensor> inputs;
  std::uint64_t state = ir::hash(k) | 1;
  for (auto const& p : k.params) {
    auto t = host_tensor::zeros(p.dtype, p.shape);
    for (std::int64_t i = 0; i < t.elements(); ++i) {
      state ^= state << 13;
      state ^= state >> 7;
      state ^= state << 17;
      t.set(i, static_cast<double>(static_cast<std::int64_t>(state % 17) - 8));
    }
    inputs.push_back(std::move(t));
  }
  interp::options o;
  o.schedule = static_cast<interp::policy>(ir::hash(k) % 4);
  o.seed = ir::hash(k) >> 8;
  o.max_steps = 20000;
  const auto r1 = interp::run(k, inputs, o);
  // Deterministic: the same kernel, inputs and options give the same result.
  const auto r2 = interp::run(copy, inputs, o);
  reached(r1.ok() ? "interpreted: no diagnostic" : r1.diagnostics.front().message.c_str());
  if (r1.steps != r2.steps || r1.diagnostics.size() != r2.diagnostics.size()) violated("two identical runs differ");
  for (std::size_t i = 0; i < r1.buffers.size(); ++i)
    if (r1.buffers[i].bytes != r2.buffers[i].bytes) violated("two identical runs wrote different buffers");
  return 0;
}
