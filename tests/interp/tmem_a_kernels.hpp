// A from TMEM in one warpgroup, shared by the interpreter and NVRTC tests.
#pragma once
#include <stagecraft/stagecraft.hpp>

namespace stagecraft::testing {

// C (128, 64) = (2 A) * B^T in one warpgroup with A doubled in registers and stored into TMEM:
// `T` bf16 (kind::f16, two to a column) or f32 (kind::tf32, one to a column). The MMA follows the
// store in the same warpgroup: program order (and, generated, the warpgroup's barrier) orders it.
template <class T>
inline ir::Kernel ts_one_cta(const char* name) {
  constexpr long long KT = 128 / (T::bits / 8);  // K per 128-byte swizzled row: 32 columns of TMEM either way
  return lower(kernel<sm_100a>(
      name, grid(1), threads(1_c), gmem<T>("a", shape(128_c, int_c<KT>)), gmem<T>("b", shape(64_c, int_c<KT>)), gmem<f32>("c", shape(128_c, 64_c)),
      smem<T>(shape(128_c, int_c<KT>), swizzle(128_c)), smem<T>(shape(64_c, int_c<KT>), swizzle(128_c)), smem<f32>(shape(128_c, 64_c)),
      barrier(arrivals(2_c)), barrier(arrivals(1_c), orders_tensor_core), tmem<f32>(shape(128_c, 64_c)), tmem<T>(shape(128_c, int_c<KT>)),
      [](auto a, auto b, auto c, auto as, auto bs, auto cs, auto loaded, auto done, auto d, auto at) {
        return seq(copy_gmem_to_smem(a.block(0_c, 0_c), as, loaded), copy_gmem_to_smem(b.block(0_c, 0_c), bs, loaded), barrier_wait(loaded),
                   store_tmem(at, cast<T>(load(as) * 2.0f)), tcgen05_mma(d, at, transpose(bs), done, false), barrier_wait(done),
                   store(cs, async_load_tmem(d)), tmem_dealloc(d), tmem_dealloc(at), commit_smem(), copy_smem_to_gmem(cs, c.block(0_c, 0_c)),
                   commit_smem_to_gmem_group(), wait_smem_to_gmem(0_c));
      }));
}

}  // namespace stagecraft::testing
