// attention_blackwell's registration: the kernel and its reference are in
// attention_blackwell.hpp (the bug zoo builds its twin from them).
#include "attention_blackwell.hpp"

namespace stagecraft::examples {
namespace {

STAGECRAFT_REGISTER(kernel_entry{
    .name = "attention_blackwell",
    .summary = "O = softmax(Q K^T / sqrt(D) + mask) V (bf16, (B*S, D)) and LSE (f32, (B, S)) on sm_100a, FlashAttention-4-style: S and O in TMEM, "
               "a softmax warpgroup owning a row per thread, P through TMEM into tcgen05 as A, a correction warpgroup rescaling O",
    .params = {{.name = "B", .default_value = 1, .help = "batch x heads", .min = 1},
               {.name = "S", .default_value = 256, .help = "sequence length (any; --dynamic S: a launch argument)", .min = 128, .run_time = true},
               {.name = "D", .default_value = 128, .help = "head dimension", .allowed = {64, 128}},
               {.name = "causal", .default_value = 0, .help = "1: query r sees keys <= r", .allowed = {0, 1}, .min = 0}},
    .build =
        [](param_values const& p) {
          return dispatch<64, 128>(p.at("D"), [&](auto D) {
            return dispatch<0, 1>(p.at("causal"), [&](auto C) { return lower(fa4::attention_blackwell<decltype(D)::value, decltype(C)::value == 1>(p.at("B"), size_param(p, "S"))); });
          });
        },
    .reference = fa4::reference,
});

}  // namespace
}  // namespace stagecraft::examples
