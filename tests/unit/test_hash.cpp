#include <catch2/catch.hpp>
#include <map>
#include <set>

#include "common.hpp"
#include <stagecraft/registry.hpp>

using namespace stagecraft;

TEST_CASE("equal kernels hash equal", "[hash]") {
  const auto a = lower(testing::ring_kernel<3>(256, 512));
  (void)lower(testing::ring_kernel<2>(128, 128));  // unrelated kernels in between change nothing
  const auto b = lower(testing::ring_kernel<3>(256, 512));
  CHECK(ir::hash(a) == ir::hash(b));
  auto c = a;  // a copy is the same kernel
  CHECK(ir::hash(c) == ir::hash(a));
}

TEST_CASE("every semantic change changes the hash", "[hash]") {
  std::vector<ir::Kernel> variants = {
      lower(testing::ring_kernel<3>(256, 512)),
      lower(testing::ring_kernel<2>(256, 512)),                  // ring depth
      lower(testing::ring_kernel<3>(128, 512)),                  // problem size (grid, extents)
      lower(testing::ring_kernel<3>(256, 256)),                  // trip count
      lower(testing::ring_kernel<3>(256, 512, 2.0f)),            // a constant in the tile math
      lower(testing::ring_kernel<3>(256, 512, 1.0f, "ring2")),   // the kernel's name (its symbol)
  };
  // Hand-made changes to the IR that the front end would not produce.
  auto base = variants[0];
  auto flip = base;
  for (auto& s : flip.stmts)
    if (s.op == ir::StmtOp::wait_group && s.flag) { s.flag = false; break; }
  variants.push_back(flip);
  auto arrivals = base;
  arrivals.allocs[1].arrivals = 2;
  variants.push_back(arrivals);
  auto target = base;
  target.target = ir::Target::sm_100a;
  variants.push_back(target);
  auto dtype = base;
  dtype.params[1].dtype = ir::DType::bf16;
  variants.push_back(dtype);
  auto swz = base;
  swz.allocs[0].swizzle = 128;
  variants.push_back(swz);
  auto cl = base;
  cl.cluster_rank = 1;
  cl.cluster[0] = 2;
  variants.push_back(cl);
  auto wg = base;
  wg.roles = 2;
  variants.push_back(wg);
  auto ws = base;  // a parameter turned kernel-owned: the launchers no longer take it
  ws.params[1].workspace = true;
  variants.push_back(ws);

  std::set<std::uint64_t> hashes;
  for (auto const& v : variants) hashes.insert(ir::hash(v));
  CHECK(hashes.size() == variants.size());
}

TEST_CASE("random scalar constants: hashes differ exactly when the constants differ", "[hash]") {
  const std::uint64_t seed = GENERATE(1u, 7u, 2026u);
  INFO("seed " << seed);
  auto rng = testing::seeded_rng(seed);
  std::uniform_real_distribution<float> dist(-100.0f, 100.0f);
  std::map<float, std::uint64_t> seen;
  for (int i = 0; i < 16; ++i) {
    const float c = dist(rng);
    const auto h = ir::hash(lower(testing::ring_kernel<2>(128, 256, c)));
    if (auto it = seen.find(c); it != seen.end()) CHECK(it->second == h);
    for (auto const& [other, oh] : seen)
      if (other != c) CHECK(oh != h);
    seen[c] = h;
  }
}

TEST_CASE("element strides print and hash only where a block has them", "[hash]") {
  auto const& e = registry::global().find("downsample_rows");
  const auto k = e.build(registry::resolve(e, {}));
  CHECK_THAT(ir::print(k), Catch::Matchers::Contains("(32x64) stride(2x1)"));
  auto dense = k;
  for (auto& r : dense.refs) r.stride.clear();
  CHECK_THAT(ir::print(dense), !Catch::Matchers::Contains("stride("));
  CHECK(ir::hash(dense) != ir::hash(k));
  auto other = k;
  for (auto& r : other.refs)
    if (!r.stride.empty()) r.stride[0] = 4;
  CHECK(ir::hash(other) != ir::hash(k));
}
