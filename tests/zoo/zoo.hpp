// The bug zoo: small kernels that each make one realistic barrier-protocol mistake, next to
// the fixed twin that differs from it by exactly that mistake.
//
// Every kernel is built from one of the bundled examples (or a close cousin of one) by a single
// change, and its comment in zoo.cpp says what the user got wrong and how to fix it. The tests
// (test_zoo.cpp) prove that the interpreter reports each mistake as one diagnostic of the
// intended kind, and that the fixed twin runs clean under every policy.
#pragma once
#include <vector>

#include <stagecraft/host/tensor.hpp>
#include <stagecraft/interp/interp.hpp>
#include <stagecraft/ir/kernel.hpp>

namespace stagecraft::zoo {

enum class variant { buggy, fixed };

// ---- deadlock --------------------------------------------------------------------------------
ir::Kernel release_in_branch(variant v = variant::buggy);  // 2-arrival release done by one warpgroup only
ir::Kernel short_prologue(variant v = variant::buggy);     // add_one prefetching K-1 stages
ir::Kernel double_wait(variant v = variant::buggy);        // handoff consumer waiting once per arrival
ir::Kernel named_no_initial_arrive(variant v = variant::buggy);  // named-barrier ping-pong, no "empty" arrival before the first block
ir::Kernel warp_named_count(variant v = variant::buggy);  // two single warps' named barrier counting 128 threads, as a warpgroup's
ir::Kernel ticket_read_before_wait(variant v = variant::buggy);  // a consumer reading its fetch_add ticket before the slot's full barrier
ir::Kernel semaphore_never_signalled(variant v = variant::buggy);  // serial split-K, each slice signalling its own turn, not the next's
// ---- missed phase ----------------------------------------------------------------------------
ir::Kernel one_ring_barrier(variant v = variant::buggy);   // add_one with one barrier for the whole ring
ir::Kernel single_release(variant v = variant::buggy);     // handoff with one `consumed` barrier for two stages
// ---- over-arrival ----------------------------------------------------------------------------
ir::Kernel shared_barrier(variant v = variant::buggy);     // x and z tiles landing on an arrivals(1) barrier
// ---- tx underflow ----------------------------------------------------------------------------
ir::Kernel leader_only_multicast(variant v = variant::buggy);  // multicast issued by the cluster leader only
// ---- index out of range ----------------------------------------------------------------------
ir::Kernel ring_indexed_by_step(variant v = variant::buggy);   // full[runtime_index(j)] instead of full[stage]
ir::Kernel prefetch_past_end(variant v = variant::buggy);      // batched_square prefetching batch B
ir::Kernel out_ring_indexed_by_step(variant v = variant::buggy);  // out[runtime_index(j)] in scale_store
// ---- data race -------------------------------------------------------------------------------
ir::Kernel refill_while_storing(variant v = variant::buggy);    // add_one without wait_smem_to_gmem before the refill
ir::Kernel same_block_two_ctas(variant v = variant::buggy);     // scale_store writing y.block(0, j) from every CTA
ir::Kernel blocks_cross_slices(variant v = variant::buggy);     // slices packed (B * S, 64), S % 64 != 0: tail blocks overwrite the next slice's rows
ir::Kernel window_past_segment(variant v = variant::buggy);     // a ragged batch's output window ends at its last tile's end, not the segment's
ir::Kernel read_before_wait(variant v = variant::buggy);        // add_one computing before barrier_wait
ir::Kernel output_reuse_no_wait(variant v = variant::buggy);    // scale_store<1> rewriting its stage under the store
ir::Kernel one_consumer_releases(variant v = variant::buggy);   // two consumers, the refill waits for one of them
ir::Kernel splitk_early_read(variant v = variant::buggy);       // split-K rank 0 adds the peer's workspace partial before the cluster wait
ir::Kernel plain_store_accumulate(variant v = variant::buggy);  // split-K partials added into y with a plain load + store, not reduce_add
ir::Kernel read_after_reduce(variant v = variant::buggy);       // a CTA reads y after its TMA reduce-add, racing the other CTA's
ir::Kernel serial_without_wait(variant v = variant::buggy);     // serial split-K whose slices signal but never wait
ir::Kernel tma_store_then_generic_read(variant v = variant::buggy);  // split-K partials sent by TMA store, only .read waited before the arrive
// ---- missing fence ---------------------------------------------------------------------------
ir::Kernel no_proxy_fence(variant v = variant::buggy);     // add_one without commit_smem
ir::Kernel workspace_no_fence(variant v = variant::buggy);  // ordinary stores into GMEM read back by TMA, no commit_smem
ir::Kernel generic_store_then_tma_read(variant v = variant::buggy);  // split-K partials stored generically, TMA-loaded by rank 0, no commit_smem
ir::Kernel refill_over_generic_store(variant v = variant::buggy);  // in-place add_one refilled by TMA with no commit_smem
// ---- store pending at exit -------------------------------------------------------------------
ir::Kernel no_final_wait(variant v = variant::buggy);          // add_one without the last wait_smem_to_gmem(0)
ir::Kernel store_never_committed(variant v = variant::buggy);  // a TMA store never put in a bulk group
// ---- pipelines (zoo_pipelines.cpp) ----------------------------------------------------------
ir::Kernel early_release(variant v = variant::buggy);              // consumer releases a stage before reading it
ir::Kernel refill_released_too_early(variant v = variant::buggy);  // body reads the previous stage, delay_release 0
ir::Kernel producer_no_drain(variant v = variant::buggy);          // producer loads a step no consumer takes
// ---- poison read -----------------------------------------------------------------------------
ir::Kernel unzeroed_accumulator(variant v = variant::buggy);   // column-block sum into an SMEM accumulator
ir::Kernel stored_wrong_stage(variant v = variant::buggy);     // scale_store computing into one stage, storing another
ir::Kernel tail_rows_unwritten(variant v = variant::buggy);    // a partial last block computed for 32 of its 36 rows, stored whole

// ---- tensor cores (zoo_wgmma.cpp): wgmma's asynchrony -----------------------------------------
ir::Kernel refill_under_wgmma(variant v = variant::buggy);  // TMA refills A/B before the wgmma reading them is waited for
ir::Kernel acc_before_wait(variant v = variant::buggy);     // epilogue reads acc before the covering wgmma_wait
ir::Kernel wgmma_no_fence(variant v = variant::buggy);      // generic stores into A read by wgmma, no commit_smem
ir::Kernel wgmma_exit_pending(variant v = variant::buggy);  // a padding CTA exits with its wgmma group in flight
ir::Kernel release_before_wgmma_wait(variant v = variant::buggy);  // warp-specialized consumer releases its stage before wgmma_wait
ir::Kernel release_under_wait1(variant v = variant::buggy);  // after wgmma_wait(1), releases the stage whose group may still run
ir::Kernel scales_read_after_release(variant v = variant::buggy);  // blockwise fp8: stage released after the wgmma_wait, its A scales read after

// ---- Blackwell tensor cores (zoo_tcgen05.cpp): tcgen05's asynchrony and TMEM ------------------
ir::Kernel refill_before_commit(variant v = variant::buggy);     // stage freed by barrier_arrive, not the MMA's commit
ir::Kernel tmem_read_before_commit(variant v = variant::buggy);  // epilogue signalled by barrier_arrive, reads TMEM early
ir::Kernel mma_over_tmem_load(variant v = variant::buggy);       // next tile's MMA overwrites D the epilogue still reads
ir::Kernel acc_ring_overrun(variant v = variant::buggy);         // a ring's MMA takes back a stage the epilogue still reads
ir::Kernel commit_count(variant v = variant::buggy);             // `done` expects 2 arrivals, one commit arrives
ir::Kernel tmem_dealloc_pending(variant v = variant::buggy);     // the MMA warpgroup frees D without waiting for its MMAs
ir::Kernel tmem_use_after_dealloc(variant v = variant::buggy);   // an MMA into TMEM the epilogue has freed
ir::Kernel tmem_not_freed(variant v = variant::buggy);           // a CTA exits with its TMEM allocated
ir::Kernel multicast_refill_before_peer_commit(variant v = variant::buggy);  // a pair's commit frees a multicast stage in its own CTAs only
ir::Kernel multicast_peer_commit_one_arrival();  // both pairs' commits arrive, but the stage's barrier counts one
ir::Kernel tmem_a_store_race(variant v = variant::buggy);        // store_tmem into A's columns while the MMA reading them runs
ir::Kernel tmem_a_mma_before_store(variant v = variant::buggy);  // MMA reads A from TMEM without waiting for the store_tmem
ir::Kernel scales_not_waited(variant v = variant::buggy);        // the MMA reads scales whose tcgen05_copy_scales nobody waited for

// ---- attention (zoo_attention.cpp): warpgroups sharing softmax statistics, a V ring, a turn -----
ir::Kernel running_max_race(variant v = variant::buggy);        // rescaling warpgroup reads the running max while it is updated
ir::Kernel v_released_before_wait(variant v = variant::buggy);  // V stage released after P*V's commit, before its wgmma_wait
ir::Kernel exchange_before_barrier(variant v = variant::buggy); // row-reduction halves read before the exchange barrier's wait
ir::Kernel pingpong_skipped_turn(variant v = variant::buggy);   // a consumer skips its turn hand-off on a causally skipped block
ir::Kernel dq_plain_store(variant v = variant::buggy);          // attention_hopper_bwd with dQ stored by plain TMA stores, not reduced
ir::Kernel rescale_before_pv(variant v = variant::buggy);       // attention_blackwell's correction rescales O in TMEM under the P V writing it

// The whole zoo, for sweeps over every kernel.
struct entry {
  const char* name;            // the kernel's name (as in its diagnostics)
  interp::check expected;      // what the buggy kernel must be reported as
  ir::Kernel (*build)(variant);
  // Given every GMEM parameter's initial contents, writes what the fixed twin's outputs must hold.
  void (*reference)(std::vector<host_tensor>&);
  // Optional: rewrites the seeded inputs where some follow from others (zoo_dq_plain_store's LSE
  // and delta are the forward pass's), as kernel_entry::inputs does for registered kernels.
  void (*inputs)(std::vector<host_tensor>&) = nullptr;
};
std::vector<entry> const& all();
// The tensor-core exhibits: apart from all(), whose sweeps also run every kernel through the
// code generator's host backend. Their fixed twins' outputs come from wgmma, so they are
// compared with interp::tolerance_of, not bit for bit.
std::vector<entry> const& mma_all();
// The Blackwell exhibits, compared like mma_all()'s.
std::vector<entry> const& tcgen05_all();
// The attention exhibits. zoo_v_released_before_wait's and zoo_pingpong_skipped_turn's outputs
// come from wgmma (MMA tolerance); the other two are compared bit for bit.
std::vector<entry> const& attention_all();

}  // namespace stagecraft::zoo
