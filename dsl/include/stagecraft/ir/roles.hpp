// Roles: who runs what inside a CTA.
//
// thread_id() is the role: threads(3_c) declares three roles of a warpgroup each (128 threads),
// threads(warpgroup, warp, warp) one warpgroup and two single warps. Roles are laid out in order
// from warp 0, so role r's warps are first_warp(k, r) .. + role_warps(k, r) - 1. A warpgroup role
// starts on a warpgroup boundary (a multiple of 4 warps): wgmma, setmaxnreg and the TMEM lane
// quarter a warp of tcgen05.ld reaches are the hardware warpgroup's, not the role's.
//
// A warp is what a Blackwell TMA producer or MMA issuer needs (CUTLASS's sm100 kernels give each
// one warp): it waits on barriers, issues copies, arrivals and tcgen05 MMAs from one elected
// thread. What needs a warpgroup is refused in a warp role: wgmma (.sync.aligned over 128
// threads), tile math (a tile's elements are spread over a warpgroup's 128 lanes) and TMEM loads
// (a warp reaches only its quarter of TMEM's 128 lanes). The front end checks it at compile time
// for branches on thread_id() it can read (if_(thread_id() == 1_c, ...)); the verifier for every
// branch, from stmt_roles below.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "stagecraft/ir/kernel.hpp"

namespace stagecraft::ir {

inline constexpr int max_warps = 32;  // 1024 threads per CTA
inline constexpr int max_roles = max_warps;

// Role r's warps: 1 (a warp) or 4 (a warpgroup).
inline int role_warps(Kernel const& k, int r) { return k.role_warps.empty() ? 4 : k.role_warps[static_cast<std::size_t>(r)]; }
inline int role_threads(Kernel const& k, int r) { return 32 * role_warps(k, r); }
inline int first_warp(Kernel const& k, int r) {
  int w = 0;
  for (int i = 0; i < r; ++i) w += role_warps(k, i);
  return w;
}
inline int block_warps(Kernel const& k) { return first_warp(k, k.roles); }
// blockDim.x of the generated kernel.
inline int block_threads(Kernel const& k) { return 32 * block_warps(k); }
// Whether some role is a single warp (the generated code then has a `role` of its own).
inline bool has_warp_roles(Kernel const& k) {
  for (int w : k.role_warps)
    if (w == 1) return true;
  return false;
}
// "warpgroup 1", "warp 4 (role 2)": a role as messages name it, by where it runs.
std::string role_name(Kernel const& k, int r);
// "wg1", "warp4": a role's short name (timeline lanes, schedule choices).
std::string role_label(Kernel const& k, int r);

// Bit r: role r. Kernels have at most max_roles (32) roles.
using role_set = std::uint32_t;
inline role_set all_roles(Kernel const& k) { return k.roles >= 32 ? ~role_set{0} : (role_set{1} << k.roles) - 1; }
inline role_set warp_role_set(Kernel const& k) {
  role_set s = 0;
  for (int r = 0; r < k.roles; ++r)
    if (role_warps(k, r) == 1) s |= role_set{1} << r;
  return s;
}

// Per statement, the roles that may run it: every role at the body, and under an if_ the roles
// for which its condition may be true (then) or false (else). A condition is decided per role
// where it depends on thread_id() and constants alone (loop variables, program_id and the like
// leave both branches to every role that reaches the if_). Conservative: a set may hold a role
// that never gets there at run time, never the other way round. Needs a verified tree (or one
// whose expressions and statements are in range): backends and the verifier's later passes.
std::vector<role_set> stmt_roles(Kernel const& k);

}  // namespace stagecraft::ir
