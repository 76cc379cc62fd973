// The JIT: every example compiles for sm_90a and sm_100a (NVRTC runs ptxas, so the PTX is
// valid), carries the instructions the op catalog promises, spills nothing, and is cached.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>

#include <stagecraft/nvrtc/nvrtc.hpp>
#include <stagecraft/registry.hpp>
#include <stagecraft/stagecraft.hpp>

using namespace stagecraft;
using Catch::Matchers::Contains;

namespace {
std::string temp_cache() {
  auto dir = std::filesystem::temp_directory_path() / ("stagecraft-test-cache-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  return dir.string();
}
bool uses(ir::Kernel const& k, ir::StmtOp op) {
  for (auto const& s : k.stmts)
    if (s.op == op) return true;
  return false;
}
}  // namespace

TEST_CASE("every example compiles through NVRTC for sm_90a and sm_100a, with the promised instructions and no spills", "[nvrtc]") {
  const nvrtc::options o{.memory_cache = false, .disk_cache = false};
  for (auto const* e : registry::global().all()) {
    auto k = e->build(registry::resolve(*e, {}));
    for (auto t : {ir::Target::sm_90a, ir::Target::sm_100a}) {
      INFO("kernel " << e->name << " on " << ir::target_name(t));
      k.target = t;
      const auto c = nvrtc::compile(k, t, o);
      CHECK(!c.ptx.empty());
      CHECK(c.cubin.size() > 1000);
      CHECK(c.spill_bytes == 0);
      CHECK(c.registers > 0);
      CHECK_THAT(c.ptx, Contains(t == ir::Target::sm_90a ? ".target sm_90a" : ".target sm_100a"));
      CHECK_THAT(c.ptx, Contains("mbarrier.init.shared::cta.b64") && Contains("mbarrier.try_wait.parity") &&
                            Contains("fence.mbarrier_init.release.cluster"));
      if (uses(k, ir::StmtOp::copy_gmem_to_smem))
        CHECK_THAT(c.ptx, Contains("cp.async.bulk.tensor") && Contains("mbarrier.arrive.expect_tx") && Contains("complete_tx::bytes"));
      if (uses(k, ir::StmtOp::copy_smem_to_gmem))
        CHECK_THAT(c.ptx, Contains("bulk_group") && Contains("cp.async.bulk.commit_group") && Contains("cp.async.bulk.wait_group"));
      if (uses(k, ir::StmtOp::commit_smem)) CHECK_THAT(c.ptx, Contains("fence.proxy.async.shared::cta"));
      if (uses(k, ir::StmtOp::barrier_arrive)) CHECK_THAT(c.ptx, Contains("mbarrier.arrive.release.cta.shared::cta.b64"));
    }
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

TEST_CASE("generated code NVRTC rejects is reported as our bug, with the log and the source around it", "[nvrtc]") {
  nvrtc::generated g;
  g.entry = "broken";
  g.source = "extern \"C\" __global__ void broken(float* y) {\n  y[threadIdx.x] = undeclared_name;\n}\n";
  REQUIRE_THROWS_AS(nvrtc::compile_generated(g, ir::Target::sm_100a), nvrtc::compile_error);
  REQUIRE_THROWS_WITH(nvrtc::compile_generated(g, ir::Target::sm_100a),
                      Contains("a bug in stagecraft's code generator") && Contains("kernel 'broken' on sm_100a") &&
                          Contains("undeclared_name") && Contains(">    2 |   y[threadIdx.x] = undeclared_name;"));
}

TEST_CASE("a multicast load, its mask and share emitted as constants, compiles through NVRTC with no spills", "[nvrtc]") {
  // No bundled example multicasts yet; this is the code test_codegen_numbers.cpp checks the numbers of.
  const auto k = lower(kernel<sm_90a>("mcast", grid(2, 2, 2), threads(1_c), cluster(2_c, 2_c, 2_c), gmem<f32>("w", shape(128_c, 64_c)),
                                      smem<f32>(shape(128_c, 64_c)), barrier(arrivals(1_c)), [](auto w, auto ws, auto bar) {
                                        return seq(copy_gmem_to_smem(w.block(0_c, 0_c), ws, bar, collective_axes(0_c, 2_c)), barrier_wait(bar));
                                      }));
  const auto c = nvrtc::compile(k, ir::Target::sm_90a, {.memory_cache = false, .disk_cache = false});
  CHECK(c.spill_bytes == 0);
  CHECK_THAT(c.ptx, Contains("multicast::cluster") && Contains("%cluster_ctaid.x") && Contains("%cluster_ctaid.z"));
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
  const auto c = nvrtc::compile(k, ir::Target::sm_90a, {.memory_cache = false, .disk_cache = false});
  CHECK_THAT(c.ptx, Contains("mul.rn.f32") && Contains("add.rn.f32"));
  CHECK_THAT(c.ptx, !Contains("fma.rn.f32"));
}
