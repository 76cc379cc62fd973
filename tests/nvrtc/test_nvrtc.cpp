// The JIT: every example compiles for sm_90a and sm_100a (NVRTC runs ptxas, so the PTX is
// valid), carries the instructions the op catalog promises, spills nothing, and is cached.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include <stagecraft/ir/scopes.hpp>
#include <stagecraft/ir/wgmma.hpp>
#include <stagecraft/nvrtc/nvrtc.hpp>
#include <stagecraft/registry.hpp>
#include <stagecraft/stagecraft.hpp>

#include "../interp/atomic_kernels.hpp"
#include "../interp/reduce_kernels.hpp"
#include "../interp/row_state_kernels.hpp"
#include "../interp/stmatrix_kernels.hpp"
#include "../interp/tile_ops_kernels.hpp"
#include "../interp/tmem_a_kernels.hpp"
#include "../zoo/zoo.hpp"

using namespace stagecraft;
using Catch::Matchers::Contains;

namespace {
std::string temp_cache() {
  auto dir = std::filesystem::temp_directory_path() / ("stagecraft-test-cache-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  return dir.string();
}
// The options of a test that reads what NVRTC made of a kernel. No memory cache: each test
// compiles what it checks. No disk cache either, unless $STAGECRAFT_TEST_JIT_CACHE names one: CI
// gives its g++, clang and sanitizer builds one directory, so NVRTC's own work (ptxas on the
// attention kernels: 45 s of one build's test time, twice that under ASan's allocator) is done
// once. A later build reuses an entry only where its code generator emitted the same source
// byte for byte, because the disk key covers the generated source (nvrtc::compile); so the
// clang and ASan builds still show that their generator writes what g++'s wrote, and every
// check below still reads the PTX and ptxas' report of that source.
nvrtc::options ptx_options(nvrtc::codegen_options g = {}) {
  const char* dir = std::getenv("STAGECRAFT_TEST_JIT_CACHE");
  const bool shared = dir != nullptr && *dir != '\0';
  return {.codegen = g, .memory_cache = false, .disk_cache = shared, .cache_dir = shared ? dir : ""};
}
bool uses(ir::Kernel const& k, ir::StmtOp op) {
  for (auto const& s : k.stmts)
    if (s.op == op) return true;
  return false;
}
// Whether a barrier_arrive of the kernel arrives on an allocation of this kind.
bool arrives_on(ir::Kernel const& k, ir::AllocKind kind) {
  for (auto const& s : k.stmts)
    if (s.op == ir::StmtOp::barrier_arrive && k.allocs[k.refs[s.refs[0]].id].kind == kind) return true;
  return false;
}
bool has_barrier(ir::Kernel const& k) {
  return std::any_of(k.allocs.begin(), k.allocs.end(),
                     [](ir::Alloc const& a) { return a.kind == ir::AllocKind::barrier || a.kind == ir::AllocKind::cluster_barrier; });
}

}  // namespace

TEST_CASE("every example compiles through NVRTC for sm_90a and sm_100a, with the promised instructions and no spills", "[nvrtc]") {
  const nvrtc::options o = ptx_options();
  for (auto const* e : registry::global().all()) {
    auto k = e->build(registry::resolve(*e, {}));
    for (auto t : {ir::Target::sm_90a, ir::Target::sm_100a}) {
      if (t == ir::Target::sm_100a && uses(k, ir::StmtOp::wgmma)) continue;  // wgmma is Hopper's alone
      if (t == ir::Target::sm_90a && uses(k, ir::StmtOp::tcgen05_mma)) continue;  // and tcgen05 Blackwell's
      INFO("kernel " << e->name << " on " << ir::target_name(t));
      k.target = t;
      const auto c = nvrtc::compile(k, t, o);
      CHECK(!c.ptx.empty());
      CHECK(c.cubin.size() > 1000);
      CHECK(c.spill_bytes == 0);
      CHECK(c.registers > 0);
      CHECK_THAT(c.ptx, Contains(t == ir::Target::sm_90a ? ".target sm_90a" : ".target sm_100a"));
      if (has_barrier(k))  // softmax_masked has none: generic loads and stores only
        CHECK_THAT(c.ptx, Contains("mbarrier.init.shared::cta.b64") && Contains("mbarrier.try_wait.parity") &&
                              Contains("fence.mbarrier_init.release.cluster"));
      if (uses(k, ir::StmtOp::copy_gmem_to_smem))
        CHECK_THAT(c.ptx, Contains("cp.async.bulk.tensor") && Contains("mbarrier.arrive.expect_tx") && Contains("complete_tx::bytes") &&
                              Contains("prefetch.tensormap"));
      if (uses(k, ir::StmtOp::copy_smem_to_gmem))
        CHECK_THAT(c.ptx, Contains("bulk_group") && Contains("cp.async.bulk.commit_group") && Contains("cp.async.bulk.wait_group"));
      if (uses(k, ir::StmtOp::commit_smem)) CHECK_THAT(c.ptx, Contains("fence.proxy.async.shared::cta"));
      if (arrives_on(k, ir::AllocKind::barrier)) CHECK_THAT(c.ptx, Contains("mbarrier.arrive.release.cta.shared::cta.b64"));
      // A cluster barrier's arrivals at the scope ir::cluster_barrier_scope gives it; only a
      // .cluster one needs .acquire.cluster waits (and pays a MEMBAR.GPU per arrival for it).
      if (arrives_on(k, ir::AllocKind::cluster_barrier)) {
        bool strong = false;
        for (std::size_t a = 0; a < k.allocs.size(); ++a)
          if (k.allocs[a].kind == ir::AllocKind::cluster_barrier) strong = strong || !ir::cluster_barrier_scope(k, static_cast<int>(a)).cta;
        CHECK_THAT(c.ptx, Contains(strong ? "mbarrier.arrive.release.cluster.shared::cluster.b64" : "mbarrier.arrive.release.cta.shared::cluster.b64"));
        if (!strong) CHECK_THAT(c.ptx, !Contains("mbarrier.arrive.release.cluster") && !Contains("acquire.cluster"));
      }
      // One .cta_group for every tcgen05 instruction: 2 in a kernel with the pair's MMA.
      const std::string group = std::any_of(k.stmts.begin(), k.stmts.end(), [](ir::Stmt const& s) { return s.op == ir::StmtOp::tcgen05_mma && s.n == 2; })
                                    ? "cta_group::2"
                                    : "cta_group::1";
      if (ir::tmem_columns(k) > 0)  // TMEM's life: allocated by one warp, the permit given up, freed before exit; the fences
        CHECK_THAT(c.ptx, Contains("tcgen05.alloc." + group + ".sync.aligned.shared::cta.b32") &&
                              Contains("tcgen05.relinquish_alloc_permit." + group + ".sync.aligned") &&
                              Contains("tcgen05.dealloc." + group + ".sync.aligned.b32") && Contains("tcgen05.fence::before_thread_sync") &&
                              Contains("tcgen05.fence::after_thread_sync"));
      else
        CHECK_THAT(c.ptx, !Contains("tcgen05"));
      if (uses(k, ir::StmtOp::tcgen05_mma)) CHECK_THAT(c.ptx, Contains("tcgen05.mma." + group + ".kind::"));
      if (uses(k, ir::StmtOp::tcgen05_commit_arrive))
        CHECK_THAT(c.ptx, Contains("tcgen05.commit." + group + ".mbarrier::arrive::one.shared::cluster." +
                                   (group == "cta_group::2" ? "multicast::cluster.b64" : "b64")));
      const std::string other = group == "cta_group::2" ? "cta_group::1" : "cta_group::2";
      CHECK_THAT(c.ptx, !Contains("tcgen05.alloc." + other) && !Contains("tcgen05.mma." + other) && !Contains("tcgen05.commit." + other));
      if (std::any_of(k.values.begin(), k.values.end(), [](ir::Value const& v) { return v.op == ir::ValueOp::load_tmem; }))
        CHECK_THAT(c.ptx, Contains("tcgen05.ld.sync.aligned.32x32b.x") && Contains("tcgen05.wait::ld.sync.aligned"));
      // An index table (x.at(i): gemm_grouped's offsets) is read through the read-only cache.
      if (std::any_of(k.exprs.begin(), k.exprs.end(), [](ir::Expr const& x) { return x.op == ir::ExprOp::load; }))
        CHECK_THAT(c.ptx, Contains("ld.global.nc"));
    }
  }
}

// GMEM crossing proxies between the CTAs of a cluster (docs/codegen.md, "Proxy fences"). A TMA
// store read by a peer's generic loads: the issuing lane's full bulk wait (no .read), then the
// warpgroup barrier, then the release, and no fence.proxy.async for GMEM (the store's completion
// carries one). Ordinary stores read by a peer's TMA load: the writers' unqualified
// fence.proxy.async before the release.
TEST_CASE("GMEM handed between CTAs across proxies: the full bulk wait before the release, the unqualified fence for generic writes",
          "[nvrtc][proxy]") {
  const nvrtc::options o = ptx_options();
  auto before = [](std::string const& ptx, std::string const& a, std::string const& b) {
    const auto i = ptx.find(a), j = ptx.find(b);
    return i != std::string::npos && j != std::string::npos && i < j;
  };
  auto const& e = registry::global().find("splitk_cluster");
  for (std::int64_t S : {2, 4}) {
    INFO("splitk_cluster tma=1 S=" << S);
    const auto c = nvrtc::compile(e.build(registry::resolve(e, {{"tma", 1}, {"S", S}})), ir::Target::sm_90a, o);
    CHECK(c.spill_bytes == 0);
    CHECK(before(c.ptx, "cp.async.bulk.wait_group 0;", "mbarrier.arrive.release.cluster"));
    CHECK_THAT(c.ptx, !Contains("cp.async.bulk.wait_group.read") && !Contains("fence.proxy.async;") && !Contains("fence.proxy.async.global"));
    CHECK_THAT(c.ptx, Contains("fence.proxy.async.shared::cta"));  // the SMEM partial's ordinary stores before the store reads them
  }
  {
    INFO("zoo_tma_store_then_generic_read, both variants");
    const auto fixed = nvrtc::compile(zoo::tma_store_then_generic_read(zoo::variant::fixed), ir::Target::sm_90a, o);
    CHECK(fixed.spill_bytes == 0);
    CHECK(before(fixed.ptx, "cp.async.bulk.wait_group 0;", "mbarrier.arrive.release.cluster"));
    const auto buggy = nvrtc::compile(zoo::tma_store_then_generic_read(zoo::variant::buggy), ir::Target::sm_90a, o);
    CHECK(before(buggy.ptx, "cp.async.bulk.wait_group.read 0;", "mbarrier.arrive.release.cluster"));
    CHECK_THAT(buggy.ptx, !Contains("cp.async.bulk.wait_group 0;"));
  }
  {
    INFO("zoo_generic_store_then_tma_read, both variants");
    const auto fixed = nvrtc::compile(zoo::generic_store_then_tma_read(zoo::variant::fixed), ir::Target::sm_90a, o);
    CHECK(fixed.spill_bytes == 0);
    CHECK(before(fixed.ptx, "fence.proxy.async;", "mbarrier.arrive.release.cluster"));
    CHECK(before(fixed.ptx, "mbarrier.arrive.release.cluster", "cp.async.bulk.tensor"));
    const auto buggy = nvrtc::compile(zoo::generic_store_then_tma_read(zoo::variant::buggy), ir::Target::sm_90a, o);
    CHECK_THAT(buggy.ptx, !Contains("fence.proxy.async"));
  }
}

TEST_CASE("the JIT cache: memory hit, disk hit, and a changed kernel misses", "[nvrtc]") {
  const auto dir = temp_cache();
  const nvrtc::options o{.cache_dir = dir};
  auto const& e = registry::global().find("scale_store");
  const auto k = e.build(registry::resolve(e, {}));
  nvrtc::clear_memory_cache();
  const auto first = nvrtc::compile(k, ir::Target::sm_90a, o);
  CHECK(first.origin == nvrtc::compiled::source::compiled);
  const auto second = nvrtc::compile(k, ir::Target::sm_90a, o);
  CHECK(second.origin == nvrtc::compiled::source::memory_cache);
  CHECK(second.ptx == first.ptx);
  nvrtc::clear_memory_cache();
  const auto third = nvrtc::compile(k, ir::Target::sm_90a, o);
  CHECK(third.origin == nvrtc::compiled::source::disk_cache);
  CHECK(third.cubin == first.cubin);
  CHECK(third.spill_bytes == 0);
  // Another ring depth is another kernel; another target another key.
  const auto other = nvrtc::compile(e.build(registry::resolve(e, {{"K", 2}})), ir::Target::sm_90a, o);
  CHECK(other.origin == nvrtc::compiled::source::compiled);
  CHECK(other.key != first.key);
  CHECK(nvrtc::cache_key(k, ir::Target::sm_100a) != first.key);
  std::filesystem::remove_all(dir);
}

// Run-time extents (issue 25 item 3): the kernel compiled for one value of M (or S) is the one
// every other value gets from the cache, its code reads the size from an argument, and it has no
// spills; compiled in, another value is another kernel.
TEST_CASE("a run-time extent compiles once: the same source, key and CUBIN for every value, no spills", "[nvrtc][run_time]") {
  const auto dir = temp_cache();
  const nvrtc::options o{.cache_dir = dir};
  nvrtc::clear_memory_cache();
  struct sweep {
    std::string kernel, size;
    param_values fixed;
    std::vector<std::int64_t> values;
  };
  for (auto const& s : std::vector<sweep>{{"gemm_hopper", "M", {{"N", 1000}, {"K", 1000}}, {1000, 128, 4097}},
                                          {"attention_hopper", "S", {{"causal", 1}}, {1000, 64, 4096}},
                                          {"attention_hopper", "S", {}, {1000, 4096}},
                                          {"softmax_rows", "M", {}, {1000, 16}},
                                          {"gemm_grouped", "T", {}, {600, 4096}},
                                          {"attention_varlen", "T", {{"causal", 1}}, {300, 1000}}}) {
    auto const& e = registry::global().find(s.kernel);
    auto at = [&](std::int64_t v, bool dynamic) {
      auto set = s.fixed;
      set[s.size] = v;
      if (dynamic) set[s.size + "?"] = 1;
      return e.build(registry::resolve(e, set));
    };
    INFO(s.kernel << " --dynamic " << s.size);
    const auto first = nvrtc::compile(at(s.values[0], true), ir::Target::sm_90a, o);
    const auto key = nvrtc::cache_key(at(s.values[0], true), ir::Target::sm_90a);
    CHECK(first.origin == nvrtc::compiled::source::compiled);
    CHECK(first.spill_bytes == 0);
    CHECK_THAT(first.code.source, Contains("const long long ext_" + s.size));
    for (auto v : s.values) {
      INFO(s.size << "=" << v);
      const auto k = at(v, true);
      CHECK(nvrtc::generate(k).source == first.code.source);
      CHECK(nvrtc::cache_key(k, ir::Target::sm_90a) == key);
      const auto c = nvrtc::compile(k, ir::Target::sm_90a, o);
      CHECK(c.origin == nvrtc::compiled::source::memory_cache);
      CHECK(c.key == first.key);
      CHECK(c.cubin == first.cubin);
      // Compiled in, the value is in the code and the key.
      const auto fixed = at(v, false);
      CHECK_THAT(nvrtc::generate(fixed).source, !Contains("ext_"));
      CHECK(nvrtc::cache_key(fixed, ir::Target::sm_90a) != key);
    }
    std::printf("%s --dynamic %s: %d registers, %lld spill bytes (one compile for %zu sizes)\n", s.kernel.c_str(), s.size.c_str(), first.registers,
                static_cast<long long>(first.spill_bytes), s.values.size());
  }
  std::filesystem::remove_all(dir);
}

// The same kernel on whatever line the macro is used.
#define SC_TWIN(BAR)                                                                                                            \
  lower(kernel<sm_90a>("twin", grid(1), threads(1_c), gmem<f32>("x", shape(64_c, 64_c)), smem<f32>(shape(64_c, 64_c)), BAR,      \
                       [](auto x, auto s, auto bar) { return seq(copy_gmem_to_smem(x.block(0_c, 0_c), s, bar), barrier_wait(bar)); }))

TEST_CASE("the JIT cache key ignores source lines but not names", "[nvrtc][srcloc]") {
  const ir::Kernel a = SC_TWIN(barrier(arrivals(1_c)));
  const ir::Kernel moved =

      SC_TWIN(barrier(arrivals(1_c)));
  const ir::Kernel named = SC_TWIN(barrier("full", arrivals(1_c)));
  REQUIRE(a.debug.stmts != moved.debug.stmts);
  // Moving a kernel down its file keeps its cached binary ...
  CHECK(nvrtc::cache_key(a, ir::Target::sm_90a) == nvrtc::cache_key(moved, ir::Target::sm_90a));
  // ... but a renamed barrier is another generated source (its comments and watchdog report).
  CHECK(nvrtc::cache_key(a, ir::Target::sm_90a) != nvrtc::cache_key(named, ir::Target::sm_90a));
  nvrtc::options o;
  o.disk_cache = false;
  nvrtc::clear_memory_cache();
  (void)nvrtc::compile(a, ir::Target::sm_90a, o);
  const auto hit = nvrtc::compile(moved, ir::Target::sm_90a, o);
  CHECK(hit.origin == nvrtc::compiled::source::memory_cache);
  const auto renamed = nvrtc::compile(named, ir::Target::sm_90a, o);
  CHECK(renamed.origin == nvrtc::compiled::source::compiled);
  CHECK_THAT(renamed.code.source, Contains("// full"));
}

TEST_CASE("generated code NVRTC rejects is reported as our bug, with the log and the source around it", "[nvrtc]") {
  nvrtc::generated g;
  g.entry = "broken";
  g.source = "extern \"C\" __global__ void broken(float* y) {\n  y[threadIdx.x] = undeclared_name;\n}\n";
  REQUIRE_THROWS_AS(nvrtc::compile_generated(g, ir::Target::sm_100a), nvrtc::compile_error);
  REQUIRE_THROWS_WITH(nvrtc::compile_generated(g, ir::Target::sm_100a),
                      Contains("a bug in stagecraft's code generator") && Contains("kernel 'broken' on sm_100a") &&
                          Contains("undeclared_name") && Contains(">    2 |   y[threadIdx.x] = undeclared_name;"));
}

namespace {
// The one entry file a compile leaves in a fresh cache folder.
std::filesystem::path only_entry(std::string const& dir) {
  std::vector<std::filesystem::path> files;
  for (auto const& f : std::filesystem::directory_iterator(dir)) files.push_back(f.path());
  REQUIRE(files.size() == 1);
  return files.front();
}
std::string slurp(std::filesystem::path const& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}
void spit(std::filesystem::path const& p, std::string const& s) {
  std::ofstream(p, std::ios::binary | std::ios::trunc).write(s.data(), static_cast<std::streamsize>(s.size()));
}
}  // namespace

TEST_CASE("a damaged disk cache entry is recompiled, never served", "[nvrtc]") {
  const auto dir = temp_cache();
  const nvrtc::options o{.memory_cache = false, .cache_dir = dir};
  auto const& e = registry::global().find("scale_store");
  const auto k = e.build(registry::resolve(e, {}));
  const auto fresh = nvrtc::compile(k, ir::Target::sm_90a, o);
  REQUIRE(nvrtc::compile(k, ir::Target::sm_90a, o).origin == nvrtc::compiled::source::disk_cache);
  const auto path = only_entry(dir);
  const std::string good = slurp(path);

  // One byte of the PTX changed, framing intact: before the payload hash this was served (exit 0).
  std::string garbled = good;
  const auto at = garbled.find(".target");
  REQUIRE(at != std::string::npos);
  garbled[at + 1] = 'T';
  spit(path, garbled);
  auto c = nvrtc::compile(k, ir::Target::sm_90a, o);
  CHECK(c.origin == nvrtc::compiled::source::compiled);
  CHECK(c.ptx == fresh.ptx);
  const auto again = nvrtc::compile(k, ir::Target::sm_90a, o);  // the entry was rewritten whole
  CHECK(again.origin == nvrtc::compiled::source::disk_cache);
  CHECK(again.ptx == fresh.ptx);

  // A length field claiming more than the file holds, and a truncated file: both recompiled.
  std::string huge = good;
  const std::uint64_t big = std::uint64_t{1} << 29;
  std::memcpy(huge.data() + 8 + 16, &big, sizeof big);  // the PTX length, after the magic's blob
  spit(path, huge);
  CHECK(nvrtc::compile(k, ir::Target::sm_90a, o).origin == nvrtc::compiled::source::compiled);
  spit(path, good.substr(0, good.size() / 2));
  CHECK(nvrtc::compile(k, ir::Target::sm_90a, o).cubin == fresh.cubin);
  std::filesystem::remove_all(dir);
}

TEST_CASE("watchdog waits compile for every example with no spills and name their barrier", "[nvrtc]") {
  const nvrtc::options o = ptx_options({.watchdog_ms = 1500});
  for (auto const* e : registry::global().all()) {
    auto k = e->build(registry::resolve(*e, {}));
    for (auto t : {ir::Target::sm_90a, ir::Target::sm_100a}) {
      if (t == ir::Target::sm_100a && uses(k, ir::StmtOp::wgmma)) continue;  // wgmma is Hopper's alone
      if (t == ir::Target::sm_90a && uses(k, ir::StmtOp::tcgen05_mma)) continue;  // and tcgen05 Blackwell's
      INFO("kernel " << e->name << " on " << ir::target_name(t));
      k.target = t;
      const auto c = nvrtc::compile(k, t, o);
      CHECK(c.spill_bytes == 0);
      CHECK_THAT(c.code.source, !Contains("sc::mbar_wait("));  // every wait is bounded
      if (!has_barrier(k)) continue;  // softmax_masked waits for nothing
      CHECK_THAT(c.code.source, Contains("sc::mbar_wait_watchdog<") && Contains("1500000000ull"));
      CHECK_THAT(c.ptx, Contains("%globaltimer") && Contains("trap;") && Contains("vprintf"));
    }
  }
  // The watchdog is part of the key: a bounded and an unbounded build never share a cache entry.
  auto const& e = registry::global().find("add_one");
  const auto k = e.build(registry::resolve(e, {}));
  CHECK(nvrtc::cache_key(k, ir::Target::sm_90a, {.watchdog_ms = 1500}) != nvrtc::cache_key(k, ir::Target::sm_90a));
}

TEST_CASE("kernels and parameters named like generated code (sc, smem, ...) or CUDA (expf, main, ...) compile", "[nvrtc]") {
  const nvrtc::options o = ptx_options();
  auto named = [](std::string const& name, std::string const& a, std::string const& b) {
    return lower(kernel<sm_90a>(name, grid(1), threads(1_c), gmem<f32>(a, shape(64_c, 32_c)), gmem<f32>(b, shape(64_c, 32_c)),
                                smem<f32>(shape(64_c, 32_c)), barrier(arrivals(1_c)), [](auto x, auto y, auto buf, auto bar) {
                                  return seq(copy_gmem_to_smem(x.block(0_c, 0_c), buf, bar), barrier_wait(bar), store(buf, load(buf) + 1.0f),
                                             commit_smem(), copy_smem_to_gmem(buf, y.block(0_c, 0_c)), commit_smem_to_gmem_group(),
                                             wait_smem_to_gmem(0_c));
                                }));
  };
  for (auto const& [name, a, b] : std::vector<std::array<std::string, 3>>{
           {"sc", "smem", "sc"}, {"smem", "sc", "smem"}, {"smem_base", "wg", "lane"}, {"parity", "tmap0", "parity"},
           {"expf", "main", "min"}, {"threadIdx", "x", "y"}, {"main", "x", "y"}, {"int", "x", "y"}}) {
    INFO("kernel " << name << "(" << a << ", " << b << ")");
    const auto c = nvrtc::compile(named(name, a, b), ir::Target::sm_90a, o);
    CHECK_THAT(c.ptx, Contains(".entry stagecraft_" + name + "("));
  }
}

TEST_CASE("one-element SMEM stores, u32 products and rank-6 parameters compile", "[nvrtc]") {
  const nvrtc::options o = ptx_options();
  auto one = lower(kernel<sm_90a>("one_element", grid(1), threads(1_c), gmem<f32>("x", shape(8_c, 32_c)), gmem<f32>("y", shape(8_c, 32_c)),
                                  smem<f32>(shape(8_c, 32_c)), barrier(arrivals(1_c)), [](auto x, auto y, auto buf, auto bar) {
                                    return seq(copy_gmem_to_smem(x.block(0_c, 0_c), buf, bar), barrier_wait(bar),
                                               store(buf[3_c][5_c], load(buf[1_c][2_c]) * 2.0f + load(buf[3_c][5_c])), commit_smem(),
                                               copy_smem_to_gmem(buf, y.block(0_c, 0_c)), commit_smem_to_gmem_group(), wait_smem_to_gmem(0_c));
                                  }));
  auto u32_mul = lower(kernel<sm_90a>("u32_mul", grid(1), threads(1_c), gmem<u32>("x", shape(256_c)), gmem<u32>("y", shape(256_c)),
                                      [](auto x, auto y) {
                                        auto t = [&](auto p) { return p.tile(shape(256_c), 0_c); };
                                        return store(t(y), load(t(x)) * load(t(x)));
                                      }));
  auto rank6 = lower(kernel<sm_90a>("rank6", grid(2), threads(1_c), gmem<f32>("x", shape(4, 2, 2, 2, 4, 32)), gmem<f32>("y", shape(4, 2, 2, 2, 4, 32)),
                                    [](auto x, auto y) {
                                      auto t = [&](auto p) { return p.tile(shape(2_c, 2_c, 2_c, 2_c, 4_c, 32_c), program_id(), 0, 0, 0, 0, 0); };
                                      return store(t(y), load(t(x)) * 3.0f);
                                    }));
  for (auto const* k : {&one, &u32_mul, &rank6}) {
    INFO("kernel " << k->name);
    const auto c = nvrtc::compile(*k, ir::Target::sm_90a, o);
    CHECK(c.spill_bytes == 0);
  }
  CHECK_THAT(nvrtc::compile(u32_mul, ir::Target::sm_90a, o).ptx, Contains("mul.lo.s32") || Contains("mul.lo.u32"));
}

TEST_CASE("a multicast load, its mask and share emitted as constants, compiles through NVRTC with no spills", "[nvrtc]") {
  // No bundled example multicasts yet; this is the code test_codegen_numbers.cpp checks the numbers of.
  const auto k = lower(kernel<sm_90a>("mcast", grid(2, 2, 2), threads(1_c), cluster(2_c, 2_c, 2_c), gmem<f32>("w", shape(128_c, 64_c)),
                                      smem<f32>(shape(128_c, 64_c)), barrier(arrivals(1_c)), [](auto w, auto ws, auto bar) {
                                        return seq(copy_gmem_to_smem(w.block(0_c, 0_c), ws, bar, collective_axes(0_c, 2_c)), barrier_wait(bar));
                                      }));
  const auto c = nvrtc::compile(k, ir::Target::sm_90a, ptx_options());
  CHECK(c.spill_bytes == 0);
  // The CTA's place in the cluster is blockIdx mod the static extent (prelude.hpp): %ctaid, never
  // %cluster_ctaid, which ptxas emulates with a float division at every read.
  CHECK_THAT(c.ptx, Contains("multicast::cluster") && Contains("%ctaid.x") && Contains("%ctaid.z") && !Contains("%cluster_ctaid"));
}

TEST_CASE("multiplies and adds round separately, as in the interpreter: no fused multiply-add in the PTX", "[nvrtc]") {
  // x * 3 + 1 contracted into an fma rounds once instead of twice: the last bit would differ
  // from the interpreter and the reference on a GPU, and nowhere else.
  const auto k = lower(kernel<sm_90a>("mul_add", grid(1), threads(1_c), gmem<f32>("x", shape(128_c, 64_c)), smem<f32>(shape(128_c, 64_c)),
                                      barrier(arrivals(1_c)), [](auto x, auto buf, auto bar) {
                                        return seq(copy_gmem_to_smem(x.block(0_c, 0_c), buf, bar), barrier_wait(bar),
                                                   store(buf, load(buf) * 3.0f + 1.0f), commit_smem(), copy_smem_to_gmem(buf, x.block(0_c, 0_c)),
                                                   commit_smem_to_gmem_group(), wait_smem_to_gmem(0_c));
                                      }));
  const auto c = nvrtc::compile(k, ir::Target::sm_90a, ptx_options());
  CHECK_THAT(c.ptx, Contains("mul.rn.f32") && Contains("add.rn.f32"));
  CHECK_THAT(c.ptx, !Contains("fma.rn.f32"));
}

TEST_CASE("wgmma kernels: wgmma.mma_async in the PTX, no spills and no serialized wgmma in ptxas' report", "[nvrtc][wgmma]") {
  const nvrtc::options o = ptx_options();
  for (std::string name : {"gemm_small", "gemm_hopper", "gemm_fp8"}) {
    auto const& e = registry::global().find(name);
    for (auto const& p : e.params)
      for (auto v : p.allowed) {  // every ring depth, the rest at their defaults
        param_values set{{p.name, v}};
        if (p.name == "tickets" && v == 1) set.insert({"cluster", 1});  // a ticket is one CTA's tile
        const auto k = e.build(registry::resolve(e, set));
        const auto c = nvrtc::compile(k, ir::Target::sm_90a, o);
        INFO(name << " " << p.name << "=" << v << ": " << c.registers << " registers\n" << c.log);
        std::printf("%s %s=%lld: %d registers, %d spill bytes\n", name.c_str(), p.name.c_str(), static_cast<long long>(v), c.registers, c.spill_bytes);
        CHECK_THAT(c.ptx, Contains("wgmma.mma_async.sync.aligned.m64n") && Contains("wgmma.fence.sync.aligned") &&
                              Contains("wgmma.commit_group.sync.aligned") && Contains("wgmma.wait_group.sync.aligned"));
        CHECK(c.spill_bytes == 0);
        CHECK(c.registers > 0);
        // ptxas says "... wgmma.mma_async instructions are serialized due to ..." when it cannot
        // keep the accumulators in place across the asynchronous instructions.
        CHECK_THAT(c.log, !Contains("serialized"));
        CHECK_THAT(c.log, !Contains("local memory") || Contains("0 bytes stack frame"));
        CHECK_THAT(c.ptx, !Contains(".local"));
        if (name == "gemm_hopper") {
          CHECK_THAT(c.ptx, Contains("setmaxnreg.dec.sync.aligned.u32 24") && Contains("setmaxnreg.inc.sync.aligned.u32 240"));
          CHECK_THAT(c.log, !Contains("setmaxnreg"));  // e.g. "setmaxnreg ignored; unable to determine register count at entry"
        }
      }
  }
}

TEST_CASE("stmatrix epilogues: ptxas accepts stmatrix.sync.aligned.m8n8.x4.shared.b16 for sm_90a in every layout and example, with no spills",
          "[nvrtc][wgmma][stmatrix]") {
  const nvrtc::options o = ptx_options();
  auto kernels = testing::stmatrix::kernels();
  for (auto const& [name, set] : std::vector<std::pair<std::string, param_values>>{
           {"gemm_hopper", {}}, {"gemm_hopper", {{"stages", 3}}}, {"gemm_hopper", {{"M", 4096}, {"N", 4096}, {"K", 4096}, {"ctas", 132}}},
           {"gemm_fp8", {{"acc", 16}}}, {"gemm_fp8", {{"scaled", 1}}}, {"gemm_fp8_blockwise", {}}, {"attention_hopper", {{"D", 128}}},
           {"attention_hopper", {{"D", 256}}}}) {
    auto const& e = registry::global().find(name);
    kernels.push_back(e.build(registry::resolve(e, set)));
  }
  for (auto const& k : kernels) {
    const auto c = nvrtc::compile(k, ir::Target::sm_90a, o);
    INFO(k.name << ": " << c.registers << " registers\n" << c.log);
    std::printf("%s sm_90a: %d registers, %d spill bytes\n", k.name.c_str(), c.registers, c.spill_bytes);
    CHECK_THAT(c.ptx, Contains("stmatrix.sync.aligned.m8n8.x4.shared.b16"));
    CHECK(c.spill_bytes == 0);
    CHECK_THAT(c.log, !Contains("serialized"));
  }
  const auto fallback = nvrtc::compile(testing::stmatrix::fallback_kernel(), ir::Target::sm_90a, o);
  CHECK_THAT(fallback.ptx, !Contains("stmatrix"));
  CHECK(fallback.spill_bytes == 0);
}

TEST_CASE("a wgmma whose B operands are sub-views of one swizzled array compiles for sm_90a with no spills and no serialized wgmma",
          "[nvrtc][wgmma][smem_views]") {
  const nvrtc::options o = ptx_options();
  const auto c = nvrtc::compile(testing::tile_ops::smem_view_wgmma_kernel(), ir::Target::sm_90a, o);
  INFO(c.log);
  std::printf("smem_view_wgmma sm_90a: %d registers, %d spill bytes\n", c.registers, c.spill_bytes);
  CHECK(c.spill_bytes == 0);
  CHECK(c.registers > 0);
  CHECK_THAT(c.ptx, Contains("wgmma.mma_async.sync.aligned.m64n64k16") && Contains("cp.async.bulk.tensor.2d"));
  CHECK_THAT(c.log, !Contains("serialized"));
}

TEST_CASE("tile ops (math, reductions, broadcast, iota, fills) compile for sm_90a with no spills, on the shared math and not CUDA's approximations",
          "[nvrtc][tile_ops]") {
  const nvrtc::options o = ptx_options();
  for (auto& c : testing::tile_ops::all()) {
    INFO("kernel " << c.name);
    const auto r = nvrtc::compile(c.kernel, ir::Target::sm_90a, o);
    CHECK(r.spill_bytes == 0);
    CHECK(r.registers > 0);
    std::printf("%-12s sm_90a: %d registers per thread, %d spill bytes\n", c.name, r.registers, r.spill_bytes);
    // expf/exp2f/logf/rsqrtf/tanhf lower to these MUFU approximations; the prelude's functions
    // are plain f32 arithmetic (stagecraft/ir/math.hpp), the interpreter's own.
    for (const char* approx : {"ex2.approx", "lg2.approx", "rsqrt.approx", "tanh.approx"}) CHECK_THAT(r.ptx, !Contains(approx));
    // No contraction (--fmad=false); only the explicit fma(a, b, c) of tile_select fuses.
    if (std::string(c.name) == "tile_select") CHECK_THAT(r.ptx, Contains("fma.rn.f32") && Contains("setp."));
    else CHECK_THAT(r.ptx, !Contains("fma.rn.f32"));
  }
  CHECK_THAT(nvrtc::compile(testing::tile_ops::math_kernel(), ir::Target::sm_90a, o).ptx, Contains("sqrt.rn.f32") && Contains("div.rn.f32"));
  // What the check guards against: the same kernel on CUDA's expf (the generator before the
  // shared math) compiles to ex2.approx.
  auto g = nvrtc::generate(testing::tile_ops::math_kernel());
  for (std::size_t at; (at = g.source.find("sc::math_exp(")) != std::string::npos;) g.source.replace(at, 13, "expf(");
  CHECK_THAT(nvrtc::compile_generated(std::move(g), ir::Target::sm_90a).ptx, Contains("ex2.approx"));
  // The softmax example: TMA ring in and out, the shared exp, no approximation either.
  auto const& e = registry::global().find("softmax_rows");
  const auto r = nvrtc::compile(e.build(registry::resolve(e, {})), ir::Target::sm_90a, o);
  std::printf("%-12s sm_90a: %d registers per thread, %d spill bytes\n", "softmax_rows", r.registers, r.spill_bytes);
  CHECK(r.spill_bytes == 0);
  CHECK_THAT(r.ptx, !Contains("ex2.approx") && Contains("cp.async.bulk.tensor"));
}

namespace {
// C (128, 64) = A (128, 64) * B^T in one warpgroup: `T` bf16 (kind::f16) or f32 (kind::tf32).
template <class T>
ir::Kernel tc_one_cta(const char* name) {
  constexpr long long KT = 128 / (T::bits / 8);  // K per 128-byte swizzled row
  return lower(kernel<sm_100a>(
      name, grid(1), threads(1_c), gmem<T>("a", shape(128_c, int_c<KT>)), gmem<T>("b", shape(64_c, int_c<KT>)), gmem<f32>("c", shape(128_c, 64_c)),
      smem<T>(shape(128_c, int_c<KT>), swizzle(128_c)), smem<T>(shape(64_c, int_c<KT>), swizzle(128_c)), smem<f32>(shape(128_c, 64_c)),
      barrier(arrivals(2_c)), barrier(arrivals(1_c), orders_tensor_core), tmem<f32>(shape(128_c, 64_c)),
      [](auto a, auto b, auto c, auto as, auto bs, auto cs, auto loaded, auto done, auto d) {
        return seq(copy_gmem_to_smem(a.block(0_c, 0_c), as, loaded), copy_gmem_to_smem(b.block(0_c, 0_c), bs, loaded), barrier_wait(loaded),
                   tcgen05_mma(d, as, transpose(bs), done, 0_c > 1_c), barrier_wait(done), store(cs, async_load_tmem(d) * 2.0f), tmem_dealloc(d), commit_smem(),
                   copy_smem_to_gmem(cs, c.block(0_c, 0_c)), commit_smem_to_gmem_group(), wait_smem_to_gmem(0_c));
      }));
}
std::size_t occurrences(std::string const& text, std::string const& what) {
  std::size_t n = 0;
  for (auto p = text.find(what); p != std::string::npos; p = text.find(what, p + what.size())) ++n;
  return n;
}
}  // namespace

TEST_CASE("tcgen05: gemm_blackwell at every tile width and ring depth, and kind::tf32, compile for sm_100a with no spills", "[nvrtc][tcgen05]") {
  const nvrtc::options o = ptx_options();
  auto const& e = registry::global().find("gemm_blackwell");
  for (long long bn : {64, 128, 256})
    for (long long stages : {2, 3, 4}) {
      INFO("BN=" << bn << " stages=" << stages);
      const auto k = e.build(registry::resolve(e, {{"BN", bn}, {"N", 256}, {"stages", stages}}));
      const auto c = nvrtc::compile(k, ir::Target::sm_100a, o);
      CHECK(c.spill_bytes == 0);
      // The 4 k16 instructions of one 64-wide K slice, once per K slice NVVM unrolled the loop into.
      const auto mmas = occurrences(c.ptx, "tcgen05.mma.cta_group::1.kind::f16");
      CHECK(mmas >= 4);
      CHECK(mmas % 4 == 0);
      CHECK(occurrences(c.code.source, "sc::tc_mma_f16(") == 4);
      CHECK(occurrences(c.ptx, "tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32") == 1);
      CHECK(occurrences(c.ptx, "tcgen05.dealloc.cta_group::1.sync.aligned.b32") == 1);
      CHECK(occurrences(c.ptx, "tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned") == 1);
      CHECK(occurrences(c.ptx, "tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64") >= 2);  // a stage's and `done`'s
      // In the epilogue's column loop, once per 64-column subtile NVVM unrolled the subtile loop into.
      const auto lds = occurrences(c.ptx, "tcgen05.ld.sync.aligned.32x32b.x32.b32");
      CHECK(lds >= 1);
      CHECK(lds <= bn / 64);
      CHECK(occurrences(c.ptx, "tcgen05.wait::ld.sync.aligned") == lds);
      // Two accumulators of BN f32 columns (the ring d), one allocation of exactly 2 BN (already a
      // power of two >= 32); tile i's MMAs and load at column (i % 2) BN of it.
      CHECK_THAT(c.code.source, Contains("sc::tmem_alloc(smem_base + ") && Contains("u, " + std::to_string(2 * bn) + "u);  // t7 (2, 128, " + std::to_string(bn) + ") f32") &&
                                    Contains("sc::tmem_relinquish();") && Contains("if (lane < 32) sc::tmem_dealloc(tmem7, " + std::to_string(2 * bn) + "u);") &&
                                    Contains(") * " + std::to_string(bn) + "u);"));
    }
  for (auto const& k : {tc_one_cta<bf16>("tc5_bf16"), tc_one_cta<f32>("tc5_tf32")}) {
    INFO("kernel " << k.name);
    const auto c = nvrtc::compile(k, ir::Target::sm_100a, o);
    CHECK(c.spill_bytes == 0);
    const bool tf32 = k.name == "tc5_tf32";
    // K = 64 bf16 (k16) or 32 f32 (k8): 4 instructions either way, the first one overwriting D.
    CHECK(occurrences(c.ptx, tf32 ? "tcgen05.mma.cta_group::1.kind::tf32" : "tcgen05.mma.cta_group::1.kind::f16") == 4);
    CHECK(occurrences(c.code.source, tf32 ? "sc::tc_mma_tf32(" : "sc::tc_mma_f16(") == 4);
    CHECK_THAT(c.code.source, Contains("sc::tmem_ld_32x32b_x32(") && Contains("sc::tmem_dealloc(tmem5, 64u);"));
  }
}

TEST_CASE("tcgen05 kind::f8f6f4: gemm_blackwell and gemm_blackwell_2cta with e4m3 x e4m3 and e4m3 x e5m2 compile for sm_100a with no spills",
          "[nvrtc][tcgen05][fp8]") {
  const nvrtc::options o = ptx_options();
  for (const char* name : {"gemm_blackwell", "gemm_blackwell_2cta"})
    for (long long fp8 : {1, 2})
      for (long long bn : {64, 128, 256}) {
        INFO(name << " fp8=" << fp8 << " BN=" << bn);
        auto const& e = registry::global().find(name);
        const auto k = e.build(registry::resolve(e, {{"BN", bn}, {"N", 256}, {"fp8", fp8}}));
        const auto c = nvrtc::compile(k, ir::Target::sm_100a, o);
        std::printf("%-20s fp8=%lld BN=%3lld sm_100a: %d registers per thread, %d spill bytes\n", name, fp8, bn, c.registers, c.spill_bytes);
        CHECK(c.spill_bytes == 0);
        const bool pair = std::string(name) == "gemm_blackwell_2cta";
        // The 4 k32 instructions of one 128-wide K slice, once per K slice NVVM unrolled into.
        const auto mmas = occurrences(c.ptx, pair ? "tcgen05.mma.cta_group::2.kind::f8f6f4" : "tcgen05.mma.cta_group::1.kind::f8f6f4");
        CHECK(mmas >= 4);
        CHECK(mmas % 4 == 0);
        CHECK_THAT(c.ptx, !Contains("kind::f16"));
        CHECK(occurrences(c.code.source, "sc::tc_mma_f8f6f4(") == 4);
        // The instruction descriptor in the source: D F32, A E4M3 (0), B E4M3 (0) or E5M2 (1 << 10),
        // K-major, N >> 3 at 17, M >> 4 at 24 (128 or the pair's 256).
        const std::uint32_t idesc = 0x10u | (fp8 == 2 ? 1u << 10 : 0u) | static_cast<std::uint32_t>(bn >> 3) << 17 | (pair ? 16u : 8u) << 24;
        char hex[16];
        std::snprintf(hex, sizeof hex, "0x%08xu", idesc);
        CHECK_THAT(c.code.source, Contains(hex));
      }
  // An e5m2 B stored (K, N) = (128, 64), read MN-major (transpose bit 16), 64-byte swizzle.
  const auto k = lower(kernel<sm_100a>(
      "tc5_fp8_mn", grid(1), threads(1_c), gmem<e4m3>("a", shape(128_c, 128_c)), gmem<e5m2>("b", shape(128_c, 64_c)), gmem<f32>("c", shape(128_c, 64_c)),
      smem<e4m3>(shape(128_c, 128_c), swizzle(128_c)), smem<e5m2>(shape(128_c, 64_c), swizzle(64_c)), smem<f32>(shape(128_c, 64_c)),
      barrier(arrivals(2_c)), barrier(arrivals(1_c), orders_tensor_core), tmem<f32>(shape(128_c, 64_c)),
      [](auto a, auto b, auto c, auto as, auto bs, auto cs, auto loaded, auto done, auto d) {
        return seq(copy_gmem_to_smem(a.block(0_c, 0_c), as, loaded), copy_gmem_to_smem(b.block(0_c, 0_c), bs, loaded), barrier_wait(loaded),
                   tcgen05_mma(d, as, bs, done, false), barrier_wait(done), store(cs, async_load_tmem(d)), tmem_dealloc(d), commit_smem(),
                   copy_smem_to_gmem(cs, c.block(0_c, 0_c)), commit_smem_to_gmem_group(), wait_smem_to_gmem(0_c));
      }));
  const auto c = nvrtc::compile(k, ir::Target::sm_100a, o);
  CHECK(c.spill_bytes == 0);
  CHECK(occurrences(c.ptx, "tcgen05.mma.cta_group::1.kind::f8f6f4") == 4);
  // D F32 | A E4M3 | B E5M2 (1 << 10) | B MN-major (1 << 16) | N = 64 (8 << 17) | M = 128 (8 << 24)
  CHECK_THAT(c.code.source, Contains("0x08110410u"));
}

TEST_CASE("tcgen05 kind::i8: gemm_blackwell and gemm_blackwell_2cta with s8 x s8 and u8 x s8 into an s32 TMEM accumulator compile for sm_100a with "
          "no spills",
          "[nvrtc][tcgen05][int8]") {
  const nvrtc::options o = ptx_options();
  for (const char* name : {"gemm_blackwell", "gemm_blackwell_2cta"})
    for (long long int8 : {1, 2})
      for (long long bn : {128, 256}) {
        INFO(name << " int8=" << int8 << " BN=" << bn);
        auto const& e = registry::global().find(name);
        const bool pair = std::string(name) == "gemm_blackwell_2cta";
        const auto k = e.build(registry::resolve(e, {{"BN", bn}, {"N", 256}, {"int8", int8}}));
        const auto c = nvrtc::compile(k, ir::Target::sm_100a, o);
        std::printf("%-20s int8=%lld BN=%3lld sm_100a: %d registers per thread, %d spill bytes\n", name, int8, bn, c.registers, c.spill_bytes);
        CHECK(c.spill_bytes == 0);
        const auto mmas = occurrences(c.ptx, pair ? "tcgen05.mma.cta_group::2.kind::i8" : "tcgen05.mma.cta_group::1.kind::i8");
        CHECK(mmas >= 4);
        CHECK(mmas % 4 == 0);
        CHECK_THAT(c.ptx, !Contains("kind::f16") && !Contains("kind::f8f6f4"));
        CHECK(occurrences(c.code.source, "sc::tc_mma_i8(") == 4);
        // D S32 (2 << 4), A S8 (1 << 7) or U8 (0), B S8 (1 << 10), K-major, N >> 3 at 17, M >> 4 at 24.
        const std::uint32_t idesc = 0x20u | (int8 == 1 ? 1u << 7 : 0u) | 1u << 10 | static_cast<std::uint32_t>(bn >> 3) << 17 | (pair ? 16u : 8u) << 24;
        char hex[16];
        std::snprintf(hex, sizeof hex, "0x%08xu", idesc);
        CHECK_THAT(c.code.source, Contains(hex));
        // The epilogue reads the s32 columns as integers (no conversion through float) and stores
        // them as they are: 32-column subtiles of 128-byte rows.
        CHECK_THAT(c.code.source, Contains("__float_as_int(tr[j])") && Contains("sc::tmem_ld_32x32b_x32("));
      }
}

namespace {
// attention_blackwell at S = 4096 for sm_100a: compiled, its registers printed, no spills.
nvrtc::compiled fa4_compiled(long long tiles, long long D, long long causal) {
  auto const& e = registry::global().find("attention_blackwell");
  const auto k = e.build(registry::resolve(e, {{"D", D}, {"causal", causal}, {"S", 4096}, {"B", 16}, {"tiles", tiles}}));
  auto c = nvrtc::compile(k, ir::Target::sm_100a, ptx_options());
  INFO(c.log);
  std::printf("attention_blackwell tiles=%lld D=%lld causal=%lld sm_100a: %d registers per thread, %d spill bytes\n", tiles, D, causal, c.registers,
              c.spill_bytes);
  CHECK(c.spill_bytes == 0);
  return c;
}
}  // namespace

TEST_CASE("attention_blackwell (FA4-style) compiles for sm_100a with no spills: S = Q K^T from SMEM descriptors, P V with P from TMEM, the softmax "
          "and the rescale as row statements (tcgen05.ld of a thread's own row, row folds in registers, tcgen05.st)",
          "[nvrtc][tcgen05][attention][fa4]") {
  const nvrtc::options o = ptx_options();
  auto const& e = registry::global().find("attention_blackwell");
  for (long long D : {64, 128})
    for (long long causal : {0, 1}) {
      INFO("D=" << D << " causal=" << causal);
      const auto c = fa4_compiled(1, D, causal);
      const long long dc = D / 64;
      // S: D / 64 calls of 4 k16 instructions, in the first block's issue and the loop's; P V: 8
      // [a_tmem] instructions (128 keys) per 64-column chunk of O, P's column stepping 8 a k16.
      CHECK(occurrences(c.code.source, "sc::tc_mma_f16(") == 2 * 4 * dc);
      CHECK(occurrences(c.code.source, "sc::tc_mma_ts_f16(") == 8 * dc);
      CHECK_THAT(c.code.source, Contains("sc::tc_mma_ts_f16(d_addr, tmem") && Contains(" + 56u, db0 + "));
      // Row statements: the row max and the row sum, once per arm (unmasked blocks and the last).
      CHECK(occurrences(c.code.source, "row statement into m_new (128)") == 2);
      CHECK(occurrences(c.code.source, "// max<1> of the row") == 2);
      CHECK(occurrences(c.code.source, "// sum<1> of the row") == 2);
      // l and P in one pass over S per arm (and O0, O1's rescale in one at D = 128): per 32
      // columns of S one tcgen05.ld, 16 columns of bf16 P written; S itself is never written.
      CHECK(occurrences(c.code.source, "2 row statements in one pass over the row") == (D == 128 ? 3 : 2));
      CHECK(occurrences(c.code.source, "store_tmem into S") == 0);
      CHECK(occurrences(c.ptx, "tcgen05.st.sync.aligned.32x32b.x16.b32") >= 2);
      CHECK(occurrences(c.ptx, "tcgen05.st.sync.aligned.32x32b.x32.b32") >= 1);
      CHECK(occurrences(c.ptx, "tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32") == 4);  // S, P, O0, O1
    }
  for (long long tiles : {1, 2})
    for (long long causal : {0, 1}) {  // --dynamic S: both arms of every size test generated, still no spills
      INFO("--dynamic S, tiles=" << tiles << " causal=" << causal);
      const auto k = e.build(registry::resolve(e, {{"causal", causal}, {"S", 333}, {"S?", 1}, {"tiles", tiles}}));
      const auto c = nvrtc::compile(k, ir::Target::sm_100a, o);
      CHECK_THAT(c.code.source, Contains("const long long ext_S"));
      CHECK(c.spill_bytes == 0);
    }
}

TEST_CASE("attention_blackwell tiles=2 (FA4's two query tiles per CTA) compiles for sm_100a with no spills: two softmax warpgroups' row "
          "statements, each tile's S and P V",
          "[nvrtc][tcgen05][attention][fa4]") {
  for (long long D : {64, 128})
    for (long long causal : {0, 1}) {
      INFO("D=" << D << " causal=" << causal);
      const auto c = fa4_compiled(2, D, causal);
      const long long dc = D / 64, bk = D == 128 ? 64 : 128;
      // S: each tile's first block's and the loop's, D / 64 calls of 4 k16; P V: BK / 16 [a_tmem]
      // instructions per chunk of each tile's O.
      CHECK(occurrences(c.code.source, "sc::tc_mma_f16(") == 2 * 2 * 4 * dc);
      CHECK(occurrences(c.code.source, "sc::tc_mma_ts_f16(") == 2 * bk / 16 * dc);
      CHECK(occurrences(c.ptx, "tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32") == 4);  // S, P0, P1, O
      // Each softmax warpgroup's row max and row sum, in both arms (masked and not).
      CHECK(occurrences(c.code.source, "// max<1> of the row") == 2 * 2);
      CHECK(occurrences(c.code.source, "// sum<1> of the row") == 2 * 2);
    }
}

TEST_CASE("tcgen05 A from TMEM: gemm_blackwell_ts at every tile width and ring depth compiles for sm_100a with tcgen05.st and the [a_tmem] MMA, no spills",
          "[nvrtc][tcgen05][tmem_a]") {
  const nvrtc::options o = ptx_options();
  auto const& e = registry::global().find("gemm_blackwell_ts");
  for (long long bn : {64, 128, 256})
    for (long long stages : {2, 3}) {
      INFO("BN=" << bn << " stages=" << stages);
      const auto k = e.build(registry::resolve(e, {{"BN", bn}, {"N", 256}, {"stages", stages}}));
      const auto c = nvrtc::compile(k, ir::Target::sm_100a, o);
      std::printf("gemm_blackwell_ts BN=%3lld stages=%lld sm_100a: %d registers per thread, %d spill bytes\n", bn, stages, c.registers, c.spill_bytes);
      CHECK(c.spill_bytes == 0);
      // The A-in-TMEM form: D's and A's TMEM addresses in brackets, then B's descriptor; 4 k16
      // instructions per 64-wide K slice, and no SMEM-descriptor A form at all.
      const auto ts = occurrences(c.ptx, "tcgen05.mma.cta_group::1.kind::f16 [%r");
      CHECK(ts >= 4);
      CHECK(ts % 4 == 0);
      CHECK(occurrences(c.code.source, "sc::tc_mma_ts_f16(") == 4);
      CHECK(occurrences(c.code.source, "sc::tc_mma_f16(") == 0);
      CHECK_THAT(c.code.source, Contains("const unsigned d_addr = tmem8;") && Contains("sc::tc_mma_ts_f16(d_addr, tmem9 + 8u, ") &&
                                    Contains("sc::tc_mma_ts_f16(d_addr, tmem9 + 24u, "));
      // store_tmem: 32 columns (64 bf16 of a row) per warp in one tcgen05.st, then its wait.
      CHECK(occurrences(c.ptx, "tcgen05.st.sync.aligned.32x32b.x32.b32") == 1);
      CHECK(occurrences(c.ptx, "tcgen05.wait::st.sync.aligned") == 1);
      CHECK(occurrences(c.ptx, "tcgen05.ld.sync.aligned.32x32b.x32.b32") == 1);  // the epilogue's
      // Two allocations, freed where the user wrote it: D (BN columns) and A (32 columns).
      CHECK(occurrences(c.ptx, "tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32") == 2);
      CHECK_THAT(c.code.source, Contains("sc::tmem_dealloc(tmem9, 32u);") && Contains("sc::tmem_dealloc(tmem8, " + std::to_string(bn) + "u);"));
    }
  for (auto const& k : {testing::ts_one_cta<bf16>("ts_bf16"), testing::ts_one_cta<f32>("ts_tf32")}) {
    INFO("kernel " << k.name);
    const auto c = nvrtc::compile(k, ir::Target::sm_100a, o);
    CHECK(c.spill_bytes == 0);
    const bool tf32 = k.name == "ts_tf32";
    CHECK(occurrences(c.ptx, tf32 ? "tcgen05.mma.cta_group::1.kind::tf32 [%r" : "tcgen05.mma.cta_group::1.kind::f16 [%r") == 4);
    CHECK(occurrences(c.ptx, "tcgen05.st.sync.aligned.32x32b.x32.b32") == 1);
    CHECK(occurrences(c.ptx, "tcgen05.wait::st.sync.aligned") == 1);
    // The MMA follows the store in the same warpgroup: its barrier (with the tcgen05 fences) first.
    const auto st = c.code.source.find("sc::tmem_st_wait();"), mma = c.code.source.find(tf32 ? "sc::tc_mma_ts_tf32(" : "sc::tc_mma_ts_f16(");
    REQUIRE(st != std::string::npos);
    REQUIRE(mma != std::string::npos);
    CHECK(c.code.source.substr(st, mma - st).find("sc::wg_sync(wg);") != std::string::npos);
  }
}

TEST_CASE("tcgen05: gemm_blackwell_2cta (cta_group::2) at every tile width and ring depth compiles for sm_100a with no spills", "[nvrtc][tcgen05]") {
  const nvrtc::options o = ptx_options();
  auto const& e = registry::global().find("gemm_blackwell_2cta");
  for (long long bn : {64, 128, 256})
    for (long long stages : {2, 3}) {
      INFO("BN=" << bn << " stages=" << stages);
      const auto k = e.build(registry::resolve(e, {{"BN", bn}, {"N", 256}, {"stages", stages}}));
      const auto c = nvrtc::compile(k, ir::Target::sm_100a, o);
      CHECK(c.spill_bytes == 0);
      // The even CTA's 4 k16 instructions of a K slice, once per K slice NVVM unrolled into.
      const auto mmas = occurrences(c.ptx, "tcgen05.mma.cta_group::2.kind::f16");
      CHECK(mmas >= 4);
      CHECK(mmas % 4 == 0);
      // Collective over the pair: each CTA's one warp allocates, gives up the permit and frees.
      CHECK(occurrences(c.ptx, "tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32") == 1);
      CHECK(occurrences(c.ptx, "tcgen05.relinquish_alloc_permit.cta_group::2.sync.aligned") == 1);
      CHECK(occurrences(c.ptx, "tcgen05.dealloc.cta_group::2.sync.aligned.b32") == 1);
      // empty[s]'s and done's commits, each reaching the barrier in both CTAs of the pair.
      CHECK(occurrences(c.ptx, "tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64") >= 2);
      // Each CTA reads its own rows of D, a 64-column subtile at a time: once per subtile NVVM
      // unrolled the subtile loop into.
      const auto lds = occurrences(c.ptx, "tcgen05.ld.sync.aligned.32x32b.x32.b32");
      CHECK(lds >= 1);
      CHECK(lds <= bn / 64);
      CHECK(occurrences(c.ptx, "tcgen05.wait::ld.sync.aligned") == lds);
      // Two accumulators of BN columns per CTA (the ring d): one allocation of 2 BN.
      CHECK_THAT(c.code.source, Contains("u, " + std::to_string(2 * bn) + "u);  // t7 (2, 128, " + std::to_string(bn) + ") f32"));
      CHECK_THAT(c.ptx, !Contains("cta_group::1"));
    }
}

TEST_CASE("tcgen05: gemm_blackwell_2cta mc=2 (two pairs multicasting A) compiles for sm_100a with no spills, multicast loads and commits",
          "[nvrtc][tcgen05][multicast]") {
  const nvrtc::options o = ptx_options();
  auto const& e = registry::global().find("gemm_blackwell_2cta");
  for (long long bn : {128, 256})
    for (long long fp8 : {0, 1}) {
      INFO("BN=" << bn << " fp8=" << fp8);
      const auto k = e.build(registry::resolve(e, {{"BN", bn}, {"N", 512}, {"mc", 2}, {"fp8", fp8}}));
      const auto c = nvrtc::compile(k, ir::Target::sm_100a, o);
      std::printf("gemm_blackwell_2cta mc=2 BN=%lld fp8=%lld sm_100a: %d registers, %d spill bytes\n", bn, fp8, c.registers, c.spill_bytes);
      CHECK(c.spill_bytes == 0);
      // A's load multicasts (its mask over the two pairs); B's does not.
      CHECK(occurrences(c.ptx, "mbarrier::complete_tx::bytes.multicast::cluster") >= 1);
      CHECK(occurrences(c.ptx, "tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64") >= 2);
      CHECK(occurrences(c.ptx, fp8 ? "tcgen05.mma.cta_group::2.kind::f8f6f4" : "tcgen05.mma.cta_group::2.kind::f16") >= 4);
      CHECK_THAT(c.ptx, !Contains("cta_group::1"));
    }
}

TEST_CASE("the transpose and layernorm_rows examples compile for sm_90a with no spills", "[nvrtc][tile_ops]") {
  const nvrtc::options o = ptx_options();
  for (const char* name : {"transpose", "layernorm_rows"}) {
    INFO(name);
    auto const& e = registry::global().find(name);
    const auto r = nvrtc::compile(e.build(registry::resolve(e, {})), ir::Target::sm_90a, o);
    std::printf("%-14s sm_90a: %d registers per thread, %d spill bytes\n", name, r.registers, r.spill_bytes);
    CHECK(r.spill_bytes == 0);
    CHECK(r.registers > 0);
    CHECK_THAT(r.ptx, Contains("cp.async.bulk.tensor") && !Contains("rsqrt.approx"));
  }
}

TEST_CASE("row state and attention: sm_90a with no spills, quad shuffles for row reductions, wgmma with a register A operand", "[nvrtc][row_state]") {
  const nvrtc::options o = ptx_options();
  // wgmma's A from registers is a brace group of four 32-bit registers before the B descriptor.
  const std::regex register_a(R"(wgmma\.mma_async\.sync\.aligned\.m64n64k16\.f32\.bf16\.bf16\s*\{[^}]*\},\s*\{%r\d+, %r\d+, %r\d+, %r\d+\},\s*%rd\d+)");
  for (auto const& k : {testing::row_state::online_softmax_kernel(), testing::row_state::attention_block_kernel()}) {
    const auto c = nvrtc::compile(k, ir::Target::sm_90a, o);
    INFO(k.name << "\n" << c.log);
    std::printf("%-20s sm_90a: %d registers per thread, %d spill bytes\n", k.name.c_str(), c.registers, c.spill_bytes);
    CHECK(c.spill_bytes == 0);
    CHECK_THAT(c.ptx, Contains("shfl.sync.bfly.b32") && !Contains(".local") && !Contains("bar.sync 1"));
    if (k.name == "acc_attention_block") CHECK(std::regex_search(c.ptx, register_a));
    // A from registers written before wgmma.fence: ptxas injects no warpgroup.arrive (C7519).
    CHECK_THAT(c.log, !Contains("C7519") && !Contains("serialized"));
  }
  auto const& e = registry::global().find("attention_hopper");
  for (std::int64_t D : {64, 128, 256})
    for (std::int64_t causal : {0, 1}) {
      const auto k = e.build(registry::resolve(e, {{"D", D}, {"causal", causal}}));
      const auto c = nvrtc::compile(k, ir::Target::sm_90a, o);
      INFO("attention_hopper D=" << D << " causal=" << causal << "\n" << c.log);
      std::printf("attention_hopper D=%lld causal=%lld sm_90a: %d registers per thread, %d spill bytes\n", static_cast<long long>(D),
                  static_cast<long long>(causal), c.registers, c.spill_bytes);
      CHECK(c.spill_bytes == 0);
      // Each consumer's wgmmas run inside its warpgroup's branch: an injected warpgroup.arrive
      // there serializes them (C7520); setmaxnreg needs a known register count at entry (C7508).
      CHECK_THAT(c.log, !Contains("serialized") && !Contains("setmaxnreg") && !Contains("C7519"));
      CHECK_THAT(c.ptx, !Contains(".local") && Contains("shfl.sync.bfly.b32") && Contains("setmaxnreg.inc.sync.aligned.u32"));
      CHECK(std::regex_search(c.ptx, register_a));
      if (causal) CHECK_THAT(c.ptx, Contains("selp.f32") || Contains("setp."));
    }
}

namespace {
// The lines of PTX that start with an instruction, trimmed.
std::vector<std::string> ptx_lines(std::string const& ptx) {
  std::vector<std::string> out;
  std::size_t at = 0;
  while (at < ptx.size()) {
    const auto end = std::min(ptx.find('\n', at), ptx.size());
    const auto first = ptx.find_first_not_of(" \t", at);
    if (first < end) out.push_back(ptx.substr(first, end - first));
    at = end + 1;
  }
  return out;
}
long long count_prefix(std::vector<std::string> const& lines, std::string const& p) {
  return std::count_if(lines.begin(), lines.end(), [&](auto const& l) { return l.starts_with(p); });
}
}  // namespace

TEST_CASE("attention_hopper overlap=1: sm_90a with no spills or serialized wgmma, each key block's softmax (ex2.approx) runs between "
          "wgmma_wait(1), which completes S, and wgmma_wait(0), which completes the P V issued with it", "[nvrtc][attention][overlap]") {
  nvrtc::options o = ptx_options();
  o.codegen.math = ir::math_mode::fast;
  auto const& e = registry::global().find("attention_hopper");
  for (std::int64_t D : {64, 128, 256})
    for (std::int64_t causal : {0, 1})
      for (std::int64_t pp : {0, 1}) {
        const auto k = e.build(registry::resolve(e, {{"D", D}, {"S", 1024}, {"causal", causal}, {"pingpong", pp}, {"overlap", 1}}));
        const auto c = nvrtc::compile(k, ir::Target::sm_90a, o);
        INFO("attention_hopper overlap=1 D=" << D << " causal=" << causal << " pingpong=" << pp << "\n" << c.log);
        std::printf("attention_hopper overlap=1 D=%lld causal=%lld pingpong=%lld sm_90a: %d registers per thread, %d spill bytes\n",
                    static_cast<long long>(D), static_cast<long long>(causal), static_cast<long long>(pp), c.registers, c.spill_bytes);
        CHECK(c.spill_bytes == 0);
        CHECK_THAT(c.log, !Contains("serialized") && !Contains("setmaxnreg") && !Contains("C7519"));
        CHECK_THAT(c.ptx, !Contains(".local"));
        // Every wgmma_wait(1) is followed by exps before the next wait, a wgmma_wait(0): the
        // softmax of block j runs while P V(j - 1) may still be on the tensor core. Each consumer
        // has one such step in its loop and one after it (the masked last block; non-causal
        // S = 1024 has no tail, so that one is the loop's only).
        const auto L = ptx_lines(c.ptx);
        long long overlapped = 0;
        for (std::size_t i = 0; i < L.size(); ++i) {
          if (L[i] != "wgmma.wait_group.sync.aligned 1;") continue;
          long long exps = 0;
          std::size_t j = i + 1;
          for (; j < L.size() && !L[j].starts_with("wgmma.wait_group"); ++j) exps += L[j].starts_with("ex2.approx");
          REQUIRE(j < L.size());
          CHECK(L[j] == "wgmma.wait_group.sync.aligned 0;");
          CHECK(exps >= 32);
          ++overlapped;
        }
        CHECK(overlapped == (causal ? 4 : 2));
      }
}

TEST_CASE("attention_hopper BK=128: sm_90a with no spills or serialized wgmma, m64n128k16 for S, causal and not, with a partial last block",
          "[nvrtc][attention][bk128]") {
  nvrtc::options o = ptx_options();
  o.codegen.math = ir::math_mode::fast;
  auto const& e = registry::global().find("attention_hopper");
  // The causal triangle over 64 x 128 and the partial last block's mask spilled 72 to 284 bytes
  // while iota read its row and column back from the fragment walk's flat index (a 64-bit
  // division and modulo per element).
  for (std::int64_t D : {64, 128})
    for (std::int64_t causal : {0, 1})
      for (std::int64_t overlap : {0, 1}) {
        for (std::int64_t S : {1024, 1000}) {
          const std::int64_t pp = S == 1000;
          const auto k = e.build(registry::resolve(e, {{"D", D}, {"S", S}, {"causal", causal}, {"pingpong", pp}, {"overlap", overlap}, {"BK", 128}}));
          const auto c = nvrtc::compile(k, ir::Target::sm_90a, o);
          INFO("attention_hopper BK=128 D=" << D << " S=" << S << " causal=" << causal << " pingpong=" << pp << " overlap=" << overlap << "\n" << c.log);
          CHECK(c.spill_bytes == 0);
          CHECK_THAT(c.log, !Contains("serialized") && !Contains("setmaxnreg") && !Contains("C7519"));
          CHECK_THAT(c.ptx, !Contains(".local") && Contains("wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16"));
        }
      }
}

TEST_CASE("attention_hopper BK=176: sm_90a with no spills or serialized wgmma, m64n176k16 for S, whole and partial last blocks",
          "[nvrtc][attention][bk176]") {
  nvrtc::options o = ptx_options();
  o.codegen.math = ir::math_mode::fast;
  auto const& e = registry::global().find("attention_hopper");
  for (std::int64_t D : {64, 128})
    for (std::int64_t S : {1056, 1000}) {  // 6 blocks of 176 keys; 5 and 120 keys
      const std::int64_t pp = S == 1000, overlap = D == 128 || S == 1000;
      const auto k = e.build(registry::resolve(e, {{"D", D}, {"S", S}, {"pingpong", pp}, {"BK", 176}, {"overlap", overlap}}));
      const auto c = nvrtc::compile(k, ir::Target::sm_90a, o);
      INFO("attention_hopper BK=176 D=" << D << " S=" << S << " pingpong=" << pp << " overlap=" << overlap << "\n" << c.log);
      CHECK(c.spill_bytes == 0);
      CHECK_THAT(c.log, !Contains("serialized") && !Contains("C7519"));
      CHECK_THAT(c.ptx, !Contains(".local") && Contains("wgmma.mma_async.sync.aligned.m64n176k16.f32.bf16.bf16"));
    }
}

TEST_CASE("attention_hopper fp8=1: sm_90a with no spills or serialized wgmma, e4m3 wgmmas for S and for P V with P from registers, packed by "
          "cvt.rn.satfinite.e4m3x2 and gathered by quad shuffles",
          "[nvrtc][attention][fp8]") {
  nvrtc::options o = ptx_options();
  o.codegen.math = ir::math_mode::fast;
  auto const& e = registry::global().find("attention_hopper");
  struct config {
    std::int64_t D, causal, S, BK = 128;
  };
  std::vector<config> configs;
  for (std::int64_t D : {64, 128})
    for (std::int64_t causal : {0, 1})
      for (std::int64_t S : {1024, 1008}) configs.push_back({D, causal, S});  // 8 blocks of 128 keys; 7 and 112 keys
  configs.push_back({256, 0, 1024});      // D = 256: no masked block, 230,400 B of SMEM
  configs.push_back({256, 1, 1008, 64});  // BK = 64: D = 256 causal with a partial last block, 164,864 B
  for (auto [D, causal, S, BK] : configs) {
    const std::int64_t pp = S == 1008 || D == 256;
    const auto k = e.build(registry::resolve(e, {{"D", D}, {"S", S}, {"causal", causal}, {"pingpong", pp}, {"BK", BK}, {"fp8", 1}}));
    const auto c = nvrtc::compile(k, ir::Target::sm_90a, o);
    INFO("attention_hopper fp8=1 D=" << D << " S=" << S << " causal=" << causal << " pingpong=" << pp << " BK=" << BK << "\n" << c.log);
    CHECK(c.spill_bytes == 0);
    CHECK_THAT(c.log, !Contains("serialized") && !Contains("C7519"));
    CHECK_THAT(c.ptx, !Contains(".local") && Contains(BK == 128 ? "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3" : "wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3") &&
                          Contains("wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3") && Contains("cvt.rn.satfinite.e4m3x2.f32") &&
                          Contains("shfl.sync.idx.b32"));
  }
}

// fp8 with overlap=1: P(j - 1) waits for its P V in an e4m3 register tile (16 registers of a
// 128-key block, where an f32 P took 64 and spilled), packed by cvt.rn.satfinite.e4m3x2 when it
// leaves S's registers; the P V's A is the quad's gather of its registers (sc::quad_gather8),
// with no conversion left at the wgmma.
TEST_CASE("attention_hopper fp8=1 overlap=1: sm_90a with no spills, P kept as packed e4m3 registers that the P V gathers unconverted",
          "[nvrtc][attention][fp8][overlap]") {
  nvrtc::options o = ptx_options();
  o.codegen.math = ir::math_mode::fast;
  auto const& e = registry::global().find("attention_hopper");
  for (std::int64_t D : {64, 128, 256})
    for (std::int64_t causal : {0, 1})
      for (std::int64_t S : {1024, 1008}) {
        const std::int64_t pp = S == 1008, BK = D == 256 ? 64 : 128;
        if (D != 128 && causal != pp) continue;  // D = 64 and 256: causal with ping-pong and neither
        const auto k = e.build(registry::resolve(e, {{"D", D}, {"S", S}, {"causal", causal}, {"pingpong", pp}, {"BK", BK}, {"fp8", 1}, {"overlap", 1}}));
        const auto c = nvrtc::compile(k, ir::Target::sm_90a, o);
        INFO("attention_hopper fp8=1 overlap=1 D=" << D << " S=" << S << " causal=" << causal << " pingpong=" << pp << "\n" << c.log);
        std::printf("attention_hopper fp8=1 overlap=1 D=%lld BK=%lld S=%lld causal=%lld pingpong=%lld sm_90a: %d registers per thread, %d spill bytes\n",
                    static_cast<long long>(D), static_cast<long long>(BK), static_cast<long long>(S), static_cast<long long>(causal), static_cast<long long>(pp), c.registers, c.spill_bytes);
        CHECK(c.spill_bytes == 0);
        CHECK_THAT(c.log, !Contains("serialized") && !Contains("C7519"));
        CHECK_THAT(c.ptx, !Contains(".local") && Contains("wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3") && Contains("cvt.rn.satfinite.e4m3x2.f32"));
        CHECK_THAT(c.code.source, Contains("unsigned acc") && Contains("e4m3 accumulator: 1 m64 block(s) x " + std::to_string(BK / 8) + " registers per thread") &&
                                      Contains("four to a register (e4m3)") && Contains("gathered from the quad's a"));
        // Every 8-bit A of the P V is a gather of P's registers: no conversion inside the wgmma.
        CHECK_THAT(c.code.source, !Contains("8-bit, from the quad's D fragments"));
      }
}

TEST_CASE("attention_hopper pingpong=1: sm_90a with no spills, each warpgroup's wgmma group issued between a named-barrier turn sync and a hand-off arrival", "[nvrtc][attention][pingpong]") {
  const nvrtc::options o = ptx_options();
  auto const& e = registry::global().find("attention_hopper");
  for (std::int64_t D : {64, 128})
    for (std::int64_t causal : {0, 1}) {
      std::vector<std::string> lines[2];
      for (std::int64_t pp : {0, 1}) {
        const auto k = e.build(registry::resolve(e, {{"D", D}, {"causal", causal}, {"pingpong", pp}}));
        const auto c = nvrtc::compile(k, ir::Target::sm_90a, o);
        INFO("attention_hopper D=" << D << " causal=" << causal << " pingpong=" << pp << "\n" << c.log);
        std::printf("attention_hopper D=%lld causal=%lld pingpong=%lld sm_90a: %d registers per thread, %d spill bytes\n", static_cast<long long>(D),
                    static_cast<long long>(causal), static_cast<long long>(pp), c.registers, c.spill_bytes);
        CHECK(c.spill_bytes == 0);
        CHECK_THAT(c.log, !Contains("serialized") && !Contains("setmaxnreg") && !Contains("C7519"));
        CHECK_THAT(c.ptx, !Contains(".local"));
        lines[pp] = ptx_lines(c.ptx);
      }
      INFO("D=" << D << " causal=" << causal);
      // The hand-off is after the group's commit and before its wait (the other consumer's GEMM
      // queues behind this one's, not behind its completion): with pingpong=0 every commit is
      // followed by its wait, with pingpong=1 by the arrival on the other's named barrier
      // (bar.arrive 9 + other, 256: ids 0 and 1 are hardware barriers 9 and 10).
      for (std::int64_t pp : {0, 1}) {
        auto const& L = lines[pp];
        long long commits = 0, handed = 0;
        for (std::size_t i = 0; i < L.size(); ++i) {
          if (!L[i].starts_with("wgmma.commit_group")) continue;
          ++commits;
          for (std::size_t j = i + 1; j < L.size(); ++j)
            if (L[j].starts_with("bar") || L[j].starts_with("mbarrier.") || L[j].starts_with("wgmma.wait_group")) {
              handed += L[j].starts_with("barrier.arrive") || L[j].starts_with("bar.arrive");
              break;
            }
        }
        CHECK(commits == (causal ? 8 : 4));
        CHECK(handed == (pp ? commits : 0));
      }
      // One turn sync per GEMM group (2 per block body, each consumer's loop and, causal, its
      // diagonal block), and consumer 0's two on the skipped block; one arrival per sync, and
      // consumer 1's first grant. No mbarrier is left to the turns.
      const long long turn_waits = causal ? 8 + 2 : 4;
      auto named = [](std::vector<std::string> const& L, const char* op) {
        return std::count_if(L.begin(), L.end(), [&](std::string const& l) {
          return (l.starts_with(std::string("bar.") + op) || l.starts_with(std::string("barrier.") + op)) && l.find(", 256;") != std::string::npos;
        });
      };
      CHECK(named(lines[1], "sync") - named(lines[0], "sync") == turn_waits);
      CHECK(named(lines[1], "arrive") - named(lines[0], "arrive") == turn_waits + 1);
      CHECK(count_prefix(lines[1], "mbarrier.try_wait") == count_prefix(lines[0], "mbarrier.try_wait"));
    }
}

// ---- fast math mode (docs/codegen.md, "Math modes") ---------------------------------------------

TEST_CASE("nvrtc: fast math mode compiles exp, exp2, log, rsqrt, tanh and division to the SFU's approximations with FMA contraction, "
          "exact keeps the polynomials, the cache key differs by mode", "[nvrtc][fastmath]") {
  const auto k = testing::tile_ops::math_kernel();
  const nvrtc::options exact = ptx_options();
  nvrtc::options fast = exact;
  fast.codegen.math = ir::math_mode::fast;
  const auto e = nvrtc::compile(k, ir::Target::sm_90a, exact);
  const auto f = nvrtc::compile(k, ir::Target::sm_90a, fast);
  for (auto const* op : {"ex2.approx.ftz.f32", "lg2.approx.ftz.f32", "rsqrt.approx.ftz.f32", "tanh.approx.f32"}) {
    INFO(op);
    CHECK_THAT(f.ptx, Contains(op));
    CHECK_THAT(e.ptx, !Contains(op));
  }
  CHECK(nvrtc::cache_key(k, ir::Target::sm_90a, {.math = ir::math_mode::exact}) != nvrtc::cache_key(k, ir::Target::sm_90a, {.math = ir::math_mode::fast}));
  CHECK(e.key != f.key);
  // 1 / l of the softmax row is a division: div.full in fast mode, the correctly rounded one in exact.
  auto const& sm = registry::global().find("softmax_rows");
  const auto ks = sm.build(registry::resolve(sm, {}));
  CHECK_THAT(nvrtc::compile(ks, ir::Target::sm_90a, fast).ptx, Contains("div.full.f32") && Contains("ex2.approx.ftz.f32"));
  CHECK_THAT(nvrtc::compile(ks, ir::Target::sm_90a, exact).ptx, !Contains("div.full.f32") && Contains("div.rn.f32"));
  // --fmad=true: a multiply feeding an add fuses (layernorm's (x - mean) * rstd * gamma + beta).
  auto const& ln = registry::global().find("layernorm_rows");
  const auto kl = ln.build(registry::resolve(ln, {}));
  CHECK_THAT(nvrtc::compile(kl, ir::Target::sm_90a, fast).ptx, Contains("fma.rn.f32"));
  CHECK_THAT(nvrtc::compile(kl, ir::Target::sm_90a, exact).ptx, !Contains("fma.rn.f32"));
}

TEST_CASE("nvrtc: attention_hopper in fast mode: ex2.approx once per P element and once per row for the rescale (not per element), "
          "FMA contraction, no spills, exact mode has no approximation", "[nvrtc][fastmath][attention]") {
  auto const& e = registry::global().find("attention_hopper");
  for (std::int64_t D : {64, 128}) {
    INFO("D = " << D);
    const auto k = e.build(registry::resolve(e, {{"D", D}, {"S", 4096}}));
    nvrtc::options o = ptx_options();
    o.codegen.math = ir::math_mode::fast;
    const auto f = nvrtc::compile(k, ir::Target::sm_90a, o);
    // Each consumer's key block: 32 exps of P per thread, exp2(m - m') for its 2 rows in the l
    // update and in each of the D / 64 O rescales. Recomputing the rescale per element (the
    // generator before hoist_rows) gives 2 x (34 + 32 D / 64): 132 and 196.
    const std::size_t per_consumer = 32 + 2 + 2 * static_cast<std::size_t>(D / 64);
    CHECK(occurrences(f.ptx, "ex2.approx.ftz.f32") <= 2 * per_consumer);
    CHECK(occurrences(f.ptx, "ex2.approx.ftz.f32") >= 2 * 32);
    CHECK_THAT(f.ptx, Contains("fma.rn.f32"));
    CHECK(f.spill_bytes == 0);
    std::printf("attention_hopper D=%lld fast: %d registers, %d spill bytes, %zu ex2.approx in the PTX\n", static_cast<long long>(D), f.registers,
                f.spill_bytes, occurrences(f.ptx, "ex2.approx.ftz.f32"));
    o.codegen.math = ir::math_mode::exact;
    const auto x = nvrtc::compile(k, ir::Target::sm_90a, o);
    CHECK_THAT(x.ptx, !Contains("ex2.approx"));
    CHECK(x.spill_bytes == 0);
  }
}

TEST_CASE("named barriers: bar.sync / bar.arrive with the mapped hardware id and the count, static ids as immediates", "[nvrtc][named_barrier]") {
  const nvrtc::options o = ptx_options();
  // zoo_named_no_initial_arrive's fixed twin: user ids 0 (full) and 1 (empty) are hardware ids 9 and 10.
  const auto c = nvrtc::compile(zoo::named_no_initial_arrive(zoo::variant::fixed), ir::Target::sm_90a, o);
  CHECK(c.spill_bytes == 0);
  CHECK_THAT(c.ptx, Contains("bar.sync 10, 256;") && Contains("bar.arrive 9, 256;") && Contains("bar.sync 9, 256;") &&
                        Contains("bar.arrive 10, 256;"));
  // A run-time id (one barrier per warpgroup, FA3's scheduler barriers) is a register operand.
  const auto k = lower(kernel<sm_90a>("named_runtime_id", grid(1), threads(2_c), [](auto...) {
    return seq(named_barrier_arrive(thread_id(), 128_c), named_barrier_sync(thread_id(), 128_c));
  }));
  const auto r = nvrtc::compile(k, ir::Target::sm_90a, o);
  CHECK(std::regex_search(r.ptx, std::regex(R"(bar\.arrive %r\d+, 128;)")));
  CHECK(std::regex_search(r.ptx, std::regex(R"(bar\.sync %r\d+, 128;)")));
}

// Semaphores: the signal is one red.release.gpu after the warpgroup's barrier, the wait an
// ld.acquire.gpu poll and an acquiring CAS that takes the count, then the barrier; ptxas accepts them.
TEST_CASE("semaphores: red.release.gpu, ld.acquire.gpu and atom.acquire.gpu.cas around the warpgroup barrier", "[nvrtc][semaphore]") {
  const nvrtc::options o = ptx_options();
  const auto c = nvrtc::compile(zoo::semaphore_never_signalled(zoo::variant::fixed), ir::Target::sm_90a, o);
  CHECK(c.spill_bytes == 0);
  CHECK_THAT(c.ptx, Contains("red.release.gpu.global.add.s32") && Contains("ld.acquire.gpu.global.s32") &&
                        Contains("atom.acquire.gpu.global.cas.b32") && Contains("nanosleep"));
  CHECK_THAT(c.code.source, Contains("sc::sem_signal<0>(") && Contains("sc::sem_wait<0>("));
  // With the watchdog on, a wait that never takes its count reports the counter and traps.
  const auto w = nvrtc::compile(zoo::semaphore_never_signalled(zoo::variant::fixed), ir::Target::sm_90a,
                                ptx_options({.watchdog_ms = 1500}));
  CHECK(w.spill_bytes == 0);
  CHECK_THAT(w.code.source, Contains("sc::sem_wait_watchdog<0>(") && Contains("\"turn\"") && Contains("1500000000ull") && !Contains("sc::sem_wait<"));
  CHECK_THAT(w.ptx, Contains("%globaltimer") && Contains("trap;") && Contains("vprintf"));
  // memory_scope::sys: the same three instructions at .sys (the watchdog's wait too).
  const auto sys = lower(kernel<sm_90a>("sem_sys", grid(2), threads(1_c), gmem<i32>("y", shape(2_c, 64_c)), semaphores("turn", shape(1_c)),
                                        [](auto y, auto turn) {
                                          auto s = program_id();
                                          return seq(if_(s > 0_c, semaphore_wait(turn(0_c), 1_c, memory_scope::sys)), store(y.tile(shape(1_c, 64_c), s, 0_c), 1),
                                                     if_(s < 1_c, semaphore_signal(turn(0_c), 1_c, memory_scope::sys)));
                                        }));
  for (unsigned watchdog : {0u, 1500u}) {
    const auto x = nvrtc::compile(sys, ir::Target::sm_90a, ptx_options({.watchdog_ms = watchdog}));
    CHECK(x.spill_bytes == 0);
    CHECK_THAT(x.ptx, Contains("red.release.sys.global.add.s32") && Contains("ld.acquire.sys.global.s32") && Contains("atom.acquire.sys.global.cas.b32") &&
                          !Contains(".gpu.global"));
    CHECK_THAT(x.code.source, Contains("(.sys)"));
  }
  // splitk_serial: the counter's offset is 32-bit math (64-bit index math cost a spill around the wait).
  auto const& e = registry::global().find("splitk_serial");
  const auto s = nvrtc::compile(e.build(registry::resolve(e, {})), ir::Target::sm_90a, o);
  CHECK(s.spill_bytes == 0);
}

// Value-returning atomics: one atom.<order>.<scope>.global.<op> by the elected thread, its result
// stored to the slot, then the warpgroup's barrier; ptxas accepts every form the ops generate.
TEST_CASE("atomics: atom with each op, memory order and scope, by one thread, then the warpgroup barrier", "[nvrtc][atomic]") {
  const nvrtc::options o = ptx_options();
  const auto c = nvrtc::compile(testing::atomic_each_op(), ir::Target::sm_90a, o);
  CHECK(c.spill_bytes == 0);
  CHECK_THAT(c.ptx, Contains("atom.relaxed.gpu.global.max.s32") && Contains("atom.relaxed.gpu.global.min.s32") &&
                        Contains("atom.acq_rel.gpu.global.exch.b32") && Contains("atom.relaxed.gpu.global.cas.b32") &&
                        Contains("atom.relaxed.sys.global.cas.b32") && Contains("atom.release.gpu.global.add.s32"));
  CHECK_THAT(c.code.source, Contains("sc::atom_fetch<4, 0, 1>(p_c + ") && Contains("// op #") && Contains("atom.release.gpu.global.add on semaphore 'c' -> slot"));
  const auto t = nvrtc::compile(testing::atomic_relay(9), ir::Target::sm_90a, o);
  CHECK(t.spill_bytes == 0);
  CHECK_THAT(t.ptx, Contains("atom.relaxed.gpu.global.add.s32"));
  const auto b = nvrtc::compile(testing::atomic_tickets(3, 7), ir::Target::sm_100a, o);  // Blackwell too
  CHECK_THAT(b.ptx, Contains("atom.relaxed.gpu.global.add.s32"));
}

// gemm_hopper tickets=1: the producer takes the tickets, so it is still a data mover (one warp
// runs it and it hands its registers to the consumers: setmaxnreg), and its atomic syncs that
// warp, not the warpgroup whose other three warps are not there (a wg_sync there would hang).
// One atom per round (round 0's and the loop's), each role's tile read from its slot once per
// round, and the K loop as the static schedule's.
TEST_CASE("gemm_hopper tickets=1 takes its tiles by atom.add in the one-warp producer, with setmaxnreg and no spills", "[nvrtc][atomic]") {
  const nvrtc::options o = ptx_options();
  auto const& e = registry::global().find("gemm_hopper");
  const auto k = e.build(registry::resolve(e, {{"M", 4096}, {"N", 4096}, {"K", 4096}, {"cluster", 1}, {"ctas", 132}, {"tickets", 1}}));
  const auto c = nvrtc::compile(k, ir::Target::sm_90a, o);
  std::printf("gemm_hopper tickets=1 4096^3 ctas=132 sm_90a: %d registers per thread, %d spill bytes\n", c.registers, c.spill_bytes);
  CHECK(c.spill_bytes == 0);
  CHECK(occurrences(c.ptx, "atom.relaxed.gpu.global.add.s32") == 2);
  CHECK_THAT(c.code.source, Contains("a warpgroup that only moves data") && Contains("sc::setmaxnreg_dec<24>();") && Contains("sc::setmaxnreg_inc<240>();"));
  const auto atom = c.code.source.find("sc::atom_fetch<");
  REQUIRE(atom != std::string::npos);
  const auto before = c.code.source.rfind('\n', c.code.source.rfind('\n', atom) - 1);
  CHECK_THAT(c.code.source.substr(before, atom - before), Contains("sc::warp_sync();") && !Contains("wg_sync"));
  CHECK(occurrences(c.code.source, "break;  // op #") == 3);
  CHECK(k.grid[0] == 132);
}

// Reducing stores compile to one red.relaxed.gpu.global per element (no vectors: red has no
// f32 min/max and the generator keeps every element's own instruction) or one
// cp.reduce.async.bulk.tensor per box, with the op and type of the IR; ptxas accepts them.
TEST_CASE("reducing stores: red.global and cp.reduce.async.bulk.tensor with the IR's op and type", "[nvrtc][reduce]") {
  const nvrtc::options o = ptx_options();
  struct want {
    ir::Kernel k;
    std::string instr;
  };
  const std::vector<want> cases = {
      {testing::reduce_probe<f32, ir::Reduce::add, false>("reduce_add_f32"), "red.relaxed.gpu.global.add.f32 "},
      {testing::reduce_probe<i32, ir::Reduce::min, false>("reduce_min_i32"), "red.relaxed.gpu.global.min.s32 "},
      {testing::reduce_probe<u32, ir::Reduce::max, false>("reduce_max_u32"), "red.relaxed.gpu.global.max.u32 "},
      {testing::reduce_probe<f32, ir::Reduce::add, true>("reduce_add_f32_tma"), "cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group"},
      {testing::reduce_probe<u32, ir::Reduce::min, true>("reduce_min_u32_tma"), "cp.reduce.async.bulk.tensor.2d.global.shared::cta.min.tile.bulk_group"},
  };
  for (auto const& c : cases) {
    INFO(c.k.name);
    const auto r = nvrtc::compile(c.k, ir::Target::sm_90a, o);
    CHECK(r.spill_bytes == 0);
    CHECK_THAT(r.ptx, Contains(c.instr));
    CHECK_THAT(r.ptx, !Contains("st.global"));  // y is only ever reduced into
  }
}

// Split-K by reduction (gemm_splitk): the accumulator's fragment goes to C as red.add.v2.f32 on
// each register pair when C's blocks divide it, and as one predicated red.add.f32 per element on
// a masked edge block. No st.global: C is only ever reduced into.
TEST_CASE("gemm_splitk reduces its accumulator into C as red.global.add.v2.f32, element by element on masked edges", "[nvrtc][reduce]") {
  const nvrtc::options o = ptx_options();
  auto const& e = registry::global().find("gemm_splitk");
  const auto even = nvrtc::compile(e.build(registry::resolve(e, {})), ir::Target::sm_90a, o);
  CHECK(even.spill_bytes == 0);
  CHECK_THAT(even.ptx, Contains("red.relaxed.gpu.global.add.v2.f32") && !Contains("red.relaxed.gpu.global.add.f32") && !Contains("st.global"));
  const auto edge = nvrtc::compile(e.build(registry::resolve(e, {{"M", 197}, {"N", 260}})), ir::Target::sm_90a, o);
  CHECK(edge.spill_bytes == 0);
  CHECK_THAT(edge.ptx, Contains("red.relaxed.gpu.global.add.f32") && !Contains("red.relaxed.gpu.global.add.v2.f32") && !Contains("st.global"));
}

// s8 x s8 into s32 (gemm_small int8=1): the integer wgmma kind, which has no scale immediates
// (ptxas rejects them), with s32 accumulator registers; 128-element K slices of 128 bytes.
TEST_CASE("gemm_small int8=1 compiles to wgmma .m64n128k32.s32.s8.s8", "[nvrtc][int8]") {
  const nvrtc::options o = ptx_options();
  auto const& e = registry::global().find("gemm_small");
  const auto c = nvrtc::compile(e.build(registry::resolve(e, {{"int8", 1}})), ir::Target::sm_90a, o);
  CHECK(c.spill_bytes == 0);
  CHECK_THAT(c.ptx, Contains("wgmma.mma_async.sync.aligned.m64n128k32.s32.s8.s8 {") && Contains("}, %rd") && !Contains(".f32.bf16.bf16"));
  static_assert(ir::wgmma::input_pair(ir::DType::i8, ir::DType::i8) && !ir::wgmma::input_pair(ir::DType::i8, ir::DType::e4m3));
  static_assert(ir::wgmma::accumulator_for(ir::DType::i8, ir::DType::i32) && !ir::wgmma::accumulator_for(ir::DType::i8, ir::DType::f32));
  static_assert(ir::wgmma::n_for(ir::DType::i8, 24) && !ir::wgmma::n_for(ir::DType::i8, 40) && ir::wgmma::n_for(ir::DType::i8, 48) &&
                ir::wgmma::n_for(ir::DType::bf16, 40));
}

// u8 A against s8 B (gemm_small int8=2): ptxas takes the mixed-sign kind for sm_90a.
TEST_CASE("gemm_small int8=2 compiles to wgmma .m64n128k32.s32.u8.s8", "[nvrtc][int8]") {
  const nvrtc::options o = ptx_options();
  auto const& e = registry::global().find("gemm_small");
  const auto c = nvrtc::compile(e.build(registry::resolve(e, {{"int8", 2}})), ir::Target::sm_90a, o);
  CHECK(c.spill_bytes == 0);
  CHECK_THAT(c.ptx, Contains("wgmma.mma_async.sync.aligned.m64n128k32.s32.u8.s8 {") && !Contains(".s32.s8.s8"));
  static_assert(ir::wgmma::input_pair(ir::DType::u8, ir::DType::i8) && ir::wgmma::input_pair(ir::DType::i8, ir::DType::u8) &&
                ir::wgmma::input_pair(ir::DType::u8, ir::DType::u8) && !ir::wgmma::input_pair(ir::DType::u8, ir::DType::e4m3) &&
                !ir::wgmma::input_pair(ir::DType::u8, ir::DType::f16));
  static_assert(ir::wgmma::accumulator_for(ir::DType::u8, ir::DType::i32) && !ir::wgmma::n_for(ir::DType::u8, 40));
}

TEST_CASE("cluster launch control: gemm_blackwell clc=1 compiles for sm_100a with try_cancel and its queries, the tile read once per round, no spills",
          "[nvrtc][tcgen05][clc]") {
  const nvrtc::options o = ptx_options();
  auto const& e = registry::global().find("gemm_blackwell");
  const auto k = e.build(registry::resolve(e, {{"M", 4096}, {"N", 4096}, {"K", 4096}, {"clc", 1}}));
  const auto c = nvrtc::compile(k, ir::Target::sm_100a, o);
  std::printf("gemm_blackwell clc=1 4096^3 sm_100a: %d registers per thread, %d spill bytes\n", c.registers, c.spill_bytes);
  CHECK(c.spill_bytes == 0);
  // One try_cancel site (the producer warp asks), each role's test of round 0's response and of
  // every later one, and each role's tile read from the previous response once per round.
  CHECK(occurrences(c.ptx, "clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes.b128") == 2);  // round 0, the loop
  CHECK(occurrences(c.ptx, "clusterlaunchcontrol.query_cancel.is_canceled.pred.b128") >= 6);
  CHECK(occurrences(c.ptx, "clusterlaunchcontrol.query_cancel.get_first_ctaid::x.b32.b128") >= 3);
  CHECK(occurrences(c.code.source, "sc::mbar_arrive_expect_tx(bar, 16u);") == 2);
  CHECK(occurrences(c.code.source, "break;  // op #") == 3);
  // The grid is one CTA per tile: 32 x 16 tiles of 128 x 256.
  CHECK(k.grid[0] == 512);
}
