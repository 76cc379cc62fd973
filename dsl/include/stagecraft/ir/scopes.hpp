// The memory-model scope of a cluster barrier's arrivals and waits: .cluster, which orders
// everything the arriving thread did for every peer CTA (and costs a MEMBAR.GPU before each
// remote arrive and an L1 invalidation, CCTL.IVALL, after each wait), or .cta, which CUTLASS's
// pipelines use for a consumer that only tells peers "the tensor core has finished reading".
//
// Both backends take the scope from here, so what runs on the GPU is what the interpreter
// models (docs/interpreter.md, "Barrier scopes"): a .cta arrival on a peer CTA's barrier carries
// only the completed asynchronous accesses the arriving thread knows of (wgmma/tcgen05 operand
// reads it has waited for, TMA loads it has seen land, bulk stores it waited to have read SMEM),
// never its own or anyone's generic loads and stores. A kernel for which that is too weak shows
// a race there, exactly as it would misbehave on the GPU.
#pragma once

#include <string>

#include "kernel.hpp"

namespace stagecraft::ir {

struct barrier_scope {
  bool cta = false;  // true: .release.cta arrivals and .acquire.cta waits; false: .cluster
  std::string why;   // the rule that decided, for comments in the generated code and reports
};

// The scope of a cluster barrier allocation. .cta unless the kernel
//   (a) stores GMEM generically anywhere, or loads GMEM generically that the kernel also writes
//       (a peer may read it after the wait, through an L1 only a cluster-scope acquire
//       invalidates; inputs that are only read do not count),
//   (b) loads or stores generically an SMEM allocation a peer CTA's asynchronous operation
//       touches (a multicast copy's destination, an operand of a cta_group::2 MMA),
//   (c) waits for bulk stores' GMEM writes (wait_smem_to_gmem without read_only) at a point that
//       may precede an arrival on the barrier (earlier in the body, or in a loop around both):
//       publishing those writes to a peer is what a .cluster release is for, or
//   (d) reads (tcgen05.ld) the TMEM a cta_group::2 MMA writes at a point that may precede an
//       arrival on the barrier: the other CTA's issuer overwrites it after the wait (the
//       persistent pair GEMM's accumulator hand-back), and a .cta release carries no completed
//       TMEM read to another CTA.
// Ordinary (CTA) barriers are always .cta; for them the result says so.
barrier_scope cluster_barrier_scope(Kernel const& k, int alloc);

}  // namespace stagecraft::ir
