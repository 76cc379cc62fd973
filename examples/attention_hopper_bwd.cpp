// attention_hopper_bwd's registration: the kernel, its reference and its inputs are in
// attention_hopper_bwd.hpp (the bug zoo builds its mistake from the same template).
#include "attention_hopper_bwd.hpp"

namespace stagecraft::examples {
namespace {

STAGECRAFT_REGISTER(kernel_entry{
    .name = "attention_hopper_bwd",
    .summary = "dQ (f32, added into), dK, dV (bf16) of softmax(Q K^T / sqrt(D) + mask) V from Q, K, V, dO (bf16, (B, S, D)) and the forward pass's "
               "LSE and delta = rowsum(dO * O) (f32, (B, S)): one CTA per 64 keys, Q and dO through a 2-stage TMA ring, P and dS transposed "
               "through SMEM, dQ reduced into GMEM",
    .params = {{.name = "B", .default_value = 1, .help = "batch x heads", .min = 1},
               {.name = "S", .default_value = 192, .help = "sequence length (any; --dynamic S: a launch argument)", .min = 64, .run_time = true},
               {.name = "D", .default_value = 64, .help = "head dimension", .allowed = {64, 128}},
               {.name = "causal", .default_value = 0, .help = "1: query r sees keys <= r", .allowed = {0, 1}, .min = 0}},
    .build =
        [](param_values const& p) {
          return dispatch<64, 128>(p.at("D"), [&](auto D) {
            return dispatch<0, 1>(p.at("causal"), [&](auto C) -> ir::Kernel {
              return lower(bwd::attention_hopper_bwd<decltype(D)::value, decltype(C)::value == 1>(p.at("B"), size_param(p, "S")));
            });
          });
        },
    .reference = bwd::reference,
    .inputs = bwd::inputs,
});

}  // namespace
}  // namespace stagecraft::examples
