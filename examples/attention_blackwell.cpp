// attention_blackwell's registration: the kernel and its reference are in
// attention_blackwell.hpp (the bug zoo builds its twin from them).
#include "attention_blackwell.hpp"

namespace stagecraft::examples {
namespace {

STAGECRAFT_REGISTER(kernel_entry{
    .name = "attention_blackwell",
    .summary = "O = softmax(Q K^T / sqrt(D) + mask) V (bf16, (B*S, D)) and LSE (f32, (B, S)) on sm_100a, FlashAttention-4-style: S and O in TMEM, "
               "softmax warpgroups owning a row per thread (two query tiles per CTA, ping-ponged), P through TMEM into tcgen05 as A, a correction "
               "warpgroup rescaling O",
    .params = {{.name = "B", .default_value = 1, .help = "batch x heads", .min = 1},
               {.name = "S", .default_value = 256, .help = "sequence length (any; --dynamic S: a launch argument)", .min = 128, .run_time = true},
               {.name = "D", .default_value = 128, .help = "head dimension", .allowed = {64, 128}},
               {.name = "causal", .default_value = 0, .help = "1: query r sees keys <= r", .allowed = {0, 1}, .min = 0},
               {.name = "tiles",
                .default_value = 2,
                .help = "query tiles of 128 rows per CTA, each with its own softmax warpgroup: 2 is FA4's ping-pong (the tensor core works on one "
                        "tile while the other's softmax runs), 1 a single tile with S double-buffered in TMEM",
                .allowed = {1, 2}},
               {.name = "BK",
                .default_value = 0,
                .help = "keys per block; 0: the largest TMEM allows (tiles=1: 128; tiles=2: 64 at D=128, where two tiles' S, P and O fill 448 "
                        "columns, 128 at D=64)",
                .allowed = {0, 64, 128},
                .min = 0}},
    .build =
        [](param_values const& p) {
          const auto D = p.at("D"), bk = fa4::block_keys(p);
          if (p.at("tiles") == 2) {
            if (D == 128 && bk == 128)
              throw usage_error("attention_blackwell: tiles=2 with D=128 takes BK=64, but got BK=128: two tiles' S (2 x 128 columns), P (2 x 64) and "
                                "O (2 x 128) would take 640 of TMEM's 512 columns");
            return dispatch<64, 128>(D, [&](auto Dc) {
              return dispatch<64, 128>(bk, [&](auto K) {
                return dispatch<0, 1>(p.at("causal"), [&](auto C) -> ir::Kernel {
                  constexpr long long d = decltype(Dc)::value, b = decltype(K)::value;
                  if constexpr (d == 128 && b == 128) throw usage_error("attention_blackwell: tiles=2, D=128, BK=128");  // refused above
                  else return lower(fa4::attention_blackwell_2q<d, b, decltype(C)::value == 1>(p.at("B"), size_param(p, "S")));
                });
              });
            });
          }
          if (bk != 128)
            throw usage_error("attention_blackwell: tiles=1 takes BK=128 (its causal diagonal is the tile's own block), but got BK=" + std::to_string(bk));
          return dispatch<64, 128>(p.at("D"), [&](auto D) {
            return dispatch<0, 1>(p.at("causal"), [&](auto C) { return lower(fa4::attention_blackwell<decltype(D)::value, decltype(C)::value == 1>(p.at("B"), size_param(p, "S"))); });
          });
        },
    .reference = fa4::reference,
});

}  // namespace
}  // namespace stagecraft::examples
