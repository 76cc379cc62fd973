// Diagnostics at the user's line: every op and declaration records where the user wrote it, the
// IR carries it beside (not inside) the semantics, and scratch declarations may be named.
//
// The catalog tests mark each op with the line it is written on (`at(__LINE__, op)`), so the
// expected locations are this file's own lines and a location taken from a library header (a
// default argument evaluated in the wrong place) cannot pass.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <utility>

#include <stagecraft/interp/interp.hpp>
#include <stagecraft/nvrtc/codegen.hpp>
#include <stagecraft/stagecraft.hpp>

using namespace stagecraft;
using Catch::Matchers::Contains;
using Catch::Matchers::EndsWith;

namespace {

using op_line = std::pair<ir::StmtOp, int>;

// Records that statement `s` was written on `line`.
struct marks {
  std::multiset<op_line> want;
  template <class S>
  S operator()(int line, S s) {
    want.insert({s.node->op, line});
    return s;
  }
};

// Every statement but seq (which groups, and is written nowhere in particular) is located in this
// file, on the lines marked.
void require_located(ir::Kernel const& k, marks const& m) {
  std::multiset<op_line> got;
  for (std::size_t i = 0; i < k.stmts.size(); ++i) {
    if (k.stmts[i].op == ir::StmtOp::seq) continue;
    REQUIRE(i < k.debug.stmts.size());
    auto const& l = k.debug.stmts[i];
    INFO("op #" << i << " " << ir::stmt_name(k.stmts[i].op) << " at " << l.file << ":" << l.line);
    CHECK_THAT(l.file, EndsWith("test_source_loc.cpp"));
    got.insert({k.stmts[i].op, l.line});
  }
  CHECK(got == m.want);
}

std::set<ir::StmtOp> kinds_of(ir::Kernel const& k) {
  std::set<ir::StmtOp> s;
  for (auto const& st : k.stmts) s.insert(st.op);
  return s;
}

ir::Kernel hopper_catalog(marks& at) {
  return lower(kernel<sm_90a>(
      "catalog_h", grid(2), threads(1_c), gmem<f16>("x", shape(128_c, 64_c)), smem<f16>(shape(64_c, 64_c), swizzle(128_c)),
      smem<f16>(shape(64_c, 64_c), swizzle(128_c)), accumulator<f32>("acc", shape(64_c, 64_c)), barrier(arrivals(1_c)),
      [&](auto x, auto a, auto b, auto acc, auto full) {
        return seq(at(__LINE__, copy_gmem_to_smem(x.block(program_id(), 0_c), a, full)),
                   at(__LINE__, barrier_wait(full)),
                   at(__LINE__, for_(range(2_c), [&](auto j) { return at(__LINE__, if_(j == 0_c, at(__LINE__, store(acc, 0.0f)))); })),
                   at(__LINE__, if_(program_id() == 0_c, at(__LINE__, barrier_arrive(full)), at(__LINE__, commit_smem()))),
                   at(__LINE__, wgmma(acc, a, b)),
                   at(__LINE__, wgmma_commit()),
                   at(__LINE__, wgmma_wait(0_c)),
                   at(__LINE__, store(b, cast<f16>(load(acc)))),
                   at(__LINE__, commit_smem()),
                   at(__LINE__, copy_smem_to_gmem(b, x.block(program_id(), 0_c))),
                   at(__LINE__, commit_smem_to_gmem_group()),
                   at(__LINE__, wait_smem_to_gmem(0_c, read_only)),
                   at(__LINE__, wait_smem_to_gmem(0_c)));
      }));
}

ir::Kernel blackwell_catalog(marks& at) {
  return lower(kernel<sm_100a>(
      "catalog_b", grid(4), threads(1_c), cluster(2_c), gmem<bf16>("a", shape(256_c, 64_c)), smem<bf16>(shape(128_c, 64_c), swizzle(128_c)),
      smem<bf16>(shape(64_c, 128_c), tiling(64_c, 64_c), swizzle(128_c)), tmem<f32>("d", shape(128_c, 128_c)), barrier(arrivals(1_c), count(2_c)),
      barrier("mma", arrivals(1_c), orders_tensor_core), cluster_barrier("peers", collective_axes(0_c), arrivals(2_c)),
      [&](auto a, auto as, auto bs, auto d, auto loaded, auto mma, auto peers) {
        return seq(at(__LINE__, copy_gmem_to_smem(a.block(program_id(), 0_c), as, loaded[0_c], collective_axes(0_c))),
                   at(__LINE__, barrier_wait(loaded[0_c])),
                   at(__LINE__, tcgen05_mma(d, as, bs, mma, false)),
                   at(__LINE__, tcgen05_mma(d, as, bs, true)),
                   at(__LINE__, tcgen05_commit_arrive(mma)),
                   at(__LINE__, barrier_wait(mma)),
                   at(__LINE__, tmem_dealloc(d)),
                   at(__LINE__, barrier_arrive(peers)));
      }));
}

}  // namespace

TEST_CASE("every op kind keeps the user's line through lowering", "[srcloc]") {
  marks h, b;
  const ir::Kernel kh = hopper_catalog(h), kb = blackwell_catalog(b);
  require_located(kh, h);
  require_located(kb, b);
  // Every kind of scratch declaration takes a name.
  CHECK(kh.debug.alloc_names == std::vector<std::string>{"", "", "acc", ""});
  CHECK(kb.debug.alloc_names == std::vector<std::string>{"", "", "d", "", "mma", "peers"});
  CHECK_THAT(ir::describe(kb, static_cast<ir::StmtId>(kb.stmts.size() - 1)), Contains("barrier_arrive(peers[0])"));
  // The table covers the whole catalog: a new op kind must be added here.
  std::set<ir::StmtOp> covered = kinds_of(kh);
  for (auto op : kinds_of(kb)) covered.insert(op);
  for (int op = 0; op <= static_cast<int>(ir::StmtOp::tmem_dealloc); ++op) {
    INFO("op kind " << ir::stmt_name(static_cast<ir::StmtOp>(op)));
    CHECK(covered.count(static_cast<ir::StmtOp>(op)) == 1);
  }
}

TEST_CASE("declarations and the kernel are located where the user wrote them", "[srcloc]") {
  const int line = __LINE__ + 1;
  auto k = lower(kernel<sm_90a>("decls", grid(1), threads(1_c), gmem<f32>("x", shape(64_c, 64_c)),
                                smem<f32>(shape(64_c, 64_c)),                    // line + 1
                                barrier(arrivals(1_c)),                          // line + 2
                                smem<f32>("named", shape(64_c, 64_c)),           // line + 3
                                barrier("done", arrivals(1_c), count(2_c)),      // line + 4
                                [](auto x, auto s, auto bar, auto n, auto done) {
                                  return seq(copy_gmem_to_smem(x.block(0_c, 0_c), s, bar), barrier_wait(bar), store(n, load(s)),
                                             barrier_arrive(done[0_c]), barrier_wait(done[0_c]));
                                }));
  CHECK(k.debug.kernel.line == line);
  CHECK_THAT(k.debug.kernel.file, EndsWith("test_source_loc.cpp"));
  REQUIRE(k.debug.allocs.size() == 4);
  for (int i = 0; i < 4; ++i) {
    INFO("allocation " << i);
    CHECK(k.debug.allocs[i].line == line + 1 + i);
    CHECK_THAT(k.debug.allocs[i].file, EndsWith("test_source_loc.cpp"));
  }
  CHECK(k.debug.alloc_names == std::vector<std::string>{"", "", "named", "done"});
  CHECK(ir::alloc_name(k, 0) == "s0");
  CHECK(ir::alloc_name(k, 3) == "done");
}

TEST_CASE("a pipeline's ops are located at the user's in(...), out(...) and emit_pipeline(...), never in the library", "[srcloc]") {
  int in_line = 0, out_line = 0, call_line = 0, body_line = 0;
  auto k = lower(kernel<sm_90a>(
      "piped", grid(1), threads(1_c), gmem<f32>("x", shape(64_c, 256_c)), gmem<f32>("y", shape(64_c, 256_c)),
      smem<f32>("xs", shape(2_c, 64_c, 64_c)), smem<f32>("ys", shape(2_c, 64_c, 64_c)), barrier("full", arrivals(1_c), count(2_c)),
      [&](auto x, auto y, auto xs, auto ys, auto full) {
        in_line = __LINE__ + 1;
        auto i = ins(in(x, xs, [&](auto j) { return x.block(0_c, j); }));
        out_line = __LINE__ + 1;
        auto o = outs(out(y, ys, [&](auto j) { return y.block(0_c, j); }));
        call_line = __LINE__ + 1;
        return emit_pipeline<2>(4_c, full, i, o, [&](auto, auto xv, auto yv) {
          body_line = __LINE__ + 1;
          return store(yv, load(xv));
        });
      }));
  std::set<int> lines;
  for (std::size_t id = 0; id < k.stmts.size(); ++id) {
    auto const& s = k.stmts[id];
    if (s.op == ir::StmtOp::seq) continue;
    auto const& l = k.debug.stmts[id];
    INFO("op #" << id << " " << ir::describe(k, static_cast<ir::StmtId>(id)) << " at " << l.file << ":" << l.line);
    CHECK_THAT(l.file, EndsWith("test_source_loc.cpp"));
    if (s.op == ir::StmtOp::copy_gmem_to_smem) CHECK(l.line == in_line);
    else if (s.op == ir::StmtOp::copy_smem_to_gmem) CHECK(l.line == out_line);
    else if (s.op == ir::StmtOp::store) CHECK(l.line == body_line);
    else CHECK(l.line == call_line);
    lines.insert(l.line);
  }
  CHECK(lines == std::set<int>{in_line, out_line, call_line, body_line});
}

// The same kernel, written out by the macro on whatever line it is used.
#define SC_SAME_KERNEL(BAR)                                                                                                     \
  lower(kernel<sm_90a>("twin", grid(1), threads(1_c), gmem<f32>("x", shape(64_c, 64_c)), smem<f32>(shape(64_c, 64_c)), BAR,      \
                       [](auto x, auto s, auto bar) { return seq(copy_gmem_to_smem(x.block(0_c, 0_c), s, bar), barrier_wait(bar)); }))

TEST_CASE("kernels differing only in source lines hash equal, names stay out of the hash but not out of the code", "[srcloc][hash]") {
  const ir::Kernel a = SC_SAME_KERNEL(barrier(arrivals(1_c)));
  const ir::Kernel b =
      SC_SAME_KERNEL(barrier(arrivals(1_c)));
  const ir::Kernel named = SC_SAME_KERNEL(barrier("full", arrivals(1_c)));
  REQUIRE(a.debug.kernel.line != b.debug.kernel.line);
  CHECK(ir::hash(a) == ir::hash(b));
  CHECK(ir::hash(a) == ir::hash(named));
  CHECK_FALSE(a == b);  // == compares what was written too; the cache key does not
  // The listing shows locations and names as comments; the generated code carries names only.
  CHECK(ir::print(a) != ir::print(b));
  CHECK_THAT(ir::print(named), Contains("barrier b1: [1] arrivals=1  // full, "));
  CHECK(nvrtc::generate(a).source == nvrtc::generate(b).source);
  CHECK_THAT(nvrtc::generate(named).source, Contains("// full"));
  CHECK(nvrtc::generate(named).source != nvrtc::generate(a).source);
}

TEST_CASE("names must be unique in a kernel: the verifier names both declarations", "[srcloc][verify]") {
  const int line = __LINE__ + 2;
  auto build = [] {
    return lower(kernel<sm_90a>("dup", grid(1), threads(1_c), barrier("full", arrivals(1_c)), barrier("full", arrivals(1_c)),
                                [](auto a, auto b) { return seq(barrier_arrive(a), barrier_wait(a), barrier_arrive(b), barrier_wait(b)); }));
  };
  try {
    (void)build();
    FAIL("two barriers named 'full' verified");
  } catch (ir::VerifyError const& e) {
    const std::string m = e.what();
    CHECK_THAT(m, Contains("kernel 'dup': two declarations are named 'full': barrier 0 at "));
    CHECK_THAT(m, Contains("test_source_loc.cpp:" + std::to_string(line) + " and barrier 1"));
    CHECK_THAT(m, Contains("test_source_loc.cpp:" + std::to_string(line) + ": barrier full"));
  }
  auto like_param = [] {
    return lower(kernel<sm_90a>("clash", grid(1), threads(1_c), gmem<f32>("x", shape(64_c, 64_c)), smem<f32>("x", shape(64_c, 64_c)),
                                barrier(arrivals(1_c)), [](auto x, auto s, auto bar) {
                                  return seq(copy_gmem_to_smem(x.block(0_c, 0_c), s, bar), barrier_wait(bar));
                                }));
  };
  CHECK_THROWS_WITH(like_param(), Contains("allocation 0 is named 'x', like a parameter of the kernel"));
  // Hand-built IR is checked at run time: a name that is not an identifier, or that reads like
  // another allocation's printed name.
  auto k = SC_SAME_KERNEL(barrier(arrivals(1_c)));
  k.debug.alloc_names = {"", "not a name"};
  CHECK_THROWS_WITH(ir::verify(k), Contains("allocation 1 is named 'not a name', which is not a C identifier"));
  k.debug.alloc_names = {"", "s0"};
  CHECK_THROWS_WITH(ir::verify(k), Contains("allocation 1 is named 's0', the name allocation 0 is printed under"));
}

TEST_CASE("verifier errors about an op end with the user's line and the op as written", "[srcloc][verify]") {
  const int line = __LINE__ + 3;
  auto k = lower(kernel<sm_90a>("bad_wait", grid(1), threads(1_c), gmem<f32>("y", shape(64_c, 64_c)), smem<f32>("ys", shape(64_c, 64_c)),
                                [](auto y, auto ys) {
                                  return seq(store(ys, 1.0f), commit_smem(), copy_smem_to_gmem(ys, y.block(0_c, 0_c)), commit_smem_to_gmem_group(), wait_smem_to_gmem(0_c));
                                }));
  for (auto& s : k.stmts)
    if (s.op == ir::StmtOp::wait_group) s.n = 64;  // past what the front end allows
  try {
    ir::verify(k);
    FAIL("a wait for 64 groups verified");
  } catch (ir::VerifyError const& e) {
    const std::string m = e.what();
    CHECK_THAT(m, Contains("(wait_smem_to_gmem): n must be in [0, 63], got 64\n  at "));
    CHECK_THAT(m, Contains("test_source_loc.cpp:" + std::to_string(line) + ": wait_smem_to_gmem(64)"));
  }
}

TEST_CASE("interpreter diagnostics and traces use the user's names and lines", "[srcloc][interp]") {
  const int line = __LINE__ + 4;
  auto k = lower(kernel<sm_90a>("never_loaded", grid(1), threads(1_c), gmem<f32>("x", shape(64_c, 64_c)), smem<f32>("xs", shape(64_c, 64_c)),
                                barrier("full", arrivals(1_c), count(2_c)), [](auto x, auto xs, auto full) {
                                  return seq(copy_gmem_to_smem(x.block(0_c, 0_c), xs, full[0_c]),
                                             barrier_wait(full[1_c]));  // stage 1 is never loaded
                                }));
  std::vector<host_tensor> in{host_tensor::zeros(ir::DType::f32, {64, 64})};
  interp::options o;
  o.trace = true;
  auto r = interp::run(k, in, o);
  REQUIRE(r.diagnostics.size() == 1);
  auto const& m = r.diagnostics[0].message;
  INFO(m);
  CHECK_THAT(m, Contains("barrier_wait full[1]: waits for completion #1"));
  CHECK_THAT(m, Contains("\n  at "));
  CHECK_THAT(m, Contains("test_source_loc.cpp:" + std::to_string(line) + ": barrier_wait(full[1])"));
  auto const& src = r.timeline.sources;
  REQUIRE(src.size() == k.stmts.size());
  CHECK_THAT(src[static_cast<std::size_t>(r.diagnostics[0].op)], EndsWith("test_source_loc.cpp:" + std::to_string(line) + ": barrier_wait(full[1])"));
  CHECK_THAT(interp::to_chrome_json(r.timeline), Contains("\"source\":\"" + src[static_cast<std::size_t>(r.diagnostics[0].op)] + "\""));
  CHECK_THAT(interp::to_html(r.timeline), Contains("test_source_loc.cpp:" + std::to_string(line) + ": barrier_wait(full[1])"));
}

TEST_CASE("lowering errors name the kernel(...) line", "[srcloc][lowering]") {
  tree::KernelDesc d;
  d.name = "nobody";
  d.target = ir::Target::sm_90a;
  const int line = __LINE__ + 1;
  d.loc = src_loc::current();
  CHECK_THROWS_WITH(ir::lower(d), Contains("kernel 'nobody': the kernel has no body") &&
                                      Contains("test_source_loc.cpp:" + std::to_string(line) + ": kernel 'nobody'"));
}
