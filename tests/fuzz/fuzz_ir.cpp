// Fuzz target: mutated IR through the whole pipeline a kernel takes.
//
// The verifier is the contract: whatever it rejects must be rejected with a VerifyError (never a
// crash), and whatever it accepts must print, hash, generate and interpret without undefined
// behaviour or an unexpected exception. The seed corpus is the lowered examples
// (corpus/ir/seed-*, written by fuzz_seeds), so mutations start from real kernels.
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>

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

#ifdef STAGECRAFT_LIBFUZZER
// Structure-aware mutation: most byte-level mutations of an encoded kernel break an invariant
// the verifier checks first, so few reach the backends. Three times in four the kernel is
// decoded, given a few small semantic edits (an id, an extent, an op, a statement copied into
// another body) and re-encoded; otherwise libFuzzer mutates the bytes.
// Any dtype the IR has, the fp8 ones included (ir::last_dtype follows the enum).
template <class R>
ir::DType any_dtype(R& rng) {
  return static_cast<ir::DType>(rng() % (static_cast<unsigned>(ir::last_dtype) + 1));
}
template <class R>
std::int64_t tweak(std::int64_t v, R& rng) {
  const auto u = static_cast<std::uint64_t>(v);  // wrapping: the edit itself must not be UB
  switch (rng() % 8) {
    case 0: return static_cast<std::int64_t>(u + 1);
    case 1: return static_cast<std::int64_t>(u - 1);
    case 2: return static_cast<std::int64_t>(u * 2);
    case 3: return v / 2;
    case 4: return 0;
    case 5: return static_cast<std::int64_t>(rng() % 9) - 1;
    case 6: return static_cast<std::int64_t>(0 - u);
    default: return static_cast<std::int64_t>(rng() % 300);
  }
}

template <class R>
void mutate_one(ir::Kernel& k, R& rng) {
  auto pick = [&](std::size_t n) { return n ? static_cast<std::int32_t>(rng() % n) : ir::none; };
  auto any_of = [&](std::size_t n) { return rng() % 8 == 0 ? ir::none : pick(n); };
  switch (rng() % 10) {
    case 0: {  // an index expression
      if (k.exprs.empty()) return;
      auto& e = k.exprs[pick(k.exprs.size())];
      const auto r = rng() % 4;
      if (r == 0) e.value = tweak(e.value, rng);
      else if (r == 1) e.op = static_cast<ir::ExprOp>(rng() % 21);
      else if (r == 2) e.a = any_of(k.exprs.size());
      else e.b = any_of(k.exprs.size());
      return;
    }
    case 1: case 2: {  // a statement's operands
      if (k.stmts.empty()) return;
      auto& s = k.stmts[pick(k.stmts.size())];
      switch (rng() % 8) {
        case 0: s.n = tweak(s.n, rng); break;
        case 1: s.flag = !s.flag; break;
        case 2: if (!s.refs.empty()) s.refs[rng() % s.refs.size()] = any_of(k.refs.size()); break;
        case 3: s.value = any_of(k.values.size()); break;
        case 4: s.e0 = any_of(k.exprs.size()); break;
        case 5: s.e1 = any_of(k.exprs.size()); break;
        case 6: if (rng() % 2) s.axes.push_back(static_cast<int>(rng() % 3)); else if (!s.axes.empty()) s.axes.pop_back(); break;
        default: s.op = static_cast<ir::StmtOp>(3 + rng() % 12); break;  // among the leaf ops
      }
      return;
    }
    case 3: {  // a memory reference
      if (k.refs.empty()) return;
      auto& r = k.refs[pick(k.refs.size())];
      const auto c = rng() % 4;
      if (c == 0 && !r.index.empty()) r.index[rng() % r.index.size()] = pick(k.exprs.size());
      else if (c == 1 && !r.block.empty()) r.block[rng() % r.block.size()] = pick(k.exprs.size());
      else if (c == 2 && !r.shape.empty()) { auto& x = r.shape[rng() % r.shape.size()]; x = tweak(x, rng); }
      else r.id = pick(r.base == ir::RefBase::param ? k.params.size() : k.allocs.size());
      return;
    }
    case 4: {  // an allocation
      if (k.allocs.empty()) return;
      auto& a = k.allocs[pick(k.allocs.size())];
      switch (rng() % 6) {
        case 0: if (!a.shape.empty()) { auto& x = a.shape[rng() % a.shape.size()]; x = tweak(x, rng); } break;
        case 1: a.swizzle = std::array{0, 32, 64, 128}[rng() % 4]; break;
        case 2: a.arrivals = static_cast<int>(tweak(a.arrivals, rng)); break;
        case 3: a.dtype = any_dtype(rng); break;
        case 4: a.orders_tensor_core = !a.orders_tensor_core; break;
        default: a.collective_axes = rng() % 2 ? std::vector<int>{} : std::vector<int>{static_cast<int>(rng() % 3)}; break;
      }
      return;
    }
    case 5: {  // a parameter
      if (k.params.empty()) return;
      auto& p = k.params[pick(k.params.size())];
      const auto c = rng() % 4;
      if (c == 0) p.dtype = any_dtype(rng);
      else if (c == 1) p.workspace = !p.workspace;  // kernel-owned or the caller's: every launcher must agree
      else if (!p.shape.empty()) { auto& x = p.shape[rng() % p.shape.size()]; x = tweak(x, rng); }
      return;
    }
    case 6: {  // the launch
      switch (rng() % 6) {
        case 0: k.grid[rng() % 3] = tweak(k.grid[0], rng); break;
        case 1:
          k.roles = 1 + static_cast<int>(rng() % 4);
          // Sometimes roles of one warp (a warpgroup first or not, or a list that does not match).
          k.role_warps.clear();
          if (rng() % 2)
            for (int r = 0; r < k.roles + static_cast<int>(rng() % 2); ++r) k.role_warps.push_back(rng() % 2 ? 1 : 4);
          break;
        case 2: k.cluster[rng() % 3] = 1 + static_cast<std::int64_t>(rng() % 4); break;
        case 3: k.cluster_rank = static_cast<int>(rng() % 4); break;
        case 4: k.grid_rank = 1 + static_cast<int>(rng() % 3); break;
        default: k.target = k.target == ir::Target::sm_90a ? ir::Target::sm_100a : ir::Target::sm_90a; break;
      }
      return;
    }
    case 7: {  // a tile value
      if (k.values.empty()) return;
      auto& v = k.values[pick(k.values.size())];
      switch (rng() % 6) {
        case 0: v.op = static_cast<ir::ValueOp>(rng() % ir::value_op_count); break;
        case 5: v.c = any_of(k.values.size()); break;
        case 1: v.scalar = static_cast<double>(tweak(std::abs(v.scalar) < 1e15 ? static_cast<std::int64_t>(v.scalar) : 0, rng)); break;
        case 2: v.dtype = any_dtype(rng); break;
        case 3: v.a = any_of(k.values.size()); break;
        default: v.ref = any_of(k.refs.size()); break;
      }
      return;
    }
    default: {  // a leaf statement copied into a body, two children swapped, or one dropped
      std::vector<std::size_t> seqs, leaves;
      for (std::size_t i = 0; i < k.stmts.size(); ++i)
        (k.stmts[i].op == ir::StmtOp::seq ? seqs : leaves).push_back(i);
      if (seqs.empty()) return;
      const auto seq = seqs[rng() % seqs.size()];
      const auto c = rng() % 3;
      if (c == 0 && !leaves.empty()) {
        const auto copy = k.stmts[leaves[rng() % leaves.size()]];
        if (!copy.body.empty()) return;
        k.stmts.push_back(copy);
        auto& body = k.stmts[seq].body;  // after the push, which may move the statements
        body.insert(body.begin() + static_cast<std::ptrdiff_t>(rng() % (body.size() + 1)), static_cast<ir::StmtId>(k.stmts.size() - 1));
        return;
      }
      auto& body = k.stmts[seq].body;
      if (c == 1 && body.size() >= 2) {
        std::swap(body[rng() % body.size()], body[rng() % body.size()]);
      } else if (!body.empty()) {  // a leaf child dropped: it becomes an empty seq (arena ids stay put)
        const auto child = body[rng() % body.size()];
        if (child >= 0 && child < static_cast<ir::StmtId>(k.stmts.size()) && k.stmts[child].body.empty()) k.stmts[child] = ir::Stmt{ir::StmtOp::seq};
      }
      return;
    }
  }
}
#endif

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
    // Rejected IR is not printed here: the printer is robust to it (no unbounded recursion,
    // tests/unit/test_verify.cpp), but a corrupted DAG may expand to millions of nodes, which
    // would make every such input a fuzzer timeout.
    reached(e.what());
    return 0;
  }

  const std::string listing = ir::print(k);
  const ir::Kernel copy = fuzz::decode(bytes);
  if (ir::print(copy) != listing || ir::hash(copy) != ir::hash(k)) violated("print / hash differ between equal kernels");

  try {
    const auto g = nvrtc::generate(k);
    if (g.source.empty() || g.entry != "stagecraft_" + k.name) violated("generated code without a source or with another entry name");
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

#ifdef STAGECRAFT_LIBFUZZER
extern "C" std::size_t LLVMFuzzerMutate(std::uint8_t* data, std::size_t size, std::size_t max_size);

extern "C" std::size_t LLVMFuzzerCustomMutator(std::uint8_t* data, std::size_t size, std::size_t max_size, unsigned seed) {
  std::minstd_rand rng(seed);
  if (rng() % 4 == 0) return LLVMFuzzerMutate(data, size, max_size);
  ir::Kernel k = fuzz::decode(data, size);
  for (int n = 1 + static_cast<int>(rng() % 3); n > 0; --n) mutate_one(k, rng);
  const std::string out = fuzz::encode(k);
  if (out.size() > max_size) return LLVMFuzzerMutate(data, size, max_size);
  std::memcpy(data, out.data(), out.size());
  return out.size();
}
#endif
