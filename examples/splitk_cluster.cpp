// y[r, c] = sum over j of x[r, 64 j + c], the K dimension split over the S CTAs of a cluster:
// CTA rank s sums its share of the ceil(K/64) column blocks (ceil(blocks/S) of them; the last
// ranks may have fewer, or none) into its partial in a kernel-owned workspace, every CTA arrives
// on a cluster barrier, and rank 0 adds the S partials and stores y. Any M and K: where the
// 64x64 tiles do not divide x and y their masks predicate (x reads zeros outside, y drops the
// rows past M); the workspace is padded to whole tiles, so its partials need no mask.
//
// The workspace starts as zeros on every launch (each launcher zero-fills it), which is what
// lets a CTA accumulate straight into its partial without a first pass. Partials are written
// and read with generic loads and stores: the cluster barrier's arrive releases and its wait
// acquires at cluster scope, which orders the peers' GMEM writes before rank 0 reads them.
//
// tma = 1: each CTA sums in an SMEM tile instead and sends its partial out with a TMA store.
// The store crosses proxies (async write, generic reads by rank 0), and what orders it is the
// full bulk-group wait before the arrive: the completion of a cp.async.bulk carries an implicit
// generic-async proxy fence (PTX ISA, "Async Proxy"), so no fence.proxy.async is needed, but
// wait_smem_to_gmem(0_c, read_only) would only say the SMEM was read (zoo_tma_store_then_generic_read).
#include <stagecraft/registry.hpp>
#include <stagecraft/stagecraft.hpp>

#include <algorithm>
#include <utility>

namespace stagecraft::examples {
namespace {

template <long long S, bool Tma>
auto splitk_cluster(std::int64_t M, std::int64_t K) {
  const std::int64_t row_blocks = ceil_div(M, 64), blocks = ceil_div(K, 64), per_cta = ceil_div(blocks, S);  // column blocks: all, per CTA
  auto t = shape(64_c, 64_c);
  auto body = [&](auto x, auto y, auto partials, auto summed, auto out) {
    auto rank = cluster_idx(0_c);
    auto rb = program_id(1_c);
    auto steps = max(0_c, min(per_cta, blocks - rank * per_cta));  // this rank's blocks: the last ranks may have fewer
    auto add_into = [&](auto v) { return for_(range(steps), [&](auto j) { return store(v, load(v) + load(x.tile(t, masked(0.0), rb, rank * per_cta + j))); }); };
    auto publish = out(add_into, rank * row_blocks + rb);
    // ((p0 + p1) + p2) + ...: the reference adds in the same order.
    auto total = [&]<std::size_t... s>(std::index_sequence<s...>) {
      return (... + load(partials.tile(t, rb + row_blocks * static_cast<std::int64_t>(s), 0_c)));
    }(std::make_index_sequence<S>{});
    // Every CTA waits before it exits: the arrivals land on every CTA's copy of the barrier.
    return seq(publish, barrier_arrive(summed), barrier_wait(summed), if_(rank == 0_c, store(y.tile(t, masked(), rb, 0_c), total)));
  };
  // The declarations both variants share; the TMA one adds its SMEM tile.
  auto x_decl = gmem<f32>("x", shape(M, K));                               // (row, col)
  auto y_decl = gmem<f32>("y", shape(M, 64_c));                            // (row, col)
  auto partials_decl = workspace<f32>("partials", shape(S * row_blocks * 64, 64_c));  // (rank * rows + row, col): one partial per CTA rank
  auto summed_decl = cluster_barrier("summed", collective_axes(0_c), arrivals(1_c));  // every partial of the cluster is written
  if constexpr (Tma) {
    return kernel<sm_90a>("splitk_cluster", grid(int_c<S>, row_blocks), threads(1_c), cluster(int_c<S>), x_decl, y_decl, partials_decl,
                          smem<f32>(shape(64_c, 64_c)),  // sum: (row, col), the partial on its way out
                          summed_decl, [&](auto x, auto y, auto partials, auto sum, auto summed) {
                            // SMEM starts undefined: zeroed as the workspace is. The full wait (not
                            // read_only) is what lets the arrive release the store's GMEM bytes.
                            return body(x, y, partials, summed, [&](auto add_into, auto row_block) {
                              return seq(store(sum, 0.0f), add_into(sum), commit_smem(), copy_smem_to_gmem(sum, partials.block(row_block, 0_c)),
                                         commit_smem_to_gmem_group(), wait_smem_to_gmem(0_c));
                            });
                          });
  } else {
    return kernel<sm_90a>("splitk_cluster", grid(int_c<S>, row_blocks), threads(1_c), cluster(int_c<S>), x_decl, y_decl, partials_decl, summed_decl,
                          [&](auto x, auto y, auto partials, auto summed) {
                            return body(x, y, partials, summed, [&](auto add_into, auto row_block) { return add_into(partials.tile(t, row_block, 0_c)); });
                          });
  }
}

STAGECRAFT_REGISTER(kernel_entry{
    .name = "splitk_cluster",
    .summary = "y = sum of x's 64-column blocks, K split over a cluster: partials in a kernel-owned workspace, a cluster barrier, rank 0 adds",
    .params = {{.name = "M", .default_value = 128, .help = "rows (any)", .min = 1},
               {.name = "K", .default_value = 512, .help = "columns (any; split into 64-column blocks over the cluster's CTAs)", .min = 1},
               {.name = "S", .default_value = 4, .help = "CTAs per cluster, one K slice each", .allowed = {2, 4}},
               {.name = "tma", .default_value = 0, .help = "1: partials go out by TMA store from SMEM; 0: generic stores", .allowed = {0, 1}, .min = 0}},
    .build = [](param_values const& p) {
      return dispatch<2, 4>(p.at("S"), [&](auto S) {
        return dispatch<0, 1>(p.at("tma"), [&](auto T) { return lower(splitk_cluster<decltype(S)::value, decltype(T)::value == 1>(p.at("M"), p.at("K"))); });
      });
    },
    // t[2], the workspace, is not read: the kernel's scratch is no input, and what it holds
    // afterwards is no output.
    .reference =
        [](std::vector<host_tensor>& t, param_values const& p) {
          auto x = t[0].as<float>();
          auto y = t[1].as<float>();
          const auto M = p.at("M"), K = p.at("K"), S = p.at("S"), blocks = ceil_div(K, 64), per_cta = ceil_div(blocks, S);
          for (std::int64_t r = 0; r < M; ++r)
            for (std::int64_t c = 0; c < 64; ++c) {
              float total = 0.0f;
              for (std::int64_t s = 0; s < S; ++s) {
                float partial = 0.0f;  // the zero-filled workspace
                for (std::int64_t j = s * per_cta; j < std::min(blocks, (s + 1) * per_cta); ++j)
                  partial = partial + (j * 64 + c < K ? x[r * K + j * 64 + c] : 0.0f);  // the masked tile's fill
                total = s == 0 ? partial : total + partial;
              }
              y[r * 64 + c] = total;
            }
        },
});

}  // namespace
}  // namespace stagecraft::examples
