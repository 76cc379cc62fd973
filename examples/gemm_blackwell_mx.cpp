// The registry entry of gemm_blackwell_mx (gemm_blackwell_mx.hpp: the kernel, its reference and
// the inputs hook that keeps the random scale codes in range).
#include <string>

#include <stagecraft/registry.hpp>

#include "gemm_blackwell_mx.hpp"

namespace stagecraft::examples {
namespace {

STAGECRAFT_REGISTER(kernel_entry{
    .name = "gemm_blackwell_mx",
    .summary = "C = (A * SFA)(B * SFB)^T, block-scaled on sm_100a: MXFP8 (e4m3/e5m2, a ue8m0 scale per 32 of K), MXFP6 (e2m3/e3m2, ue8m0 per 32), MXFP4 (e2m1, ue8m0 per 32), MXFP8 x MXFP4 or "
               "NVFP4 (e2m1, ue4m3 per 16): tcgen05.cp of the scales into TMEM, kind::mxf8f6f4 / mxf4 / mxf4nvf4 block_scale MMAs, 128x128 tiles, "
               "4-stage ring, two TMEM accumulators, persistent over tiles",
    .params = {{.name = "M", .default_value = 256, .help = "rows of A and C (any; --dynamic M: a launch argument)", .min = 128, .run_time = true},
               {.name = "N", .default_value = 256, .help = "rows of B, columns of C (at least BN = 128; bf16 rows of 16-byte TMA units: a multiple of 8)",
                .min = 128, .multiple_of = 8},
               {.name = "K", .default_value = 256, .help = "the reduced dimension, in values (rows of 16-byte TMA units: a multiple of 16 for fp8, of 32 "
                "for fp4, whose rows hold K / 2 bytes); the scale tensors hold ceil(K / (4 x scale block)) blocks of four scales", .min = 128, .multiple_of = 16},
               {.name = "fmt", .default_value = 1, .help = "1: MXFP8, e4m3 A and B; 2: e4m3 A, e5m2 B (ue8m0 scales per 32 of K, kind::mxf8f6f4); "
                "3: MXFP4, e2m1x2 A and B, ue8m0 scales per 32 of K (kind::mxf4); 4: NVFP4, e2m1x2, ue4m3 scales per 16 of K (kind::mxf4nvf4); "
                "5: MXFP6, e2m3 A and B; 6: e3m2 A, e2m3 B; 7: e4m3 A, e2m1 B, MXFP8 x MXFP4 with FP4 one to a byte of SMEM "
                "(ue8m0 per 32 of K, kind::mxf8f6f4; FP6 and that FP4 packed in GMEM, so K a multiple of 128)",
                .allowed = {1, 2, 3, 4, 5, 6, 7},
                .names = {{"mxfp8", 1}, {"mxfp8_e5m2", 2}, {"mxfp4", 3}, {"nvfp4", 4}, {"mxfp6", 5}, {"mxfp6_e3m2", 6}, {"mxfp8_mxfp4", 7}}},
               {.name = "ctas", .default_value = 0, .help = "CTAs in the grid, each looping over output tiles; 0: one per tile", .min = 0},
               {.name = "raster", .default_value = 8, .help = "persistent tile order: bands of this many rows of tiles", .min = 1, .max = 64}},
    .build =
        [](param_values const& p) {
          const auto N = p.at("N"), K = p.at("K");
          const auto M = size_param(p, "M");
          const std::int64_t blocks = ceil_div(p.at("M"), mx::BM);
          const size_expr M_blocks = is_dynamic(p, "M") ? run_time("M_blocks", blocks) : compiled_in(blocks);
          const size_expr tiles = ceil_div(M, mx::BM) * ceil_div(N, mx::BN);
          const size_expr grid_ctas = p.at("ctas") == 0 ? tiles : min(p.at("ctas"), tiles);
          if ((p.at("fmt") == 3 || p.at("fmt") == 4) && K % 32 != 0)
            throw usage_error("gemm_blackwell_mx: fmt=" + std::to_string(p.at("fmt")) + " stores two e2m1 values a byte, so K (" + std::to_string(K) +
                              ") must be a multiple of 32 (rows of whole 16-byte TMA units)");
          if (p.at("fmt") >= 5 && K % 128 != 0)
            throw usage_error("gemm_blackwell_mx: fmt=" + std::to_string(p.at("fmt")) + " reads " + (p.at("fmt") == 7 ? "FP4" : "FP6") +
                              " packed in GMEM through TMA's " + (p.at("fmt") == 7 ? "16U4" : "16U6") + "_ALIGN16B, so K (" + std::to_string(K) +
                              ") must be a multiple of 128");
          if (p.at("fmt") == 7) return lower(mx::gemm_blackwell_mx<e4m3, e2m1>(M, M_blocks, N, K, grid_ctas, p.at("raster")));
          if (p.at("fmt") == 6) return lower(mx::gemm_blackwell_mx<e3m2, e2m3>(M, M_blocks, N, K, grid_ctas, p.at("raster")));
          if (p.at("fmt") == 5) return lower(mx::gemm_blackwell_mx<e2m3, e2m3>(M, M_blocks, N, K, grid_ctas, p.at("raster")));
          if (p.at("fmt") == 4) return lower(mx::gemm_blackwell_mx<e2m1x2, e2m1x2, ue4m3>(M, M_blocks, N, K, grid_ctas, p.at("raster")));
          if (p.at("fmt") == 3) return lower(mx::gemm_blackwell_mx<e2m1x2, e2m1x2, u8>(M, M_blocks, N, K, grid_ctas, p.at("raster")));
          if (p.at("fmt") == 2) return lower(mx::gemm_blackwell_mx<e4m3, e5m2>(M, M_blocks, N, K, grid_ctas, p.at("raster")));
          return lower(mx::gemm_blackwell_mx<e4m3, e4m3>(M, M_blocks, N, K, grid_ctas, p.at("raster")));
        },
    .reference = mx::reference,
    .inputs = mx::inputs,
});

}  // namespace
}  // namespace stagecraft::examples
