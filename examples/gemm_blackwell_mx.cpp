// The registry entry of gemm_blackwell_mx (gemm_blackwell_mx.hpp: the kernel, its reference and
// the inputs hook that keeps the random scale codes in range).
#include <string>

#include <stagecraft/registry.hpp>

#include "gemm_blackwell_mx.hpp"

namespace stagecraft::examples {
namespace {

STAGECRAFT_REGISTER(kernel_entry{
    .name = "gemm_blackwell_mx",
    .summary = "C = (A * SFA)(B * SFB)^T, MXFP8 (e4m3/e5m2 with a ue8m0 scale per 32 of K) on sm_100a: tcgen05.cp of the scales into TMEM, "
               "kind::mxf8f6f4.block_scale MMAs, 128x128 tiles, 4-stage ring, two TMEM accumulators, persistent over tiles",
    .params = {{.name = "M", .default_value = 256, .help = "rows of A and C (a multiple of 128: the scales' 128-row blocks)", .min = 128, .multiple_of = 128},
               {.name = "N", .default_value = 256, .help = "rows of B, columns of C (a multiple of 128)", .min = 128, .multiple_of = 128},
               {.name = "K", .default_value = 256, .help = "the reduced dimension (a multiple of 128: four 32-element scale blocks a slice)", .min = 128,
                .multiple_of = 128},
               {.name = "fmt", .default_value = 1, .help = "1: MXFP8, e4m3 A and B; 2: e4m3 A, e5m2 B (ue8m0 scales per 32 of K). MXFP4 and NVFP4 "
                "(kind::mxf4, mxf4nvf4) are not modelled yet", .allowed = {1, 2}},
               {.name = "ctas", .default_value = 0, .help = "CTAs in the grid, each looping over output tiles; 0: one per tile", .min = 0},
               {.name = "raster", .default_value = 8, .help = "persistent tile order: bands of this many rows of tiles", .min = 1, .max = 64}},
    .build =
        [](param_values const& p) {
          const auto M = p.at("M"), N = p.at("N"), K = p.at("K");
          const size_expr tiles = compiled_in(M / mx::BM * (N / mx::BN));
          const size_expr grid_ctas = p.at("ctas") == 0 ? tiles : min(p.at("ctas"), tiles);
          if (p.at("fmt") == 2) return lower(mx::gemm_blackwell_mx<e4m3, e5m2>(M, N, K, grid_ctas, p.at("raster")));
          return lower(mx::gemm_blackwell_mx<e4m3, e4m3>(M, N, K, grid_ctas, p.at("raster")));
        },
    .reference = mx::reference,
    .inputs = mx::inputs,
});

}  // namespace
}  // namespace stagecraft::examples
