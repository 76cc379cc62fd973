// The tensor-core numbers in the generated CUDA C++, evaluated for every thread against the
// shared layout descriptions (ir/wgmma.hpp, ir/tcgen05.hpp).
//
// The host backend does not run wgmma or tcgen05 yet, and ptxas accepts any register order,
// descriptor start or TMEM address: a wrong one is valid PTX that computes the wrong matrix. So
// these tests take the expressions the generator emits for A-from-register packing, wgmma
// descriptor starts, D registers and tcgen05.ld/st addresses, evaluate them for each of the 128
// threads (a small integer evaluator below, not a match of their spelling), and require the
// element each thread moves to be the one the ISA's layout (as the IR's descriptions encode it)
// puts there.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <stagecraft/ir/swizzle.hpp>
#include <stagecraft/ir/tcgen05.hpp>
#include <stagecraft/ir/wgmma.hpp>
#include <stagecraft/nvrtc/codegen.hpp>
#include <stagecraft/registry.hpp>
#include <stagecraft/stagecraft.hpp>

#include <fmt/format.h>

#include "../interp/stmatrix_kernels.hpp"

using namespace stagecraft;

namespace {

// ---- an evaluator for the generator's integer expressions ----------------------------------------
// Integer literals (u, LL, ull suffixes), named variables, + - * / % << >> & |, parentheses and
// static_cast<T>(x), taken as x: enough for the index and address arithmetic the generator
// writes. Anything else (a call, an unknown name) throws, so a changed expression fails the
// test loudly rather than being misread.
std::string without_casts(std::string const& text) {
  static const std::regex cast(R"(static_cast<[^<>]*>)");
  return std::regex_replace(text, cast, "");
}
class evaluator {
 public:
  // `text` without its static_casts (without_casts()).
  evaluator(std::string const& text, std::map<std::string, std::int64_t> const& vars) : s_(text), vars_(vars) {}
  std::int64_t run() {
    const auto v = bit_or();
    skip();
    if (p_ != s_.size()) fail("unexpected text");
    return v;
  }

 private:
  [[noreturn]] void fail(const char* why) const { throw std::runtime_error(std::string(why) + " at '" + s_.substr(p_) + "' in '" + s_ + "'"); }
  void skip() {
    while (p_ < s_.size() && s_[p_] == ' ') ++p_;
  }
  bool eat(std::string const& op) {
    skip();
    if (s_.compare(p_, op.size(), op) != 0) return false;
    // '<' of '<<' is not a comparison, '|' of '||' not a bitwise or: neither is generated here.
    p_ += op.size();
    return true;
  }
  std::int64_t bit_or() {
    auto v = bit_and();
    while (eat("|")) v |= bit_and();
    return v;
  }
  std::int64_t bit_and() {
    auto v = shift();
    while (eat("&")) v &= shift();
    return v;
  }
  std::int64_t shift() {
    auto v = add();
    for (;;) {
      if (eat("<<")) v <<= add();
      else if (eat(">>")) v >>= add();
      else return v;
    }
  }
  std::int64_t add() {
    auto v = mul();
    for (;;) {
      if (eat("+")) v += mul();
      else if (eat("-")) v -= mul();
      else return v;
    }
  }
  std::int64_t mul() {
    auto v = unary();
    for (;;) {
      if (eat("*")) v *= unary();
      else if (eat("/")) {
        const auto d = unary();
        if (d == 0) fail("division by zero");
        v /= d;
      } else if (eat("%")) {
        const auto d = unary();
        if (d == 0) fail("modulo by zero");
        v %= d;
      } else return v;
    }
  }
  std::int64_t unary() {
    if (eat("-")) return -unary();
    return primary();
  }
  std::int64_t primary() {
    skip();
    if (eat("(")) {
      const auto v = bit_or();
      if (!eat(")")) fail("missing )");
      return v;
    }
    if (p_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[p_]))) {
      std::size_t n = 0;
      const auto v = std::stoll(s_.substr(p_), &n, 0);
      p_ += n;
      while (p_ < s_.size() && (s_[p_] == 'u' || s_[p_] == 'U' || s_[p_] == 'l' || s_[p_] == 'L')) ++p_;
      return v;
    }
    const auto b = p_;
    while (p_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[p_])) || s_[p_] == '_')) ++p_;
    if (b == p_) fail("expected a value");
    const auto name = s_.substr(b, p_ - b);
    auto it = vars_.find(name);
    if (it == vars_.end()) fail(("unknown name " + name).c_str());
    return it->second;
  }
  std::string const& s_;
  std::map<std::string, std::int64_t> const& vars_;
  std::size_t p_ = 0;
};

// An expression of the generated code, parsed for each set of values.
class expression {
 public:
  expression() = default;
  explicit expression(std::string const& text) : text_(without_casts(text)) {}
  std::int64_t operator()(std::map<std::string, std::int64_t> const& vars) const { return evaluator(text_, vars).run(); }
  std::string const& text() const { return text_; }

 private:
  std::string text_;
};
std::int64_t eval(std::string const& text, std::map<std::string, std::int64_t> const& vars) { return expression(text)(vars); }

TEST_CASE("the test's evaluator computes C's integer arithmetic", "[codegen][numbers][mma]") {
  const std::map<std::string, std::int64_t> v{{"lane", 77}, {"c0", 32}, {"j", 5}};
  CHECK(eval("static_cast<unsigned>(lane / 32 * 32) << 16", v) == (64 << 16));
  CHECK(eval("static_cast<long long>(lane) * 64 + (c0 + j) * 2", v) == 77 * 64 + 74);
  CHECK(eval("(0x10u | 3u) & 0x3FFFu", v) == 0x13);
  CHECK(eval("7LL % 4LL - -2", v) == 5);
  CHECK_THROWS(eval("lane + f", v));
  CHECK_THROWS(eval("sc::swz<128>(lane)", v));
}

// ---- reading the generated text -------------------------------------------------------------------
std::vector<std::smatch> all_matches(std::string const& text, std::regex const& re) {
  std::vector<std::smatch> out;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator(); ++it) out.push_back(*it);
  return out;
}

// The text of every op of kind `op`, by the generator's per-op spans.
std::vector<std::pair<ir::StmtId, std::string>> op_texts(ir::Kernel const& k, nvrtc::generated const& g, ir::StmtOp op) {
  std::vector<std::pair<ir::StmtId, std::string>> out;
  for (auto const& o : g.ops)
    if (o.kind == op) out.emplace_back(static_cast<ir::StmtId>(o.op), g.source.substr(o.begin, o.end - o.begin));
  (void)k;
  return out;
}

// `a | b << 16` split at its top-level '|' (none inside parentheses): {a, b}.
std::pair<std::string, std::string> halves(std::string const& packed) {
  int depth = 0;
  for (std::size_t i = 0; i + 2 < packed.size(); ++i) {
    if (packed[i] == '(') ++depth;
    else if (packed[i] == ')') --depth;
    else if (depth == 0 && packed.compare(i, 3, " | ") == 0) {
      std::string hi = packed.substr(i + 3);
      const std::string tail = " << 16";
      REQUIRE(hi.size() > tail.size());
      REQUIRE(hi.compare(hi.size() - tail.size(), tail.size(), tail) == 0);
      return {packed.substr(0, i), hi.substr(0, hi.size() - tail.size())};
    }
  }
  FAIL("no top-level ' | ' in " << packed);
  return {};
}

// ---- wgmma ---------------------------------------------------------------------------------------

// S = Q K^T into an (M, 64) accumulator, then O += bf16(S) V with S as A from registers: the
// generator packs A's registers straight from S's D fragment.
template <long long M>
ir::Kernel p_times_v() {
  return lower(kernel<sm_90a>("pv", grid(1), threads(1_c), smem<bf16>(shape(int_c<M>, 32_c), swizzle(64_c)),
                              smem<bf16>(shape(64_c, 32_c), swizzle(64_c)), smem<bf16>(shape(64_c, 64_c), swizzle(128_c)),
                              accumulator<f32>(shape(int_c<M>, 64_c)), accumulator<f32>(shape(int_c<M>, 64_c)),
                              [](auto q, auto kk, auto v, auto s, auto o) {
                                return seq(store(s, 0.0f), store(o, 0.0f), wgmma(s, q, transpose(kk)), wgmma_commit(), wgmma_wait(0_c),
                                           wgmma(o, cast<bf16>(load(s)), v), wgmma_commit(), wgmma_wait(0_c));
                              }));
}

// Every A-from-registers block of a wgmma: register r of block (mb, ks) must hold A's fragment
// elements 2r (low half) and 2r + 1 (high half), i.e. the D registers of the source accumulator
// that, in every thread, hold A's element (64 mb + row, 16 ks + col) of the ISA's A layout.
// Returns the number of registers checked.
int check_a_from_registers(ir::Kernel const& k, std::string const& text) {
  const auto p = [&] {
    for (auto const& s : k.stmts)
      if (s.op == ir::StmtOp::wgmma) {
        const auto pl = ir::wgmma::plan_of(k, s);
        if (pl.a_in_registers) return pl;
      }
    FAIL("no wgmma with A from registers");
    return ir::wgmma::plan{};
  }();
  const std::regex block(R"(unsigned ra(\d+)_(\d+)\[4\] = \{  // A of m block (\d+), k step (\d+)\n((?:.*\n){4}))");
  const std::regex reg(R"(acc(\d+)\[(\d+)\])");
  auto blocks = all_matches(text, block);
  REQUIRE(static_cast<std::int64_t>(blocks.size()) == p.m_blocks() * p.k_steps());
  int checked = 0;
  std::set<std::pair<std::int64_t, std::int64_t>> seen;
  for (auto const& b : blocks) {
    const std::int64_t mb = std::stoll(b[1]), ks = std::stoll(b[2]);
    CHECK(std::stoll(b[3]) == mb);
    CHECK(std::stoll(b[4]) == ks);
    seen.insert({mb, ks});
    std::string lines = b[5];
    std::vector<std::string> regs;
    for (std::size_t at = 0; at < lines.size();) {
      const auto nl = lines.find('\n', at);
      std::string l = lines.substr(at, nl - at);
      at = nl + 1;
      l = std::regex_replace(l, std::regex(R"(^\s+|,?\s*$)"), "");
      regs.push_back(l);
    }
    REQUIRE(regs.size() == 4);
    for (int r = 0; r < 4; ++r) {
      const auto [lo, hi] = halves(regs[static_cast<std::size_t>(r)]);
      for (int h = 0; h < 2; ++h) {
        const int i = 2 * r + h;  // the A fragment element this half must hold
        INFO("m block " << mb << ", k step " << ks << ", register " << r << (h ? " high" : " low") << " half: " << (h ? hi : lo));
        auto m = all_matches(h ? hi : lo, reg);
        REQUIRE(m.size() == 1);
        const int alloc = std::stoi(m[0][1]);
        const auto reg_index = std::stoll(m[0][2]);
        auto const& acc = k.allocs[static_cast<std::size_t>(alloc)];
        REQUIRE(acc.kind == ir::AllocKind::accumulator);
        REQUIRE(acc.dtype == ir::DType::f32);
        const std::int64_t per_block = acc.shape[1] / 2;  // f32 D registers per m64 block
        const std::int64_t src_mb = reg_index / per_block, j = reg_index % per_block;
        for (int t = 0; t < 128; ++t) {
          const auto d = ir::wgmma::accumulator_element(t, static_cast<int>(j));
          const auto a = ir::wgmma::a_element(t, i);
          INFO("thread " << t << ": register " << reg_index << " holds S(" << 64 * src_mb + d.row << ", " << d.col << "), A's element " << i
                         << " is (" << 64 * mb + a.row << ", " << 16 * ks + a.col << ")");
          REQUIRE(64 * src_mb + d.row == 64 * mb + a.row);
          REQUIRE(d.col == 16 * ks + a.col);
        }
        ++checked;
      }
    }
  }
  CHECK(static_cast<std::int64_t>(seen.size()) == p.m_blocks() * p.k_steps());
  return checked;
}

// Every instruction of one wgmma with A in SMEM: its descriptors, decoded, must make the tensor
// core read A's stored element (64 mb + m, 16 ks + k) and B's (n, 16 ks + k) for every m, n, k
// of the instruction (ir::wgmma::element_address against operand_layout::offset, both swizzled
// as the absolute address is), and its D operands must be block mb's registers, in order.
void check_smem_wgmma(ir::Kernel const& k, ir::Stmt const& s, std::string const& text) {
  const auto p = ir::wgmma::plan_of(k, s);
  REQUIRE_FALSE(p.a_in_registers);
  // Each operand's descriptor is built once (its constant bits OR the start address >> 4); an
  // instruction adds its step, which must be its byte offset >> 4.
  auto base = [&](const char* name, const char* addr) {
    auto b = all_matches(text, std::regex(std::string(R"(const unsigned long long )") + name + R"(0 = 0x([0-9a-f]{16})ull \| \()" + addr +
                                          R"( >> 4\);)"));
    REQUIRE(b.size() == 1);
    return std::stoull(b[0][1], nullptr, 16);
  };
  const std::uint64_t a0 = base("da", "a_addr"), b0 = base("db", "b_addr");
  const std::regex instr(R"(\{  // m block (\d+), k step (\d+)\n\s*const unsigned long long db = db0 \+ (\d+)ull;  // \+ (\d+) B\n)"
                         R"(\s*const unsigned long long da = da0 \+ (\d+)ull;  // \+ (\d+) B\n#ifndef SC_HOST\n[^\n]*\n\s*: ([^\n]*)\n)"
                         R"([^\n]*\n#else\n\s*sc::wgmma_host\(\{\d+, \d+, \d+, \d+, \d+, \d+\}, &acc\d+\[(\d+)\], da, nullptr, db\);)");
  auto m = all_matches(text, instr);
  REQUIRE(static_cast<std::int64_t>(m.size()) == p.m_blocks() * p.k_steps());
  const int abits = ir::dtype_bits(p.a_type), bbits = ir::dtype_bits(p.b_type);
  const std::int64_t regs = p.n / 2;  // f32 D registers per m64 block
  // The operands' views start at the beginning of a 1024-byte swizzle pattern (the front end
  // requires it); the absolute address only matters through the swizzle, so 0 stands for it.
  auto storage = [](ir::wgmma::operand_layout const& l, std::int64_t mn, std::int64_t kk) {
    return ir::swizzle_address(static_cast<std::uint32_t>(l.start(mn, kk)), l.swizzle);
  };
  std::set<std::pair<std::int64_t, std::int64_t>> seen;
  for (auto const& x : m) {
    const std::int64_t mb = std::stoll(x[1]), ks = std::stoll(x[2]);
    INFO("m block " << mb << ", k step " << ks);
    seen.insert({mb, ks});
    REQUIRE(std::stoull(x[3]) == std::stoull(x[4]) >> 4);
    REQUIRE(std::stoull(x[5]) == std::stoull(x[6]) >> 4);
    const auto db = ir::wgmma::decode(b0 + std::stoull(x[3]));
    const auto da = ir::wgmma::decode(a0 + std::stoull(x[5]));
    for (std::int64_t kk = 0; kk < p.ik; ++kk) {
      for (std::int64_t mm = 0; mm < 64; ++mm) {
        INFO("A element (" << 64 * mb + mm << ", " << 16 * ks + kk << ")");
        REQUIRE(ir::wgmma::element_address(da, p.a.major, abits, mm, kk) == storage(p.a, 64 * mb + mm, ks * p.ik + kk));
      }
      for (std::int64_t nn = 0; nn < p.n; ++nn) {
        INFO("B element (" << nn << ", " << 16 * ks + kk << ")");
        REQUIRE(ir::wgmma::element_address(db, p.b.major, bbits, nn, kk) == storage(p.b, nn, ks * p.ik + kk));
      }
    }
    // D: "+f"(accA[mb * regs + r]) for r = 0 .. regs - 1, in order.
    const std::string outs = x[7];  // the matches below point into it
    auto d = all_matches(outs, std::regex(R"("\+f"\(acc(\d+)\[(\d+)\]\))"));
    REQUIRE(static_cast<std::int64_t>(d.size()) == regs);
    for (std::int64_t r = 0; r < regs; ++r) {
      CHECK(std::stoll(d[static_cast<std::size_t>(r)][1]) == k.refs[s.refs[0]].id);
      CHECK(std::stoll(d[static_cast<std::size_t>(r)][2]) == mb * regs + r);
    }
    // The host backend's form of the same instruction (under SC_HOST): block mb's first register.
    CHECK(std::stoll(x[8]) == mb * regs);
  }
  CHECK(static_cast<std::int64_t>(seen.size()) == p.m_blocks() * p.k_steps());
}

template <long long M>
ir::Kernel smem_gemm() {
  return lower(kernel<sm_90a>("mm", grid(1), threads(1_c), smem<bf16>(shape(int_c<M>, 64_c), swizzle(128_c)),
                              smem<bf16>(shape(128_c, 64_c), swizzle(128_c)), accumulator<f32>(shape(int_c<M>, 128_c)),
                              [](auto a, auto b, auto acc) { return seq(store(acc, 0.0f), wgmma(acc, a, transpose(b)), wgmma_commit(), wgmma_wait(0_c)); }));
}

}  // namespace

TEST_CASE("wgmma A from registers: register r packs A's elements 2r (low half) and 2r + 1 (high half), for M = 64 and 128",
          "[codegen][numbers][mma][wgmma]") {
  for (auto const& k : {p_times_v<64>(), p_times_v<128>()}) {
    INFO(ir::print(k));
    const auto g = nvrtc::generate(k);
    int checked = 0;
    for (auto const& [id, text] : op_texts(k, g, ir::StmtOp::wgmma))
      if (ir::wgmma::plan_of(k, k.stmts[static_cast<std::size_t>(id)]).a_in_registers) checked += check_a_from_registers(k, text);
    const std::int64_t m_blocks = k.allocs[3].shape[0] / 64;
    CHECK(checked == m_blocks * 4 * 8);  // (M / 64) blocks x 4 k steps (K = 64) x 8 halves
  }
}

TEST_CASE("wgmma with A in SMEM: each m64 block's descriptor reads its own 64 rows, each k step its own 16 columns, into its own D registers",
          "[codegen][numbers][mma][wgmma]") {
  std::vector<ir::Kernel> kernels{smem_gemm<64>(), smem_gemm<128>()};
  for (auto const& name : {"gemm_small", "gemm_hopper", "gemm_fp8", "attention_hopper"}) {
    auto const& e = registry::global().find(name);
    kernels.push_back(e.build(registry::resolve(e, {})));
  }
  int m128 = 0;
  for (auto const& k : kernels) {
    INFO("kernel " << k.name);
    const auto g = nvrtc::generate(k);
    int n = 0;
    for (auto const& [id, text] : op_texts(k, g, ir::StmtOp::wgmma)) {
      auto const& s = k.stmts[static_cast<std::size_t>(id)];
      const auto p = ir::wgmma::plan_of(k, s);
      INFO("op #" << id << ": " << text);
      if (p.a_in_registers) continue;
      check_smem_wgmma(k, s, text);
      m128 += p.m_blocks() > 1;
      ++n;
    }
    CHECK(n > 0);
  }
  CHECK(m128 > 0);  // an instruction pair of M = 128 was among them
}

// ---- tcgen05.ld / tcgen05.st -----------------------------------------------------------------------

namespace {

struct tmem_access {
  std::string tmem_var;    // the allocation's address variable, "tmem6"
  std::optional<expression> stage;  // a ring's stage (its columns: stage_columns), added to tmemN
  std::int64_t stage_columns = 0;
  std::optional<expression> first_column;  // a slice<1>'s first column, added to tmemN
  expression row_addr;     // tmemN + (lane field << 16), the stage's offset left out
  std::int64_t cols = 0, chunk = 0;  // for (int c0 = 0; c0 < cols; c0 += chunk)
  expression column;       // what the ld/st adds to row_addr
  expression f;            // the element index f
};

tmem_access parse_tmem_access(std::string const& text, const char* instr) {
  tmem_access a;
  std::smatch m;
  // The allocation's address, or a ring stage's, (tmemN + static_cast<unsigned>(stage) * columns),
  // or a slice's, (... + static_cast<unsigned>(first column)). The register-to-element mapping
  // below is relative to the view's first column.
  REQUIRE(std::regex_search(
      text, m,
      std::regex(R"(const unsigned row_addr = (?:\((tmem\d+)(?: \+ static_cast<unsigned>\((.*?)\) \* (\d+)u)?(?: \+ static_cast<unsigned>\((.*?)\))?\)|(tmem\d+)) \+ \((.*) << 16\);)")));
  a.tmem_var = m[1].matched ? m[1].str() : m[5].str();
  if (m[2].matched) a.stage = expression(m[2].str()), a.stage_columns = std::stoll(m[3]);
  if (m[4].matched) a.first_column = expression(m[4].str());
  a.row_addr = expression(a.tmem_var + " + (" + m[6].str() + " << 16)");
  REQUIRE(std::regex_search(text, m, std::regex(R"(for \(int c0 = 0; c0 < (\d+); c0 \+= (\d+)\))")));
  a.cols = std::stoll(m[1]);
  a.chunk = std::stoll(m[2]);
  REQUIRE(std::regex_search(text, m, std::regex(std::string("sc::") + instr + R"(_32x32b_x(\d+)\(row_addr \+ (.*), tr\);)")));
  CHECK(std::stoll(m[1]) == a.chunk);
  a.column = expression(m[2]);
  // Element by element, f is the element register j lands in; 16 bytes at a time (a store into
  // SMEM), f0 is the chunk's first, register j0's: evaluated at j0 = j it is register j's.
  if (std::regex_search(text, m, std::regex(R"(const long long f0 = (.*);)"))) a.f = expression(m[1]);
  else {
    REQUIRE(std::regex_search(text, m, std::regex(R"(const long long f = (.*);)")));
    a.f = expression(m[1]);
  }
  return a;
}

// The async_load_tmem under a store's value (the cast of it, or it).
ir::ValueId tmem_leaf(ir::Kernel const& k, ir::ValueId v) {
  if (v == ir::none || k.values[v].op == ir::ValueOp::load_tmem) return v;
  for (auto c : {k.values[v].a, k.values[v].b, k.values[v].c})
    if (auto l = tmem_leaf(k, c); l != ir::none) return l;
  return ir::none;
}

// The TMEM (lane, column) thread t's register j reads or writes in chunk c0, relative to the
// allocation: the address the code computes, taken apart as the ISA's 32x32b shape does (the
// address's lane field is where the warp's 32 lanes start; thread t of the warp gets lane + t %
// 32, register j column + j).
ir::tcgen05::tmem_coord tmem_target(tmem_access const& a, int t, std::int64_t c0, int j) {
  const std::uint32_t base = ir::tcgen05::tmem_address(0, 64);  // an allocation at column 64
  const std::map<std::string, std::int64_t> vars{{"lane", t}, {"c0", c0}, {"j", j}, {a.tmem_var, base}};
  const auto row_addr = static_cast<std::uint32_t>(a.row_addr(vars));
  const auto addr = static_cast<std::uint32_t>(row_addr + a.column(vars));
  return {static_cast<int>(ir::tcgen05::tmem_lane(addr)) + t % 32,
          static_cast<int>(ir::tcgen05::tmem_column(addr)) - static_cast<int>(ir::tcgen05::tmem_column(base)) + j};
}

}  // namespace

TEST_CASE("tcgen05.ld: thread t's register j reads TMEM lane t, 32-bit column c0 + j, and lands at row t, column c0 + j",
          "[codegen][numbers][mma][tcgen05]") {
  // The store-from-TMEM epilogues of the Blackwell examples (D: row i is lane i, column j column j).
  int checked = 0;
  for (auto const& name : {"gemm_blackwell", "gemm_blackwell_2cta", "gemm_blackwell_ts"}) {
    auto const& e = registry::global().find(name);
    const auto k = e.build(registry::resolve(e, {}));
    const auto g = nvrtc::generate(k);
    for (auto const& [id, text] : op_texts(k, g, ir::StmtOp::store)) {
      if (text.find("sc::tmem_ld_32x32b_x") == std::string::npos) continue;
      INFO(name << " op #" << id << ":\n" << text);
      const auto a = parse_tmem_access(text, "tmem_ld");
      // A ring's stage s starts s * (its columns) after the allocation's first column.
      auto const& al = k.allocs[static_cast<std::size_t>(std::stoi(a.tmem_var.substr(4)))];
      CHECK(a.stage.has_value() == (al.shape.size() == 3));
      if (a.stage) CHECK(a.stage_columns == ir::tmem_stage_columns(al));
      // A subtile (slice<1> of the accumulator): the load's columns, a multiple of 16 of them.
      auto const& tref = k.refs[k.values[tmem_leaf(k, k.stmts[static_cast<std::size_t>(id)].value)].ref];
      CHECK(a.first_column.has_value() == !tref.block.empty());
      if (a.first_column) CHECK(a.cols == tref.shape[1]);
      // The destination is (128, cols) row-major: f = row * cols + column.
      std::string wrong;  // the first thread and register that moves the wrong element
      for (int t = 0; t < 128 && wrong.empty(); ++t)
        for (std::int64_t c0 = 0; c0 < a.cols && wrong.empty(); c0 += a.chunk)
          for (int j = 0; j < a.chunk && wrong.empty(); ++j) {
            const auto at = tmem_target(a, t, c0, j);
            const auto f = a.f({{"lane", t}, {"c0", c0}, {"j", j}, {"j0", j}});
            const auto isa = ir::tcgen05::ld_32x32b(t, j);  // relative to the address of lane 32 w, column c0
            // The warp's own sub-partition, lane by thread; the columns the address names; and
            // D's row i is lane i, column j column j.
            if (at.lane != isa.lane || at.column != c0 + isa.column || f / a.cols != at.lane || f % a.cols != at.column)
              wrong = "thread " + std::to_string(t) + ", c0 " + std::to_string(c0) + ", register " + std::to_string(j) + " reads TMEM lane " +
                      std::to_string(at.lane) + " column " + std::to_string(at.column) + " (the ISA's 32x32b: lane " + std::to_string(isa.lane) +
                      ", column " + std::to_string(c0 + isa.column) + ") into element " + std::to_string(f) + " (row " + std::to_string(f / a.cols) +
                      ", column " + std::to_string(f % a.cols) + ")";
          }
      CHECK(wrong == "");
      ++checked;
    }
  }
  CHECK(checked >= 3);
}

TEST_CASE("tcgen05.st of 16-bit A: thread t writes lane t, and column c holds k = 2c in its low half and 2c + 1 in its high half",
          "[codegen][numbers][mma][tcgen05]") {
  // gemm_blackwell_ts stores relu(A) (bf16) into TMEM for the [a_tmem] MMA: A's row i is lane i,
  // its K elements packed along the 32-bit columns, the lower K index in the lower bits.
  auto const& e = registry::global().find("gemm_blackwell_ts");
  const auto k = e.build(registry::resolve(e, {}));
  const auto g = nvrtc::generate(k);
  int checked = 0;
  for (auto const& [id, text] : op_texts(k, g, ir::StmtOp::store)) {
    if (text.find("sc::tmem_st_32x32b_x") == std::string::npos) continue;
    INFO("op #" << id << ":\n" << text);
    auto const& al = k.allocs[static_cast<std::size_t>(k.refs[k.stmts[static_cast<std::size_t>(id)].refs[0]].id)];
    REQUIRE(ir::dtype_bits(al.dtype) == 16);
    const std::int64_t K = al.shape[1];
    const auto a = parse_tmem_access(text, "tmem_st");
    CHECK(a.cols * 2 == K);  // two 16-bit elements to a 32-bit column
    std::smatch m;
    REQUIRE(std::regex_search(text, m, std::regex(R"(tr\[j\] = (.*);\n)")));
    const auto [lo, hi] = halves(m[1]);
    // The element each half converts: the index it reads, f plus a constant (the variable f,
    // then an optional " + n"), evaluated below.
    auto index_of = [](std::string const& half) {
      auto ms = all_matches(half, std::regex(R"((?:^|[^A-Za-z0-9_:.])(f(?: \+ \d+)?)(?![A-Za-z0-9_(]))"));
      REQUIRE(ms.size() >= 1);
      std::set<std::string> forms;
      for (auto const& x : ms) forms.insert(x[1].str());
      REQUIRE(forms.size() == 1);  // one element per half
      return *forms.begin();
    };
    const std::string lo_index = index_of(lo), hi_index = index_of(hi);
    const expression lo_at(lo_index), hi_at(hi_index);
    std::string wrong;  // the first thread and register that writes the wrong elements
    for (int t = 0; t < 128 && wrong.empty(); ++t)
      for (std::int64_t c0 = 0; c0 < a.cols && wrong.empty(); c0 += a.chunk)
        for (int j = 0; j < a.chunk && wrong.empty(); ++j) {
          const auto at = tmem_target(a, t, c0, j);
          const auto f = a.f({{"lane", t}, {"c0", c0}, {"j", j}});
          const auto low = lo_at({{"f", f}}), high = hi_at({{"f", f}});
          // 32x32b both ways; A's row i is lane i; k = 2c in bits 0-15, 2c + 1 in bits 16-31.
          if (at.lane != ir::tcgen05::ld_32x32b(t, j).lane || at.column != c0 + j || low / K != at.lane || high / K != at.lane ||
              low % K != 2 * at.column || high % K != 2 * at.column + 1)
            wrong = "thread " + std::to_string(t) + ", c0 " + std::to_string(c0) + ", register " + std::to_string(j) + " writes TMEM lane " +
                    std::to_string(at.lane) + " column " + std::to_string(at.column) + ": low half A[" + std::to_string(low / K) + ", " +
                    std::to_string(low % K) + "], high half A[" + std::to_string(high / K) + ", " + std::to_string(high % K) + "]";
        }
    CHECK(wrong == "");
    ++checked;
  }
  CHECK(checked == 1);
}

// ---- stmatrix: the epilogue's fragment stores ------------------------------------------------------

namespace {

// The PTX ISA's stmatrix.sync.aligned.m8n8.x4.shared.b16, as its description states it, for
// one warp: lane 8 m + r gives the address of row r of matrix m; row r of matrix m is, in order,
// the registers m of lanes 4 r, 4 r + 1, 4 r + 2, 4 r + 3, each two 16-bit elements with the
// lower address in the low half. Returns, for every (matrix, row, word, half), the lane and
// register that supply it, and the lane that gives the row's address.
struct stsm_source {
  int address_lane;  // gives the row's address
  int lane, reg;     // whose register holds the word
};
stsm_source stmatrix_isa(int matrix, int row, int word) { return {8 * matrix + row, 4 * row + word, matrix}; }

// `f(a, b)` of sc::accumulator_element(a, b) text: the element's (row, col), the call's
// arguments evaluated by the test's evaluator.
ir::wgmma::coord fragment_call(std::string const& args, std::map<std::string, std::int64_t> const& vars) {
  int depth = 0;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == '(') ++depth;
    else if (args[i] == ')') --depth;
    else if (args[i] == ',' && depth == 0)
      return ir::wgmma::accumulator_element(static_cast<int>(eval(args.substr(0, i), vars)), static_cast<int>(eval(args.substr(i + 1), vars)));
  }
  FAIL("no two arguments in " << args);
  return {};
}

// One fragment store by stmatrix, read from its text.
struct stsm_store {
  std::int64_t blocks = 0, regs = 0;  // for (mb < blocks), for (i < regs; i += 8)
  std::string e_args, f, lo, er_args, fr, address;
  std::array<int, 4> operand{};  // the instruction's register m is sm[operand[m]]
};

stsm_store parse_stsm(std::string const& text) {
  stsm_store s;
  std::smatch m;
  REQUIRE(std::regex_search(text, m, std::regex(R"(for \(int mb = 0; mb < (\d+); \+\+mb\))")));
  s.blocks = std::stoll(m[1]);
  REQUIRE(std::regex_search(text, m, std::regex(R"(for \(int i = 0; i < (\d+); i \+= 8\))")));
  s.regs = std::stoll(m[1]);
  REQUIRE(std::regex_search(text, m, std::regex(R"(for \(int q = 0; q < 4; \+\+q\))")));
  REQUIRE(std::regex_search(text, m, std::regex(R"(const sc::coord e = sc::accumulator_element\((.*)\);)")));
  s.e_args = m[1];
  REQUIRE(std::regex_search(text, m, std::regex(R"(const long long f = (.*);)")));
  s.f = std::regex_replace(m[1].str(), std::regex(R"(\be\.(row|col)\b)"), "e_$1");
  REQUIRE(std::regex_search(text, m, std::regex(R"(sm\[q\] = sc::f32x2_to_b?f16x2\((.*)\);)")));
  s.lo = m[1];
  REQUIRE(std::regex_search(text, m, std::regex(R"(const sc::coord er = sc::accumulator_element\((.*)\);)")));
  s.er_args = m[1];
  REQUIRE(std::regex_search(text, m, std::regex(R"(const long long fr = (.*);)")));
  s.fr = std::regex_replace(m[1].str(), std::regex(R"(\ber\.(row|col)\b)"), "er_$1");
  REQUIRE(std::regex_search(text, m, std::regex(R"(sc::stmatrix_x4\((.*), sm\[(\d)\], sm\[(\d)\], sm\[(\d)\], sm\[(\d)\]\);)")));
  s.address = m[1];
  for (int r = 0; r < 4; ++r) s.operand[static_cast<std::size_t>(r)] = std::stoi(m[r + 2]);
  return s;
}

// The accumulator element register index `reg` of thread t holds, for an (M, n_acc) fragment:
// (row, column) of the whole accumulator.
std::pair<std::int64_t, std::int64_t> accumulator_holds(int t, std::int64_t reg, std::int64_t n_acc) {
  const auto e = ir::wgmma::accumulator_element(t, static_cast<int>(reg % (n_acc / 2)));
  return {64 * (reg / (n_acc / 2)) + e.row, e.col};
}

// Every stmatrix of a fragment store into the SMEM view `dst` (cols columns): by the ISA's
// description, every word it writes must be the pair of destination elements at the row
// address's element + 2 word, and that pair the accumulator's (the walk's register, the same
// row, the column offset of the stored column slice); the rows it addresses must be 16
// contiguous, 16-byte aligned bytes of the layout (tiling and swizzle as ir/swizzle.hpp
// computes them, the view at its start); and the instructions together write every element of
// the destination once. Returns the number of instructions checked per warp.
std::int64_t check_stmatrix(ir::Kernel const& k, ir::Stmt const& st, std::string const& text) {
  const auto s = parse_stsm(text);
  auto const& dst = k.refs[st.refs[0]];
  auto const& al = k.allocs[static_cast<std::size_t>(dst.id)];
  REQUIRE(al.kind == ir::AllocKind::smem);
  REQUIRE(ir::dtype_bits(al.dtype) == 16);
  REQUIRE(dst.block.empty());  // a whole view (of an indexed slab): element f is its f-th
  const std::int64_t rows = dst.shape[0], cols = dst.shape[1];
  CHECK(s.blocks == rows / 64);
  CHECK(s.regs == cols / 2);
  // The address is the one element() forms for the lane's row element: the view's own swizzle.
  CHECK_THAT(s.address, Catch::Matchers::Contains("(fr)"));
  if (al.swizzle) CHECK(s.address.rfind(fmt::format("sc::swz<{}>(smem_base + ", al.swizzle), 0) == 0);
  else CHECK(s.address.rfind("smem_base + ", 0) == 0);
  // Where the walk reads the accumulator: accN[index] (f32) or sc::acc_f16(accN, index).
  std::smatch m;
  std::string reg_index;
  std::int64_t n_acc = 0;
  if (std::regex_search(s.lo, m, std::regex(R"(sc::acc_f16\(acc(\d+), ([^)]*)\))")) || std::regex_search(s.lo, m, std::regex(R"(acc(\d+)\[([^\]]*)\])"))) {
    reg_index = m[2];
    n_acc = k.allocs[static_cast<std::size_t>(std::stoi(m[1]))].shape[1];
  }
  REQUIRE_FALSE(reg_index.empty());
  // The physical byte offset of a destination element (the view at its start: a run-time index
  // moves it by whole 16-byte units, which the generator requires).
  auto physical = [&](std::int64_t f) {
    std::int64_t e = f;
    if (!al.tiling.empty()) e = ir::tiled_element(e, al.shape.back(), al.tiling[0], al.tiling[1]);
    return ir::swizzle_address(static_cast<std::uint32_t>(e * 2), al.swizzle);
  };
  std::vector<int> written(static_cast<std::size_t>(rows * cols), 0);
  std::optional<std::int64_t> slice_offset;
  std::string wrong;
  for (int w = 0; w < 4 && wrong.empty(); ++w)
    for (std::int64_t mb = 0; mb < s.blocks && wrong.empty(); ++mb)
      for (std::int64_t i = 0; i < s.regs && wrong.empty(); i += 8) {
        // What each lane of the warp supplies: its four registers' pairs and its row address.
        std::array<std::array<std::int64_t, 4>, 32> pair{};
        std::array<std::int64_t, 32> row_at{};
        for (int lane = 0; lane < 32; ++lane) {
          const int t = 32 * w + lane;
          for (int q = 0; q < 4; ++q) {
            std::map<std::string, std::int64_t> v{{"lane", t}, {"mb", mb}, {"i", i}, {"q", q}};
            const auto e = fragment_call(s.e_args, v);
            v["e_row"] = e.row, v["e_col"] = e.col;
            pair[lane][q] = eval(s.f, v);
            // The low half reads the accumulator register that holds that element.
            const auto [ar, ac] = accumulator_holds(t, eval(reg_index, v), n_acc);
            const std::int64_t off = ac - pair[lane][q] % cols;
            if (!slice_offset) slice_offset = off;
            if (ar != pair[lane][q] / cols || off != *slice_offset)
              wrong = fmt::format("thread {} register {} of instruction (mb {}, i {}) converts accumulator ({}, {}) for element ({}, {})", t, q, mb, i,
                                  ar, ac, pair[lane][q] / cols, pair[lane][q] % cols);
          }
          std::map<std::string, std::int64_t> v{{"lane", t}, {"mb", mb}, {"i", i}};
          const auto er = fragment_call(s.er_args, v);
          v["er_row"] = er.row, v["er_col"] = er.col;
          row_at[lane] = eval(s.fr, v);
        }
        for (int mx = 0; mx < 4; ++mx)
          for (int r = 0; r < 8; ++r) {
            const std::int64_t first = row_at[stmatrix_isa(mx, r, 0).address_lane];
            // 16 contiguous, aligned bytes of one row of the destination
            if (first % cols % 8 != 0 || physical(first) % 16 != 0) wrong = fmt::format("row element {} is not 16-byte aligned", first);
            for (int c = 0; c < 8; ++c)
              if (physical(first + c) != physical(first) + 2 * c) wrong = fmt::format("row element {} + {} is not contiguous", first, c);
            for (int word = 0; word < 4; ++word) {
              const auto src = stmatrix_isa(mx, r, word);
              const std::int64_t got = pair[src.lane][s.operand[static_cast<std::size_t>(src.reg)]];
              if (got != first + 2 * word)
                wrong = fmt::format("warp {}, instruction (mb {}, i {}): matrix {} row {} word {} is lane {}'s register {}, element ({}, {}), but "
                                    "the row's address (lane {}) is element ({}, {}) + {} columns",
                                    w, mb, i, mx, r, word, src.lane, src.reg, got / cols, got % cols, src.address_lane, first / cols, first % cols, 2 * word);
              else written[static_cast<std::size_t>(got)] += 1, written[static_cast<std::size_t>(got + 1)] += 1;
            }
          }
      }
  CHECK(wrong == "");
  CHECK(slice_offset.value_or(-1) % 8 == 0);
  CHECK(std::count(written.begin(), written.end(), 1) == rows * cols);  // every element once
  return s.blocks * s.regs / 8;
}

}  // namespace

TEST_CASE("stmatrix: the ISA's fragment (lane 8 m + r addresses row r of matrix m, lane 4 r + k's register m is its word k) writes each element where the layout puts it",
          "[codegen][numbers][mma][stmatrix]") {
  std::vector<ir::Kernel> kernels = testing::stmatrix::kernels();
  const std::vector<std::pair<const char*, param_values>> examples = {
      {"gemm_hopper", {}}, {"gemm_hopper", {{"stages", 3}}}, {"gemm_fp8", {}}, {"gemm_fp8", {{"acc", 16}}}, {"gemm_fp8", {{"scaled", 1}}},
      {"gemm_fp8_blockwise", {}}, {"attention_hopper", {}}, {"attention_hopper", {{"D", 128}, {"causal", 1}}},
  };
  for (auto const& [name, set] : examples) {
    auto const& e = registry::global().find(name);
    kernels.push_back(e.build(registry::resolve(e, set)));
  }
  for (auto const& k : kernels) {
    INFO("kernel " << k.name);
    const auto g = nvrtc::generate(k);
    int stores = 0;
    for (auto const& [id, text] : op_texts(k, g, ir::StmtOp::store)) {
      if (text.find("sc::stmatrix_x4(") == std::string::npos) continue;
      INFO("op #" << id << ":\n" << text);
      CHECK(check_stmatrix(k, k.stmts[static_cast<std::size_t>(id)], text) > 0);
      ++stores;
    }
    CHECK(stores > 0);
    // Every fragment store into SMEM of these kernels goes by stmatrix; into swizzled rows at the
    // ideal wavefronts (an unswizzled row-major tile keeps the 8 rows of a matrix on the same banks).
    for (auto const& b : g.banks) {
      CHECK(b.stmatrix);
      CHECK(b.width == 16);
      if (k.name != "stsm_plain") CHECK(b.wavefronts == b.ideal);
    }
  }
}
