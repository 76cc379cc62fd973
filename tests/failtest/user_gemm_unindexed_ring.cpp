// expect: Attempting to operate on barrier without indexing, but num_barriers = 2
// User-shaped (issue 27): a warp-specialized Hopper GEMM with a bias + ReLU epilogue, as a new
// user writes it, whose consumer waits on the whole `full` ring instead of full[s]. The error
// must be as short as for the seed's three-line kernel (failtest.error_size).
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  const std::int64_t K = 256, steps = K / 64;
  return kernel<sm_90a>(
      "gemm_bias_relu", grid(2), threads(2_c),
      gmem<bf16>("a", shape(128_c, K)), gmem<bf16>("b", shape(64_c, K)), gmem<f32>("bias", shape(64_c)), gmem<f32>("c", shape(128_c, 64_c)),
      smem<bf16>(shape(2_c, 64_c, 64_c), swizzle(128_c)), smem<bf16>(shape(2_c, 64_c, 64_c), swizzle(128_c)), smem<f32>(shape(64_c, 64_c)),
      barrier(arrivals(2_c), count(2_c)), barrier(arrivals(1_c), count(2_c)), accumulator<f32>(shape(64_c, 64_c)),
      [&](auto a, auto b, auto bias, auto c, auto as, auto bs, auto cs, auto full, auto empty, auto acc) {
        auto m = program_id();
        auto producer = for_(range(steps), [&](auto j) {
          auto s = stage<2>(j);
          return seq(if_(j >= 2_c, barrier_wait(empty[s])), copy_gmem_to_smem(a.block(m, j), as[s], full[s]),
                     copy_gmem_to_smem(b.block(0_c, j), bs[s], full[s]));
        });
        auto consumer = for_(range(steps), [&](auto j) {
          auto s = stage<2>(j);
#ifdef STAGECRAFT_KO
          return seq(barrier_wait(full), wgmma(acc, as[s], transpose(bs[s])), wgmma_commit(), wgmma_wait(0_c), barrier_arrive(empty[s]));
#else
          return seq(barrier_wait(full[s]), wgmma(acc, as[s], transpose(bs[s])), wgmma_commit(), wgmma_wait(0_c), barrier_arrive(empty[s]));
#endif
        });
        auto epilogue = seq(store(cs, max(load(acc) + broadcast<0>(load(bias.tile(shape(64_c), 0_c)), shape(64_c, 64_c)), 0.0f)), commit_smem(),
                            copy_smem_to_gmem(cs, c.block(m, 0_c)), commit_smem_to_gmem_group(), wait_smem_to_gmem(0_c));
        return if_(thread_id() == 0_c, producer, seq(store(acc, 0.0f), consumer, epilogue));
      });
}
int main() { (void)lower(make()); }
