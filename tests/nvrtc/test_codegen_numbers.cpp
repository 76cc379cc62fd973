// The numbers in the generated CUDA C++, op by op, against the IR they come from.
//
// ptxas accepts an expect_tx that is 16 bytes short, a bulk wait one group too lenient, a
// multicast mask that names the wrong CTA or a parity bit that is never flipped: all are valid
// PTX, and all hang or corrupt data on hardware. So these tests read each op's statements from
// the exact text NVRTC compiles (located by the generator's per-op spans) and recompute every
// number from the IR, independently of the generator.
#include <catch2/catch.hpp>

#include <array>
#include <bit>
#include <numeric>
#include <regex>

#include <fmt/format.h>

#include <stagecraft/ir/scopes.hpp>
#include <stagecraft/ir/tcgen05.hpp>
#include <stagecraft/nvrtc/codegen.hpp>
#include <stagecraft/registry.hpp>
#include <stagecraft/stagecraft.hpp>

#include "../unit/variants.hpp"
#include "prelude.hpp"

using namespace stagecraft;

namespace {

std::int64_t product(std::vector<std::int64_t> const& v) { return std::accumulate(v.begin(), v.end(), std::int64_t{1}, std::multiplies<>()); }

// Bytes of an SMEM view, from its IR shape and its allocation's dtype.
std::int64_t view_bytes(ir::Kernel const& k, ir::RefId r) {
  return product(k.refs[r].shape) * ir::dtype_bits(k.allocs[k.refs[r].id].dtype) / 8;
}

std::vector<std::smatch> all_matches(std::string const& text, std::regex const& re) {
  std::vector<std::smatch> out;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator(); ++it) out.push_back(*it);
  return out;
}

std::size_t count(std::string const& text, std::string const& what) {
  std::size_t n = 0;
  for (auto p = text.find(what); p != std::string::npos; p = text.find(what, p + what.size())) ++n;
  return n;
}

// The kernel body: the source after the prelude and the kernel's head.
std::string body_of(nvrtc::generated const& g) {
  REQUIRE_FALSE(g.ops.empty());
  std::size_t first = g.source.size();
  for (auto const& o : g.ops) first = std::min(first, o.begin);
  return g.source.substr(first);
}

// Every cluster coordinate the text reads, sc::cluster_ctaid<E>(axis), carries the kernel's static
// extent along that axis: the device prelude computes blockIdx mod E, so a wrong E is a wrong CTA.
void check_cluster_extents(ir::Kernel const& k, std::string const& text) {
  const auto reads = all_matches(text, std::regex(R"(sc::cluster_ctaid<(\d+)u>\((\d)\))"));
  CHECK_FALSE(reads.empty());
  for (auto const& m : reads) {
    INFO(m[0]);
    CHECK(std::stoll(m[1]) == k.cluster[std::stoi(m[2])]);
  }
}

// Three linear coefficients of `Au * sc::cluster_ctaid<X>(0) + Bu * sc::cluster_ctaid<Y>(1) + Cu * sc::cluster_ctaid<Z>(2)`.
std::array<std::int64_t, 3> linear_in_ctaid(std::string const& text, std::string const& name) {
  const std::regex re(name + R"( = (?:static_cast<int>\()?(\d+)u \* sc::cluster_ctaid<\d+u>\(0\) \+ (\d+)u \* sc::cluster_ctaid<\d+u>\(1\) \+ (\d+)u \* sc::cluster_ctaid<\d+u>\(2\)\)?;)");
  auto m = all_matches(text, re);
  INFO("looking for " << name << " in:\n" << text);
  REQUIRE(m.size() == 1);
  return {std::stoll(m[0][1]), std::stoll(m[0][2]), std::stoll(m[0][3])};
}

// Each multicast: every CTA of the cluster computes its mask and share from the emitted
// constants; both must be what the copy's collective axes say (the group is the CTAs that differ
// from this one only along those axes; shares go in cluster-rank order).
void check_multicast(ir::Kernel const& k, ir::Stmt const& s, std::string const& text, std::int64_t bytes) {
  auto const& cl = k.cluster;
  const auto size = cl[0] * cl[1] * cl[2];
  const auto base = linear_in_ctaid(text, "const unsigned rank_base");
  const auto pos_coef = linear_in_ctaid(text, "const int pos");
  check_cluster_extents(k, text);
  auto mm = all_matches(text, std::regex(R"(mask = static_cast<unsigned short>\(0x([0-9a-f]+)u << rank_base\);)"));
  REQUIRE(mm.size() == 1);
  const unsigned pattern = static_cast<unsigned>(std::stoul(mm[0][1], nullptr, 16));
  auto collective = [&](int d) { return std::find(s.axes.begin(), s.axes.end(), d) != s.axes.end(); };
  std::int64_t n = 1;
  for (int ax : s.axes) n *= cl[ax];
  auto coords_of = [&](std::int64_t r) { return std::array<std::int64_t, 3>{r % cl[0], r / cl[0] % cl[1], r / (cl[0] * cl[1])}; };

  std::vector<int> covered(static_cast<std::size_t>(size * n), 0);  // (group leader rank, share) -> CTAs loading it
  std::vector<std::int64_t> leader_of(static_cast<std::size_t>(size), -1);
  for (std::int64_t me = 0; me < size; ++me) {
    const auto c = coords_of(me);
    INFO("CTA at cluster coordinates (" << c[0] << ", " << c[1] << ", " << c[2] << ")");
    unsigned want_mask = 0;
    std::int64_t want_pos = 0, leader = -1;
    for (std::int64_t r = 0; r < size; ++r) {
      const auto o = coords_of(r);
      bool same_group = true;
      for (int d = 0; d < 3; ++d) same_group = same_group && (collective(d) || o[d] == c[d]);
      if (!same_group) continue;
      want_mask |= 1u << r;
      if (leader < 0) leader = r;
      if (r < me) ++want_pos;
    }
    const auto rank_base = base[0] * c[0] + base[1] * c[1] + base[2] * c[2];
    const unsigned mask = static_cast<unsigned short>(pattern << rank_base);
    const auto pos = pos_coef[0] * c[0] + pos_coef[1] * c[1] + pos_coef[2] * c[2];
    leader_of[static_cast<std::size_t>(me)] = leader;
    CHECK(mask == want_mask);
    CHECK(pos == want_pos);
    if (pos >= 0 && pos < n) ++covered[static_cast<std::size_t>(leader * n + pos)];
  }
  // Every share of every group is loaded by exactly one CTA of it.
  for (std::int64_t r = 0; r < size; ++r)
    if (leader_of[static_cast<std::size_t>(r)] == r)
      for (std::int64_t p = 0; p < n; ++p) CHECK(covered[static_cast<std::size_t>(r * n + p)] == 1);
  // The share this CTA loads: its rows and its bytes, placed at pos * share in every destination.
  auto const& g = k.refs[s.refs[0]];
  const auto share_rows = g.shape[0] / n, share_bytes = bytes / n;
  CHECK(share_rows * n == g.shape[0]);
  CHECK(share_bytes * n == bytes);
  CHECK(count(text, "static_cast<unsigned>(pos * " + std::to_string(share_bytes) + "), &tmap") == 1);
  CHECK(count(text, " + pos * " + std::to_string(share_rows) + ")") == 1);
  CHECK(count(text, s.n == 2 ? "bar, leader, mask, " : "bar, mask, ") == 1);
}

// The op's barrier element lives in its allocation's SMEM: its address starts at that offset.
// The instruction descriptor's fields, decoded by hand from the PTX ISA's table (bits 17-22 N >> 3,
// 24-28 M >> 4), not by the encoder under test.
struct tc_shape {
  std::int64_t m, n;
};
tc_shape tc_fields(ir::tcgen05::plan const& p) { return {((p.idesc >> 24) & 0x1F) << 4, ((p.idesc >> 17) & 0x3F) << 3}; }

void check_barrier_address(ir::Kernel const& k, ir::RefId bar, std::string const& text) {
  const auto alloc = k.refs[bar].id;
  CHECK(count(text, "(smem_base + " + std::to_string(ir::smem_offsets(k)[alloc]) + "u + 8u * static_cast<unsigned>(") == 1);
}

// TMA coordinates are in elements, innermost first: block index times the block's extent in each
// dimension (plus, for a multicast, this CTA's share of the rows in the outermost one).
void check_coordinates(ir::Kernel const& k, ir::RefId gref, std::string const& text, std::int64_t share_rows) {
  auto const& g = k.refs[gref];
  const auto open = text.find("const int c[] = {"), close = text.find("};", open);
  REQUIRE(open != std::string::npos);
  REQUIRE(close != std::string::npos);
  const std::string list = text.substr(open + 17, close - open - 17);
  std::vector<std::string> coords;
  const std::string head = "static_cast<int>(";
  for (auto p = list.find(head); p != std::string::npos;) {
    const auto next = list.find(", " + head, p);
    coords.push_back(list.substr(p, next == std::string::npos ? std::string::npos : next - p));
    p = next == std::string::npos ? next : next + 2;
  }
  REQUIRE(coords.size() == g.shape.size());
  const std::regex plain(R"(^static_cast<int>\((.*) \* (\d+)\)$)"), shared(R"(^static_cast<int>\((.*) \* (\d+) \+ pos \* (\d+)\)$)");
  for (std::size_t i = 0; i < coords.size(); ++i) {
    const auto d = g.shape.size() - 1 - i;  // innermost first
    INFO("coordinate " << i << ": " << coords[i]);
    std::smatch m;
    const bool is_share = d == 0 && share_rows > 0;
    if (d == 0 && g.windowed()) {  // a window of rows: its first row, then the block's own rows
      const std::regex windowed(R"(^static_cast<int>\(\((.*) \+ (.*) \* (\d+)\)\)$)");
      REQUIRE(!is_share);
      REQUIRE(std::regex_match(coords[i], m, windowed));
      CHECK(std::stoll(m[3]) == g.shape[0]);
      continue;
    }
    REQUIRE(std::regex_match(coords[i], m, is_share ? shared : plain));
    // A strided block's coordinates count footprints: shape * element stride.
    CHECK(std::stoll(m[2]) == g.shape[d] * (g.stride.empty() ? 1 : g.stride[d]));
    if (is_share) CHECK(std::stoll(m[3]) == share_rows);
  }
}

// A tiled SMEM view moves one TMA box per tile: the box is the tiling, and tile t of the
// (rows, cols) slab lands at block * shape + (t / per_row * TR, t % per_row * TC).
void check_tiled_copy(ir::Kernel const& k, nvrtc::generated const& g, int map, ir::RefId gref, ir::RefId sref, std::string const& text) {
  auto const& al = k.allocs[k.refs[sref].id];
  auto const& gr = k.refs[gref];
  const auto per_row = gr.shape[1] / al.tiling[1], tiles = gr.shape[0] / al.tiling[0] * per_row;
  CHECK(g.maps[static_cast<std::size_t>(map)].box == al.tiling);
  CHECK(count(text, fmt::format("for (int t = 0; t < {}; ++t) {{", tiles)) == 1);
  const std::regex c(R"(const int c\[\] = \{static_cast<int>\(.* \* (\d+) \+ t % (\d+) \* (\d+)\), static_cast<int>\(.* \* (\d+) \+ t / (\d+) \* (\d+)\)\};)");
  std::smatch m;
  REQUIRE(std::regex_search(text, m, c));
  CHECK(std::stoll(m[1]) == gr.shape[1]);
  CHECK(std::stoll(m[2]) == per_row);
  CHECK(std::stoll(m[3]) == al.tiling[1]);
  CHECK(std::stoll(m[4]) == gr.shape[0]);
  CHECK(std::stoll(m[5]) == per_row);
  CHECK(std::stoll(m[6]) == al.tiling[0]);
  CHECK(count(text, fmt::format("static_cast<unsigned>(t * {})", al.tiling[0] * al.tiling[1] * ir::dtype_bits(al.dtype) / 8)) == 1);
}

// Every op of one kernel, against its IR.
void check_numbers(ir::Kernel const& k) {
  INFO("kernel " << k.name << "\n" << ir::print(k));
  const auto g = nvrtc::generate(k);
  const std::string body = body_of(g);

  std::vector<nvrtc::op_span const*> span_of(k.stmts.size(), nullptr);
  for (auto const& o : g.ops) {
    REQUIRE(o.op >= 0);
    REQUIRE(static_cast<std::size_t>(o.op) < k.stmts.size());
    CHECK(o.kind == k.stmts[o.op].op);
    REQUIRE(o.begin <= o.end);
    REQUIRE(o.end <= g.source.size());
    CHECK(span_of[o.op] == nullptr);
    span_of[o.op] = &o;
  }

  // tcgen05 MMAs and commits one after another run in one block of the elected thread (one elect
  // per K-tile): the ops of such a block issue under its elect instead of one of their own.
  std::vector<bool> in_elected_block(k.stmts.size(), false);
  for (auto const& m : all_matches(g.source, std::regex(R"(sc::elect_one\(\)\) \{  // ops #(\d+)-#(\d+): one thread issues the MMAs and commits)")))
    for (auto op = std::stoul(m[1]); op <= std::stoul(m[2]) && op < k.stmts.size(); ++op) in_elected_block[op] = true;
  // The elected thread: lane < 32 && sc::elect_one() in a warpgroup, sc::elect_one() in a warp.
  auto elects = [](std::string const& text, std::string const& then) { return count(text, "sc::elect_one()) " + then); };

  std::size_t fences = 0, waits = 0, commits = 0, deallocs = 0;
  for (std::size_t i = 0; i < k.stmts.size(); ++i) {
    auto const& s = k.stmts[i];
    if (s.op == ir::StmtOp::seq) continue;
    INFO("op #" << i << " (" << ir::stmt_name(s.op) << ")");
    REQUIRE(span_of[i] != nullptr);
    const std::string text = g.source.substr(span_of[i]->begin, span_of[i]->end - span_of[i]->begin);
    INFO("its text:\n" << text);
    switch (s.op) {
      case ir::StmtOp::copy_gmem_to_smem: {
        // expect_tx: the bytes of the destination view. With multicast each CTA's barrier still
        // expects the whole block: it receives every share of its group. The pair's load
        // (Stmt::n == 2): only the even CTA arrives, for its own view and its odd CTA's.
        const bool pair = s.n == 2;
        const auto bytes = view_bytes(k, s.refs[1]);
        auto m = all_matches(text, std::regex(R"(sc::mbar_arrive_expect_tx\(bar, (\d+)u\);)"));
        REQUIRE(m.size() == 1);
        CHECK(std::stoll(m[0][1]) == (pair ? 2 : 1) * bytes);
        if (pair) CHECK(count(text, "& 1u) == 0u) sc::mbar_arrive_expect_tx(bar, ") == 1);
        check_barrier_address(k, s.refs[2], text);
        // The descriptor's box: the block, or the CTA's share of its rows.
        auto t = all_matches(text, std::regex(R"(&tmap(\d+), bar)"));
        REQUIRE(t.size() == 1);
        const auto map = std::stoul(t[0][1]);
        REQUIRE(map < g.maps.size());
        // A strided block's box is its footprint, traversed with its element strides.
        auto box = k.refs[s.refs[0]].shape;
        auto const& stride = k.refs[s.refs[0]].stride;
        for (std::size_t d = 0; d < stride.size(); ++d) box[d] *= stride[d];
        std::int64_t n = 1;
        for (int ax : s.axes) n *= k.cluster[ax];
        box[0] /= n;
        CHECK(g.maps[map].box == box);
        CHECK(g.maps[map].elem_strides == stride);
        CHECK(g.maps[map].param == k.refs[s.refs[0]].id);
        CHECK(g.maps[map].swizzle == k.allocs[k.refs[s.refs[1]].id].swizzle);
        check_coordinates(k, s.refs[0], text, s.axes.empty() ? 0 : k.refs[s.refs[0]].shape[0] / n);
        if (s.axes.empty()) {
          CHECK(count(text, pair ? "sc::tma_load_pair(" : "sc::tma_load(") == 1);
          CHECK(count(text, "multicast") == 0);
        } else {
          CHECK(count(text, pair ? "sc::tma_load_multicast_pair(" : "sc::tma_load_multicast(") == 1);
          check_multicast(k, s, text, bytes);
        }
        break;
      }
      case ir::StmtOp::copy_smem_to_gmem: {
        // A TMA reduce (Stmt::n) is the same copy under another name: sc::tma_reduce<op, T>.
        auto t = all_matches(text, std::regex(s.n == 0 ? R"(sc::tma_store\(&tmap(\d+), )" : R"(sc::tma_reduce<sc::reduce_\w+, \w+>\(&tmap(\d+), )"));
        REQUIRE(t.size() == 1);
        const auto map = std::stoul(t[0][1]);
        REQUIRE(map < g.maps.size());
        CHECK(g.maps[map].elem_strides.empty());
        CHECK(g.maps[map].param == k.refs[s.refs[1]].id);
        if (!k.allocs[k.refs[s.refs[0]].id].tiling.empty()) {
          check_tiled_copy(k, g, static_cast<int>(map), s.refs[1], s.refs[0], text);
          break;
        }
        CHECK(g.maps[map].box == k.refs[s.refs[1]].shape);
        check_coordinates(k, s.refs[1], text, 0);
        break;
      }
      case ir::StmtOp::wait_group: {
        // The IR's n and read-only flag, and nothing more lenient.
        auto m = all_matches(text, std::regex(R"(sc::bulk_wait(_read)?<(\d+)>\(\);)"));
        REQUIRE(m.size() == 1);
        CHECK(m[0][1].matched == s.flag);
        CHECK(std::stoll(m[0][2]) == s.n);
        break;
      }
      case ir::StmtOp::barrier_arrive:
        check_barrier_address(k, s.refs[0], text);
        break;
      case ir::StmtOp::tcgen05_mma: {
        // K / ik instructions, each with the plan's instruction descriptor, D's TMEM column, the
        // SMEM descriptors' constant bits (ir::tcgen05's encoding, version bit included) and
        // the k step's start offset; only the first takes the statement's accumulate flag.
        const auto p = ir::tcgen05::plan_of(k, s);
        const auto d = tc_fields(p);
        CHECK(d.m == (s.n == 2 ? 256 : 128));  // the pair's instruction covers both CTAs' rows
        CHECK(d.n == p.n);
        // D's TMEM address: its allocation's, plus stage s * columns for d[s] of a ring.
        {
          auto const& dr = k.refs[s.refs[0]];
          std::smatch dm;
          REQUIRE(std::regex_search(text, dm, std::regex(R"(const unsigned d_addr = (?:\(tmem(\d+) \+ static_cast<unsigned>\(.*\) \* (\d+)u\)|tmem(\d+));)")));
          const bool ring = dm[1].matched;
          CHECK(ring == !dr.index.empty());
          CHECK(std::stoll(ring ? dm[1].str() : dm[3].str()) == dr.id);
          if (ring) CHECK(std::stoll(dm[2]) == ir::tmem_stage_columns(k.allocs[static_cast<std::size_t>(dr.id)]));
        }
        if (p.a_tmem) {
          // A from TMEM: D's and A's own allocations, A's column step (8 per instruction), B's
          // descriptor, the descriptor with transpose-A 0.
          const std::regex ts(R"(sc::tc_mma_ts_(f16|tf32)\((d_addr), tmem(\d+) \+ (\d+)u, db0 \+ (\d+)ull, )"
                              R"(0x([0-9a-f]{8})u, (acc|1u)\);  // B \+ (\d+) B)");
          CHECK(count(text, fmt::format("const unsigned long long db0 = 0x{:016x}ull | (b_addr >> 4);", ir::tcgen05::encode_smem(0, p.b))) == 1);
          auto m = all_matches(text, ts);
          REQUIRE(static_cast<std::int64_t>(m.size()) == p.k_steps());
          CHECK(count(text, "a_addr") == 0u);
          for (std::int64_t ks = 0; ks < p.k_steps(); ++ks) {
            auto const& x = m[static_cast<std::size_t>(ks)];
            INFO("k step " << ks);
            CHECK(x[1] == (p.kind == ir::tcgen05::Kind::tf32 ? "tf32" : "f16"));
            CHECK(x[2] == "d_addr");  // D's address, checked above
            CHECK(std::stoll(x[3]) == k.refs[s.refs[1]].id);
            CHECK(std::stoll(x[4]) == p.a_column(ks));
            CHECK(std::stoll(x[5]) == p.b_start(ks) / 16);
            CHECK(std::stoll(x[8]) == p.b_start(ks));
            CHECK(std::stoul(x[6], nullptr, 16) == p.idesc);
            CHECK(((p.idesc >> 15) & 1u) == 0u);
            CHECK(x[7] == (ks == 0 ? "acc" : "1u"));
          }
          CHECK(elects(text, "{") + in_elected_block[i] == 1u);
          if (s.refs.size() == 4) check_barrier_address(k, s.refs[3], text);
          break;
        }
        if (p.scaled) {
          // Block-scaled: the scales' TMEM addresses (their allocations', plus a ring's stage),
          // and per instruction the descriptor with scale byte ks for A (bits 29-30) and B (4-5).
          std::smatch sm;
          REQUIRE(std::regex_search(text, sm, std::regex(R"(const unsigned sfa = \(?tmem(\d+)[^,]*, sfb = \(?tmem(\d+))")));
          CHECK(std::stoll(sm[1]) == k.refs[s.refs[3]].id);
          CHECK(std::stoll(sm[2]) == k.refs[s.refs[4]].id);
          // Instruction ks of kind mxf8f6f4 / mxf4 / mxf4nvf4: its scale IDs and the column of its
          // cell group added to both scale addresses (plan::scale_column; none for group 0).
          const std::regex mx(
              R"(sc::tc_mma_(mxf8f6f4|mxf4|mxf4nvf4)\(d_addr, da0 \+ (\d+)ull, db0 \+ (\d+)ull, 0x([0-9a-f]{8})u, sfa(?: \+ (\d+)u)?, sfb(?: \+ (\d+)u)?, (acc|1u)\);  // A \+ (\d+) B, B \+ (\d+) B, scale byte (\d))");
          auto m = all_matches(text, mx);
          REQUIRE(static_cast<std::int64_t>(m.size()) == p.k_steps());
          for (std::int64_t ks = 0; ks < p.k_steps(); ++ks) {
            auto const& x = m[static_cast<std::size_t>(ks)];
            INFO("k step " << ks);
            CHECK("kind::" + x[1].str() == ir::tcgen05::kind_name(p.kind));
            CHECK(std::stoll(x[2]) == p.a_start(ks) / 16);
            CHECK(std::stoll(x[3]) == p.b_start(ks) / 16);
            const auto idesc = static_cast<std::uint32_t>(std::stoul(x[4], nullptr, 16));
            CHECK(idesc == p.idesc_at(ks));
            const int id = ir::tcgen05::scale_id(ks, p.scale_vec);
            CHECK(ir::tcgen05::decode_scaled(idesc).sfa_id == id);
            CHECK(ir::tcgen05::decode_scaled(idesc).sfb_id == id);
            CHECK(ir::tcgen05::decode_scaled(idesc).ue8m0 == (p.kind != ir::tcgen05::Kind::mxf4nvf4));
            CHECK((x[5].matched ? std::stoll(x[5]) : 0) == p.scale_column(ks));
            CHECK((x[6].matched ? std::stoll(x[6]) : 0) == p.scale_column(ks));
            CHECK(x[7] == (ks == 0 ? "acc" : "1u"));
            CHECK(std::stoll(x[10]) == id);
          }
          if (const auto bar = ir::tcgen05::mma_commit_barrier(s); bar != ir::none) check_barrier_address(k, bar, text);
          break;
        }
        const std::regex re(R"(sc::tc_mma_(f16|tf32|f8f6f4|i8)\((d_addr), da0 \+ (\d+)ull, db0 \+ (\d+)ull, 0x([0-9a-f]{8})u, (acc|1u)\);  // A \+ (\d+) B, B \+ (\d+) B)");
        CHECK(count(text, fmt::format("const unsigned long long da0 = 0x{:016x}ull | (a_addr >> 4);", ir::tcgen05::encode_smem(0, p.a))) == 1);
        CHECK(count(text, fmt::format("const unsigned long long db0 = 0x{:016x}ull | (b_addr >> 4);", ir::tcgen05::encode_smem(0, p.b))) == 1);
        auto m = all_matches(text, re);
        REQUIRE(static_cast<std::int64_t>(m.size()) == p.k_steps());
        for (std::int64_t ks = 0; ks < p.k_steps(); ++ks) {
          auto const& x = m[static_cast<std::size_t>(ks)];
          INFO("k step " << ks);
          CHECK("kind::" + x[1].str() == ir::tcgen05::kind_name(p.kind));
          CHECK(x[2] == "d_addr");  // D's own allocation's address (or its stage's), checked above
          CHECK(std::stoll(x[3]) == p.a_start(ks) / 16);  // the descriptor's start field counts 16 bytes
          CHECK(std::stoll(x[7]) == p.a_start(ks));
          CHECK(std::stoll(x[4]) == p.b_start(ks) / 16);
          CHECK(std::stoll(x[8]) == p.b_start(ks));
          CHECK(std::stoul(x[5], nullptr, 16) == p.idesc);
          CHECK(x[6] == (ks == 0 ? "acc" : "1u"));
        }
        // One thread issues (and a fused commit of the pair opens its own block for the mask).
        CHECK(elects(text, "{") + in_elected_block[i] == (s.n == 2 && s.refs.size() == 4 && !in_elected_block[i] ? 2u : 1u));
        if (s.refs.size() == 4) check_barrier_address(k, s.refs[3], text);
        break;
      }
      case ir::StmtOp::tcgen05_commit_arrive:
        if (s.n == 2) {
          // The pair's multicast: both CTAs, ranks 2p and 2p + 1 of the x-fastest cluster ranks,
          // and with collective axes the same two in every pair along them. Every CTA of the
          // cluster evaluates the emitted base and pattern; its mask must be the CTAs whose x / 2
          // is its own and whose coordinates off the axes are its own.
          const auto& cl = k.cluster;
          CHECK(elects(text, "{") + in_elected_block[i] == 1);
          const std::regex base_re(R"(const unsigned pair_rank = \(sc::cluster_ctaid<\d+u>\(0\) & ~1u\) \+ (\d+)u \* sc::cluster_ctaid<\d+u>\(1\) \+ (\d+)u \* sc::cluster_ctaid<\d+u>\(2\);)");
          check_cluster_extents(k, text);
          auto bm = all_matches(text, base_re);
          REQUIRE(bm.size() == 1);
          auto pm = all_matches(text, std::regex(R"(static_cast<unsigned short>\(0x([0-9a-f]+)u << pair_rank\)\);)"));
          REQUIRE(pm.size() == 1);
          CHECK(count(text, "sc::tc_commit_pair(") == 1);
          const std::int64_t cy = std::stoll(bm[0][1]), cz = std::stoll(bm[0][2]);
          const unsigned pattern = static_cast<unsigned>(std::stoul(pm[0][1], nullptr, 16));
          auto on_axes = [&](int d) { return std::find(s.axes.begin(), s.axes.end(), d) != s.axes.end(); };
          const auto size = cl[0] * cl[1] * cl[2];
          for (std::int64_t me = 0; me < size; ++me) {
            const std::int64_t c[3] = {me % cl[0], me / cl[0] % cl[1], me / (cl[0] * cl[1])};
            INFO("CTA at cluster coordinates (" << c[0] << ", " << c[1] << ", " << c[2] << ")");
            unsigned want = 0;
            for (std::int64_t r = 0; r < size; ++r) {
              const std::int64_t x[3] = {r % cl[0], r / cl[0] % cl[1], r / (cl[0] * cl[1])};
              if (x[0] / 2 == c[0] / 2 && (on_axes(1) || x[1] == c[1]) && (on_axes(2) || x[2] == c[2])) want |= 1u << r;
            }
            const auto rank = (c[0] & ~1LL) + cy * c[1] + cz * c[2];
            CHECK(static_cast<unsigned short>(pattern << rank) == want);
          }
        } else {
          CHECK(elects(text, "sc::tc_commit(") + in_elected_block[i] == 1);  // the thread that issued the MMAs
          CHECK(count(text, "sc::tc_commit(") == 1);
        }
        check_barrier_address(k, s.refs[0], text);
        break;
      case ir::StmtOp::tmem_dealloc: {
        // The warpgroup's barrier, then its first warp frees exactly what was allocated.
        auto const& al = k.allocs[static_cast<std::size_t>(k.refs[s.refs[0]].id)];
        const auto cols = ir::tmem_alloc_columns(ir::tmem_stages(al) * ir::tmem_stage_columns(al));  // a ring: every stage
        CHECK(count(text, "sc::wg_sync(wg);") == 1);
        CHECK(count(text, "if (lane < 32) sc::tmem_dealloc(tmem" + std::to_string(k.refs[s.refs[0]].id) + ", " + std::to_string(cols) + "u);") == 1);
        ++deallocs;
        break;
      }
      case ir::StmtOp::commit_group:
        CHECK(count(text, "sc::bulk_commit();") == 1);
        ++commits;
        break;
      case ir::StmtOp::commit_smem:
        CHECK(count(text, "sc::fence_proxy_async();") == 1);
        ++fences;
        break;
      case ir::StmtOp::barrier_wait: {
        // One element e; the wait reads e's parity bit (as p), then flips exactly that bit, once.
        // The bits are 32-bit words; with up to 32 elements the one word is named directly.
        std::int64_t all = 0;
        for (auto const& al : k.allocs)
          if (al.kind == ir::AllocKind::barrier || al.kind == ir::AllocKind::cluster_barrier) all += product(al.shape);
        const std::string word = all <= 32 ? "parity[0]" : "parity[e / 32]";
        CHECK(count(text, "const unsigned e = static_cast<unsigned>(") == 1);
        CHECK(count(text, "const unsigned p = (" + word + " >> (e % 32)) & 1u;") == 1);
        // an .acquire.cluster wait exactly where the barrier's scope is .cluster (ir/scopes.hpp)
        const bool cluster = !ir::cluster_barrier_scope(k, k.refs[s.refs[0]].id).cta;
        auto m = all_matches(text, std::regex(R"(sc::mbar_wait(_cluster)?\(.*, p\);)"));
        REQUIRE(m.size() == 1);
        CHECK(m[0][1].matched == cluster);
        CHECK(count(text, word + " ^= 1u << (e % 32);") == 1);
        check_barrier_address(k, s.refs[0], text);
        CHECK(count(text, "parity[") == 2);
        ++waits;
        break;
      }
      case ir::StmtOp::tcgen05_cp: {
        // The copy's SMEM descriptor: ir::tcgen05's constant bits (no swizzle, SBO 128) and the
        // source view's start; its TMEM address the destination's (and stage's).
        const std::regex cp(R"(sc::tc_cp_32x128b_warpx4\(\(?tmem(\d+)[^,]*, 0x([0-9a-f]{16})ull \| \(\(smem_base \+ (\d+)u)");
        auto m = all_matches(text, cp);
        REQUIRE(m.size() == 1);
        CHECK(std::stoll(m[0][1]) == k.refs[s.refs[1]].id);
        CHECK(std::stoull(m[0][2], nullptr, 16) == ir::tcgen05::encode_cp_smem(0));
        CHECK(std::stoll(m[0][3]) == ir::smem_offsets(k)[static_cast<std::size_t>(k.refs[s.refs[0]].id)]);
        // A column group (e0) adds 4 columns a group to the TMEM address.
        CHECK(count(text, " + 4u * (") == (s.e0 != ir::none ? 1u : 0u));
        break;
      }
      default: break;
    }
  }
  // Barrier initialisation: every element of every barrier allocation, at its offset, with the
  // arrivals one phase takes (a cluster barrier's come from every CTA of its group).
  const auto offsets = ir::smem_offsets(k);
  for (std::size_t a = 0; a < k.allocs.size(); ++a) {
    auto const& al = k.allocs[a];
    if (al.kind != ir::AllocKind::barrier && al.kind != ir::AllocKind::cluster_barrier) continue;
    INFO("barrier allocation b" << a);
    std::int64_t per_phase = al.arrivals;
    if (al.kind == ir::AllocKind::cluster_barrier)
      for (int ax : al.collective_axes) per_phase *= k.cluster[ax];
    // The comment names the barrier as the user did, else by number.
    const bool named = a < k.debug.alloc_names.size() && !k.debug.alloc_names[a].empty();
    const std::string label = named ? k.debug.alloc_names[a] : "b" + std::to_string(a);
    CHECK(count(g.source, "for (int e = 0; e < " + std::to_string(product(al.shape)) + "; ++e) sc::mbar_init(smem_base + " +
                              std::to_string(offsets[a]) + " + 8 * e, " + std::to_string(per_phase) + ");  // " + label + "\n") == 1);
  }
  // Every thread starts waiting for phase 0 of every element: one zeroed bit per element.
  std::int64_t elements = 0;
  for (auto const& al : k.allocs)
    if (al.kind == ir::AllocKind::barrier || al.kind == ir::AllocKind::cluster_barrier) elements += product(al.shape);
  if (elements > 0) CHECK(count(g.source, "unsigned parity[" + std::to_string((elements + 31) / 32) + "] = {};") == 1);
  CHECK(count(g.source, "unsigned parity[") == (elements > 0 ? 1u : 0u));
  CHECK(count(g.source, "sc::mbar_init(smem_base") ==
        static_cast<std::size_t>(std::count_if(k.allocs.begin(), k.allocs.end(), [](auto const& al) {
          return al.kind == ir::AllocKind::barrier || al.kind == ir::AllocKind::cluster_barrier;
        })));

  // TMEM: one tcgen05.alloc per allocation, its columns rounded up to a power of two >= 32,
  // largest first, then the permit given up; freed only where a tmem_dealloc says.
  std::int64_t previous = 512;
  std::size_t allocs = 0;
  for (auto const& m : all_matches(g.source, std::regex(R"(    sc::tmem_alloc\(smem_base \+ (\d+)u, (\d+)u\);  // (\S+) )"))) {
    const auto n = std::stoll(m[2]);
    CHECK(n <= previous);
    previous = n;
    ++allocs;
  }
  std::size_t tmem_allocs = 0;
  for (std::size_t a = 0; a < k.allocs.size(); ++a) {
    auto const& al = k.allocs[a];
    if (al.kind != ir::AllocKind::tmem) continue;
    ++tmem_allocs;
    const auto n = ir::tmem_alloc_columns(ir::tmem_stages(al) * ir::tmem_stage_columns(al));
    CHECK(count(g.source, "u, " + std::to_string(n) + "u);  // " + ir::alloc_name(k, static_cast<int>(a)) + " ") == 1);
    CHECK(count(g.source, "const unsigned tmem" + std::to_string(a) + " = ") == 1);
  }
  CHECK(allocs == tmem_allocs);
  CHECK(count(g.source, "sc::tmem_relinquish();") == (tmem_allocs ? 1u : 0u));
  // No fence, flip or group commit outside the ops that own one.
  CHECK(count(body, "sc::fence_proxy_async();") == fences);
  CHECK(count(body, "^= 1u << ") == waits);
  CHECK(count(body, "sc::bulk_commit();") == commits);
  CHECK(count(body, "sc::tmem_dealloc(") == deallocs);
}

// Multicast of one 128x64 f32 block over the given cluster axes (and a 2x2x2 cluster).
template <class... Axes>
ir::Kernel multicast(std::string name, Axes... axes) {
  return lower(kernel<sm_90a>(name, grid(2, 2, 2), threads(1_c), cluster(2_c, 2_c, 2_c), gmem<f32>("w", shape(128_c, 64_c)),
                              smem<f32>(shape(128_c, 64_c)),  // (row, col), in every CTA
                              barrier(arrivals(1_c)), [&](auto w, auto ws, auto bar) {
                                return seq(copy_gmem_to_smem(w.block(0_c, 0_c), ws, bar, collective_axes(axes...)), barrier_wait(bar));
                              }));
}

// A 2-CTA cluster along x, as the zoo's multicast kernel has it, with a 2-deep ring.
ir::Kernel multicast_ring() {
  return lower(kernel<sm_90a>("mcast_ring", grid(4), threads(1_c), cluster(2_c), gmem<f16>("w", shape(512_c, 64_c)),
                              gmem<f16>("y", shape(512_c, 64_c)), smem<f16>(shape(2_c, 128_c, 64_c)),  // (stage, row, col)
                              barrier(arrivals(1_c), count(2_c)), [](auto w, auto y, auto ws, auto full) {
                                return seq(for_(range(4_c), [&](auto j) {
                                             auto s = stage<2>(j);
                                             return seq(copy_gmem_to_smem(w.block(j, 0_c), ws[s], full[s], collective_axes(0_c)),
                                                        barrier_wait(full[s]), commit_smem(), copy_smem_to_gmem(ws[s], y.block(program_id(), 0_c)),
                                                        commit_smem_to_gmem_group(), wait_smem_to_gmem(1_c, read_only));
                                           }),
                                           wait_smem_to_gmem(0_c));
                              }));
}

// Cluster barriers along each axis of a 2x4 cluster: one phase takes an arrival from every CTA
// of the group.
template <class... Axes>
ir::Kernel peers(std::string name, Axes... axes) {
  return lower(kernel<sm_90a>(name, grid(4, 8), threads(2_c), cluster(2_c, 4_c), cluster_barrier(collective_axes(axes...), arrivals(2_c)),
                              barrier(arrivals(1_c), count(3_c)),
                              [](auto peers, auto local) {
                                return seq(barrier_arrive(peers), barrier_wait(peers), barrier_arrive(local[thread_id()]),
                                           barrier_wait(local[thread_id()]));
                              }));
}

// One swizzled f16 buffer whose rows are exactly one swizzle span wide.
template <long long Swizzle>
ir::Kernel swizzled() {
  constexpr long long cols = Swizzle / 2;
  return lower(kernel<sm_90a>("swz" + std::to_string(Swizzle), grid(1), threads(1_c), gmem<f16>("x", shape(64_c, int_c<cols>)),
                              smem<f16>(shape(64_c, int_c<cols>), swizzle(int_c<Swizzle>)), barrier(arrivals(1_c)), [](auto x, auto buf, auto bar) {
                                return seq(copy_gmem_to_smem(x.block(0_c, 0_c), buf, bar), barrier_wait(bar), store(buf, load(buf) * 2.0f),
                                           commit_smem(), copy_smem_to_gmem(buf, x.block(0_c, 0_c)), commit_smem_to_gmem_group(),
                                           wait_smem_to_gmem(0_c));
                              }));
}

}  // namespace

TEST_CASE("every example's generated source carries the IR's numbers, op by op", "[codegen][numbers]") {
  for (auto const* e : registry::global().all()) {
    INFO("example " << e->name);
    check_numbers(e->build(registry::resolve(*e, {})));
  }
}

TEST_CASE("every ring depth of the pipelined examples carries the IR's numbers", "[codegen][numbers]") {
  // Ring depth changes the wait depths and the number of parity bits: the numbers most likely off by one.
  for (auto const* e : registry::global().all())
    for (auto const& vals : testing::every_allowed_value(*e)) {
      std::string set;
      for (auto const& [name, v] : vals) set += fmt::format(" {}={}", name, v);
      INFO("example " << e->name << set);
      check_numbers(e->build(vals));
    }
}

TEST_CASE("multicast and cluster barriers: each CTA's mask, share and arrival count follow the collective axes", "[codegen][numbers]") {
  check_numbers(multicast("mcast_x", 0_c));
  check_numbers(multicast("mcast_y", 1_c));
  check_numbers(multicast("mcast_z", 2_c));
  check_numbers(multicast("mcast_xz", 0_c, 2_c));
  check_numbers(multicast("mcast_yz", 1_c, 2_c));
  check_numbers(multicast("mcast_xyz", 0_c, 1_c, 2_c));
  check_numbers(multicast_ring());
  check_numbers(peers("peers_x", 0_c));
  check_numbers(peers("peers_y", 1_c));
  check_numbers(peers("peers_xy", 0_c, 1_c));
}

TEST_CASE("multicast: the mask names the CTAs of the group, spelled out for a 2x2x2 cluster", "[codegen][numbers]") {
  // A hand-written table for one case, so the check above is not only a recomputation.
  const auto g = nvrtc::generate(multicast("mcast_y", 1_c));
  CHECK(count(g.source, "mask = static_cast<unsigned short>(0x0005u << rank_base);") == 1);  // ranks {0, 2}: y = 0, 1 at x = z = 0
  CHECK(count(g.source, "rank_base = 1u * sc::cluster_ctaid<2u>(0) + 0u * sc::cluster_ctaid<2u>(1) + 4u * sc::cluster_ctaid<2u>(2);") == 1);
  CHECK(count(g.source, "pos = static_cast<int>(0u * sc::cluster_ctaid<2u>(0) + 1u * sc::cluster_ctaid<2u>(1) + 0u * sc::cluster_ctaid<2u>(2));") == 1);
  CHECK(count(g.source, "mbar_arrive_expect_tx(bar, 32768u)") == 1);  // 128 x 64 f32: the whole block
  CHECK(count(g.source, "static_cast<unsigned>(pos * 16384), &tmap0") == 1);
}

TEST_CASE("swizzled buffers carry the IR's numbers and call the swizzle of their width", "[codegen][numbers]") {
  for (auto const& [k, width] : {std::pair{swizzled<32>(), 32}, {swizzled<64>(), 64}, {swizzled<128>(), 128}}) {
    INFO(k.name);
    check_numbers(k);
    const auto body = body_of(nvrtc::generate(k));
    CHECK(count(body, "sc::swz<" + std::to_string(width) + ">(") > 0);
    CHECK(count(body, "sc::swz<") == count(body, "sc::swz<" + std::to_string(width) + ">("));
  }
}

namespace host_prelude {
STAGECRAFT_SWIZZLE_FN(constexpr)
}

TEST_CASE("the prelude's swizzle is the PTX ISA's 32/64/128-byte swizzle pattern", "[codegen][numbers][swizzle]") {
  // The PTX ISA's tensor swizzling modes: SMEM is seen as 128-byte rows of eight 16-byte chunks;
  // the N-byte mode permutes the 16-byte chunks within each N-byte span of a row by XOR with the
  // row index modulo N / 16, so the pattern repeats every 256, 512 and 1024 bytes. For 128 bytes
  // the table the ISA draws is (logical chunk per physical position, rows 0..7):
  constexpr int table128[8][8] = {{0, 1, 2, 3, 4, 5, 6, 7}, {1, 0, 3, 2, 5, 4, 7, 6}, {2, 3, 0, 1, 6, 7, 4, 5}, {3, 2, 1, 0, 7, 6, 5, 4},
                                  {4, 5, 6, 7, 0, 1, 2, 3}, {5, 4, 7, 6, 1, 0, 3, 2}, {6, 7, 4, 5, 2, 3, 0, 1}, {7, 6, 5, 4, 3, 2, 1, 0}};
  auto documented = [](int width, unsigned a) {
    const unsigned row = a / 128, span = width, in_span_chunk = (a % span) / 16;
    const unsigned chunk = in_span_chunk ^ (row % (span / 16));
    return a - in_span_chunk * 16 + chunk * 16;
  };
  for (unsigned a = 0; a < 1024; a += 16) CHECK(host_prelude::swz<128>(a) == (a / 128) * 128 + table128[a / 128][a % 128 / 16] * 16);
  // Absolute addresses: the pattern follows address bits, so it holds at any 1024-byte multiple and
  // inside every chunk.
  for (unsigned a = 0; a < (1u << 17); ++a) {
    INFO("address " << a);
    REQUIRE(host_prelude::swz<128>(a) == documented(128, a));
    REQUIRE(host_prelude::swz<64>(a) == documented(64, a));
    REQUIRE(host_prelude::swz<32>(a) == documented(32, a));
    REQUIRE(host_prelude::swz<0>(a) == a);
  }
  // A permutation of each repeat, which never leaves it.
  for (int width : {32, 64, 128}) {
    const unsigned repeat = 8u * static_cast<unsigned>(width);
    std::vector<int> hit(repeat, 0);
    for (unsigned a = 0; a < repeat; ++a) {
      const auto s = width == 32 ? host_prelude::swz<32>(a) : width == 64 ? host_prelude::swz<64>(a) : host_prelude::swz<128>(a);
      REQUIRE(s < repeat);
      ++hit[s];
    }
    CHECK(std::all_of(hit.begin(), hit.end(), [](int h) { return h == 1; }));
  }
  // And the function tested here is the one NVRTC compiles.
  const std::string prelude = nvrtc::detail::prelude;
  CHECK(count(prelude, STAGECRAFT_PRELUDE_STR(STAGECRAFT_SWIZZLE_FN(__device__ __forceinline__))) == 1);
  CHECK(count(prelude, "unsigned swz(") == 1);
}

namespace host_prelude {
STAGECRAFT_FP8_FN(constexpr, std::bit_cast<unsigned>, std::bit_cast<float>)
}

TEST_CASE("the prelude's fp8 conversions are the ones the interpreter and host tensors use", "[codegen][numbers][fp8]") {
  // The very tokens NVRTC compiles, instantiated here, agree with ir::'s on every pattern and on
  // f32 values around every fp8 value (tests/unit/test_fp8.cpp checks ir::'s against the formats).
  for (unsigned b = 0; b < 256; ++b) {
    const auto q = static_cast<unsigned char>(b);
    INFO("pattern " << b);
    REQUIRE(std::bit_cast<unsigned>(host_prelude::e4m3_to_f32(q)) == std::bit_cast<unsigned>(ir::e4m3_to_f32(q)));
    REQUIRE(std::bit_cast<unsigned>(host_prelude::e5m2_to_f32(q)) == std::bit_cast<unsigned>(ir::e5m2_to_f32(q)));
    for (float x : {ir::e4m3_to_f32(q), ir::e5m2_to_f32(q), ir::e4m3_to_f32(q) * 1.0625f, ir::e5m2_to_f32(q) * 1.1f}) {
      REQUIRE(host_prelude::f32_to_e4m3(x) == ir::f32_to_e4m3(x));
      REQUIRE(host_prelude::f32_to_e5m2(x) == ir::f32_to_e5m2(x));
    }
  }
  const std::string prelude = nvrtc::detail::prelude;
  CHECK(count(prelude, STAGECRAFT_PRELUDE_STR(STAGECRAFT_FP8_FN(__device__ __forceinline__, __float_as_uint, __uint_as_float))) == 1);
  CHECK(count(prelude, "unsigned char f32_to_e4m3(") == 1);
}
