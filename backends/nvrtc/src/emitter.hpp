// The code generator's emitter: one ir::Kernel -> CUDA C++ (generate()). Internal to the backend.
// Its members are defined by engine, as the interpreter's are: codegen.cpp (layout, index
// expressions, tile values, TMA, barriers, statements), wgmma.cpp (the Hopper tensor core, its
// register fragments and the stores that walk them), tcgen05.cpp (Blackwell's tensor core and
// TMEM, through tcgen05_gen::context).
//
// ir::Kernel -> CUDA C++.
//
// Execution model of the generated code: blockDim.x = 128 x warpgroups; thread t belongs to
// warpgroup t / 128. The statement tree runs in every thread; ops the hardware wants issued
// once per warpgroup (TMA, arrivals, bulk groups) are issued by lane 0, after a warpgroup
// barrier (bar.sync wg+1, 128) where other lanes made generic memory accesses since the last
// one, so every thread's earlier accesses are done. Each thread keeps
// one parity bit per barrier element: the implicit phases of DESIGN.md section 3. Tile math is
// distributed over the warpgroup's 128 threads, element i to lane i % 128, except where a
// register accumulator is involved: an accumulator is a per-thread array in the wgmma D fragment
// layout (ir::wgmma::accumulator_element), and a store that writes or reads one walks that
// fragment, every thread computing the elements it holds. An f16 accumulator packs the
// fragment's element pairs (2j, 2j + 1) into 32-bit register j, low half first, as wgmma's .f16
// D does.
#pragma once
#include "stagecraft/nvrtc/codegen.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <numeric>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "prelude.hpp"
#include "stagecraft/ir/banks.hpp"
#include "stagecraft/ir/swizzle.hpp"
#include "stagecraft/ir/roles.hpp"
#include "stagecraft/ir/scopes.hpp"
#include "stagecraft/ir/tile_view.hpp"
#include "stagecraft/ir/udiv_magic.hpp"
#include "stagecraft/ir/wgmma.hpp"
#include "tcgen05.hpp"

namespace stagecraft::nvrtc::detail {

inline const char* ctype(ir::DType t) {
  switch (t) {
    case ir::DType::f32: return "float";
    case ir::DType::f16: case ir::DType::bf16: return "unsigned short";
    case ir::DType::i32: return "int";
    case ir::DType::u32: return "unsigned";
    case ir::DType::i8: return "signed char";
    case ir::DType::u8: case ir::DType::e2m1x2: case ir::DType::ue4m3: case ir::DType::e2m3: case ir::DType::e3m2: case ir::DType::e2m1: return "unsigned char";
    case ir::DType::e4m3: case ir::DType::e5m2: return "unsigned char";  // bit patterns, as f16/bf16 are
    case ir::DType::pred: return "unsigned char";  // never in memory (the verifier's rule); named for completeness
  }
  return "?";
}

// The generated function's C++ name. A kernel may be called anything that is a C identifier,
// including names the generated code or CUDA itself declares at global scope (`sc`, `smem`,
// `expf`, `min`, `threadIdx`, `main`, `int`), so the symbol is never the bare kernel name: a
// prefix no CUDA header uses keeps every kernel name valid, and profilers still show the name.
inline std::string entry_name(std::string const& kernel) { return "stagecraft_" + kernel; }

// An f32 literal that reads back to exactly the same float.
inline std::string float_literal(double v) {
  const float f = static_cast<float>(v);
  if (!std::isfinite(f)) return fmt::format("__int_as_float(0x{:08x})", std::bit_cast<std::uint32_t>(f));
  std::string t = fmt::format("{:.9g}", f);
  if (t.find_first_of(".e") == std::string::npos) t += ".0";
  return t + "f";
}

inline std::int64_t product(std::vector<std::int64_t> const& v) { return std::accumulate(v.begin(), v.end(), std::int64_t{1}, std::multiplies<>()); }

class emitter {
 public:
  emitter(ir::Kernel const& k, codegen_options const& o) : k_(k), o_(o) {}

  generated run();

 private:
  [[noreturn]] void unsupported_op(ir::StmtId s, std::string const& what) const;

  // ---- shared memory layout: ir::smem_offsets, shared with the verifier and every backend ----
  void layout();

  // ---- tiling(TR, TC) SMEM: generic element accesses and TMA copies --------------------------
  bool tiled(int alloc) const { return k_.allocs[alloc].kind == ir::AllocKind::smem && !k_.allocs[alloc].tiling.empty(); }
  bool tiled_ref(ir::RefId rid) const { return k_.refs[rid].base == ir::RefBase::alloc && tiled(k_.refs[rid].id); }
  // Element offset (a C++ expression) of element `e` of a view of a tiled allocation: the view's
  // logical start plus e, through sc::tiled (ir/swizzle.hpp, the interpreter's layout too).
  std::string tiled_element(ir::RefId rid, std::string const& e) const;
  // A TMA copy moves a tiled view one TR x TC box per tile (the hardware's box is one dense,
  // swizzled run): the view must be whole tiles of a whole (rows, columns) slab, and the GMEM
  // block plain rank 2, so tile t lands at slab + t tiles and at block + (row, column) of t.
  bool tma_tiled(ir::StmtId id, ir::RefId sref, ir::RefId gref) const;
  // Tiled SMEM is addressed element by element (element()) and copied by TMA; an MMA or TMEM
  // operand reads a descriptor of the layout, which the generator does not build for tiling.
  void tiled_uses() const;

  // ---- TMA descriptors: one per (parameter, box, swizzle) ------------------------------------
  int map_for(ir::RefId gref, ir::RefId sref, std::vector<std::int64_t> box);
  void collect_maps();
  // TMA needs 128-byte aligned SMEM addresses, and a swizzled view must not start inside a
  // swizzle pattern (8 rows of its width): the front end's rule, for IR built by hand.
  static std::int64_t tma_alignment(ir::Alloc const& al) { return al.swizzle ? 8 * al.swizzle : 128; }
  void tma_smem_aligned(ir::StmtId s, ir::RefId sref) const;
  int group_size(std::vector<int> const& axes) const;

  // ---- kernel head and tail --------------------------------------------------------------------
  std::string header() const;
  std::string footer() const;

  // ---- value ranges of index expressions -------------------------------------------------------
  // Index expressions are 64-bit (the IR's integers), but a ring slot `g % S` or a tile `t / n`
  // of small non-negative values costs a dozen 64-bit instructions where 32-bit unsigned
  // arithmetic needs three. So each expression's range is bounded from what is static: grid and
  // cluster extents, warpgroups, constants and the bounds of the loops around it; where both
  // operands of / or % are known to lie in [0, 2^31), the division is emitted in 32 bits (the
  // same value), and a loop whose bounds fit in an int counts in one.
  struct interval {
    std::int64_t lo, hi;
  };
  using range_t = std::optional<interval>;
  static range_t make_range(__int128 lo, __int128 hi);
  static bool fits_u31(range_t r) { return r && r->lo >= 0 && r->hi <= std::numeric_limits<std::int32_t>::max(); }
  static bool fits_i32(range_t r);
  range_t range(ir::ExprId id) const;
  range_t compute_range(ir::ExprId id) const;
  // Every loop variable's range, outer loops first (a loop's bounds name only the variables of
  // the loops around it); the memo is dropped as each one is learnt.
  void loop_ranges();

  // ---- index expressions (64-bit) --------------------------------------------------------------
  std::string expr(ir::ExprId id) const;

  // ---- memory references -----------------------------------------------------------------------
  // Flat index of a barrier element (within all barrier elements of the CTA) and its address.
  std::string bar_index(ir::RefId rid) const;
  std::string bar_addr(ir::RefId rid) const;
  // ---- register accumulators -------------------------------------------------------------------
  bool is_acc(ir::RefId rid) const;
  // f16 and bf16 accumulators hold two elements per 32-bit register (wgmma's .f16 D; a bf16 one
  // is never a D, only a register tile, e.g. attention's P kept for the next P V as wgmma's A).
  bool acc_f16(std::size_t a) const { return k_.allocs[a].dtype == ir::DType::f16 || k_.allocs[a].dtype == ir::DType::bf16; }
  // e4m3 and e5m2 register tiles (never a D) hold four elements per register, in the order the
  // quad's gather into wgmma's 8-bit A takes them (sc::acc8_word: D registers 8p + 2h, + 1,
  // + 4, + 5 in register 2p + h), so A from such a tile is sc::quad_gather8 of its registers.
  bool acc_f8(std::size_t a) const { return ir::dtype_is_fp8(k_.allocs[a].dtype); }
  // sc::acc_f16 / sc::acc_bf16 (a read of element e) and the packing of a pair into one register.
  std::string acc_read(std::size_t a, std::string const& e) const;
  std::string acc_pack(std::size_t a, std::string const& lo, std::string const& hi) const;
  // 32-bit registers per thread: N/2 elements per m64 block, two of them per register in f16 and bf16.
  std::int64_t acc_registers(std::size_t a) const;
  // The accumulator a store walks the fragment of: its destination, else the first it loads; -1: none.
  int fragment_acc(ir::Stmt const& s) const;
  // A wgmma whose A from registers is computed from SMEM or GMEM by every lane.
  bool reads_memory_into_a(ir::Stmt const& s) const;
  // A store that writes or reads SMEM or GMEM (not only accumulator registers).
  bool touches_memory(ir::Stmt const& s) const;
  // Empty asm statements that pin every register of accumulator a at this point of the program.
  void pin_registers(int a, std::string const& ind, std::string& out) const;

  // Byte offset of an SMEM view's first element within its allocation (a sub-view's origin included).
  std::string view_offset(ir::RefId rid) const;
  // The same in units of `unit` bytes (1: elements), as a long long expression.
  std::string view_start(ir::RefId rid, std::int64_t unit) const;
  // Element offset (a C++ expression) of element `i` (row-major over the view's shape) from the
  // view's first element: `i` itself for a whole view, the parent's strides for a sub-view.
  // A sub-view's dimensions as (elements inside it, extent, stride in the parent), innermost
  // first, extent-1 dimensions left out: element i sits at sum((i / inner) % extent * stride).
  struct view_dim {
    std::int64_t inner, extent, stride;
  };
  std::vector<view_dim> view_dims(ir::RefId rid) const;
  std::string view_element(ir::RefId rid, std::string const& i) const;
  // The same on the host, for a known i (count_banks).
  std::int64_t view_element(ir::RefId rid, std::int64_t i) const;

  // Whether element `i` of a masked GMEM tile lies inside its array (every dimension's
  // coordinate below the extent, the block's origin included) and its window's rows; "" for
  // other views.
  std::string inside(ir::RefId rid, std::string const& i) const;
  // Whether vectors of v elements along a GMEM block's rows stay v-aligned: rows of a multiple
  // of v, and no window moving a rank-1 array's start by a run-time number of elements.
  bool rows_keep_vectors(ir::RefId rid, std::int64_t v) const;
  // A parameter's extent along d in generated code: the literal, or for a run-time extent the
  // kernel argument that carries it (the code then serves every value: the JIT cache key has none).
  std::string param_extent(ir::Param const& p, std::size_t d) const;
  // Where a GMEM block starts along dimension d, in elements: a window's first row plus the
  // block's coordinate times `unit` (its footprint there).
  std::string block_origin(ir::RefId rid, std::size_t d, std::int64_t unit) const;
  // Whether a view's elements need a bounds predicate: a masked GMEM tile that does not divide
  // its array. One that divides it lies wholly inside or wholly outside, and wholly outside is
  // the interpreter's index-out-of-range, so it compiles as a plain tile (vectors and pairs too):
  // a kernel may mask every tile and pay only where the sizes leave a tail.
  bool predicated(ir::RefId rid) const;
  // `element(rid, i) = rhs;`, a masked tile's under its bounds predicate (nothing outside is written).
  // In a reducing store (reduce_), the element is combined instead: sc::red_add(&element, rhs).
  std::string assign(ir::RefId rid, std::string const& i, std::string const& rhs) const;
  // The reduction of the store being generated (Stmt::n): every element goes through assign()
  // one at a time, as red.global instructions (no vectors, no pairs).
  ir::Reduce reduce_ = ir::Reduce::none;
  // Whether the store's reduction has a vector form: red.global.add.v2/.v4.f32 (sm_90 and up).
  bool vector_reduction(ir::DType dt) const { return reduce_ == ir::Reduce::add && dt == ir::DType::f32; }
  struct reducing {
    emitter& g;
    reducing(emitter& gen, ir::Reduce r) : g(gen) { g.reduce_ = r; }
    ~reducing() { g.reduce_ = ir::Reduce::none; }
  };
  // The array coordinates of element `i` (row-major over the block) of a GMEM block, one C++
  // expression per dimension: the block's origin plus the element's place in it.
  std::vector<std::string> array_coords(ir::RefId rid, std::string const& i) const;
  // Element `i`'s offset in its GMEM parameter (a long long expression).
  std::string param_offset(ir::RefId rid, std::string const& i) const;
  // Element `i` (a C++ expression) of a view, as an lvalue of its storage type.
  std::string element(ir::RefId rid, std::string const& i) const;
  // The shared-window address of element `i` of an SMEM view (an unsigned expression): the
  // bytes element() names, for an instruction that takes addresses (stmatrix).
  std::string smem_address(ir::RefId rid, std::string const& i) const;

  // ---- tile values: element i, computed in f32 (floats) or 64-bit integers ---------------------
  std::string value(ir::ValueId id, std::string const& i) const;

  // (extent, product of the extents after it) of axis `axis` of `shape`: element i's coordinate
  // along the axis is (i / inner) % extent in a row-major tile.
  static std::pair<std::int64_t, std::int64_t> around_axis(std::vector<std::int64_t> const& shape, std::size_t axis);
  // A 32 x 32 SMEM tile of 4-byte elements, 128-byte swizzled: one side of transpose32.
  bool transpose32_view(ir::RefId rid) const;
  // store(out, f(transpose(load(in)))) with both views transpose32 tiles: written in the order of
  // ir/transpose_order.hpp. Any order is correct (each element is computed where it is stored);
  // this one is the one without bank conflicts.
  bool transpose32(ir::Stmt const& s) const;
  bool moves_elements(ir::ValueId id) const;
  // slice<1>(load(acc), c0, w) of an f32 (rows, W) accumulator with c0 and w multiples of 8: the
  // columns of whole 8-column groups of the D fragment, i.e. registers c0 / 2 .. (c0 + w) / 2 of
  // each m64 block. A fragment walk over the slice's (rows, w) shape reads register
  // mb * W / 2 + c0 / 2 + i where the whole accumulator's walk reads mb * W / 2 + i: the epilogue
  // stores C a column subtile at a time without moving a register. Returns c0, or -1.
  std::int64_t acc_column_slice(ir::ValueId id) const;
  // Inside a walk of an accumulator's fragment an accumulator element is this thread's register
  // at the walk's position, whatever index is asked for: an op that reads other elements than
  // the one it computes can take one only in the forms the D layout makes cheap: a row reduction
  // (fragment_fold), a row broadcast (the thread's own row register) and a column slice of whole
  // 8-column groups (acc_column_slice, above).
  bool reads_accumulator(ir::ValueId id) const;
  // Whether a (rows, cols) tile lines up with the D fragment rows being walked.
  bool in_row_walk(std::vector<std::int64_t> const& shape) const;
  [[noreturn]] void refuse_exchange(ir::ValueId id, const char* what) const;

  // The D fragment puts row r of an m64 block in the 4 lanes of one quad (lanes 4q .. 4q + 3 of
  // a warp), each holding n/4 of its columns in registers 4j + 2h + {0, 1} (h: which of the
  // thread's two rows). A row reduction folds the thread's registers in that order, then
  // combines the quad with two butterfly shuffles (xor 1, xor 2): every lane ends with the same
  // bits, since the combination is ((p0 + p1) + (p2 + p3)) in each, up to commutation. This is
  // another association than the interpreter's left-to-right fold: max and min agree bit for
  // bit; sums agree within the bound docs/codegen.md gives. rows_by_quad() checks the
  // description these register and lane numbers are read from.
  std::string fragment_fold(ir::Value const& v) const;
  // Checked on the one description: register i holds a row of half i / 2 % 2 (the row register
  // 2h holds); the lanes of a quad hold the same rows; the quad's registers of a row cover its
  // columns exactly once.
  static bool rows_by_quad();

  void loads_of(ir::ValueId id, std::vector<ir::ValueId>& out) const;

  int widest_load(ir::ValueId id) const;

  std::string store_conv(ir::DType dt, std::string const& x) const;

  // TMA coordinates (innermost first) of a GMEM block, plus an optional row offset (multicast).
  std::string coords(ir::RefId gref, std::string const& row_extra) const;

  // One TMA box per tile of a tiled slab (tma_tiled): tile t of the slab starts t tiles into it
  // and covers rows (t / per_row) * TR.. and columns (t % per_row) * TC.. of the GMEM block.
  template <class Line, class Issue>
  void tiled_boxes(ir::RefId sref, ir::RefId gref, Line const& line, Issue const& issue) const {
    auto const& m = k_.refs[sref];
    auto const& al = k_.allocs[m.id];
    auto const& g = k_.refs[gref];
    const std::int64_t rows = m.shape[0], cols = m.shape[1], tr = al.tiling[0], tc = al.tiling[1], per_row = cols / tc;
    line("  #pragma unroll");
    line(fmt::format("  for (int t = 0; t < {}; ++t) {{  // {} tiles of ({}, {})", rows / tr * per_row, rows / tr * per_row, tr, tc));
    line(fmt::format("    const int c[] = {{static_cast<int>({} + t % {} * {}), static_cast<int>({} + t / {} * {})}};", block_origin(gref, 1, g.shape[1]),
                     per_row, tc, block_origin(gref, 0, g.shape[0]), per_row, tr));
    line(fmt::format("    {}", issue(fmt::format("smem_base + {}u + {} + static_cast<unsigned>(t * {})", offsets_[m.id], view_offset(sref),
                                                   tr * tc * ir::dtype_bits(al.dtype) / 8))));
    line("  }");
  }

  // ---- warpgroup synchronisation between tile statements ----------------------------------------
  // A store is one warpgroup-wide op (the interpreter runs it atomically), but its elements are
  // spread over lanes by a vector width that depends on the dtypes and shapes involved, so two
  // stores may touch the same bytes from different lanes (RAW/WAR/WAW). A store that may follow
  // another without a warpgroup barrier in between gets one. after() is the "dirty" state after a
  // statement given the state before it (true: a store ran since the last barrier).
  bool after(ir::StmtId id, bool d) const;
  bool has_break(ir::StmtId id) const;
  bool may_dirty(ir::StmtId id) const;
  // State at a loop's head: entered with d, or coming back from the end of the body (fixpoint).
  // Memoised per (loop, d): each level calls after() on its body twice, which is exponential in
  // the nesting depth otherwise.
  bool loop_head(ir::StmtId id, bool d) const;
  bool hoists_sync(ir::StmtId id, bool d) const;
  bool may_meet(ir::StmtId id) const;
  // Lane-private stores need no barrier between them. In a warpgroup role, a store whose every
  // access is to memory its own thread owns (element `lane` of a (128) SMEM row vector, row
  // `lane` of a TMEM tile) cannot touch what another lane touched in an earlier store of that
  // kind: FA4's softmax (m', alpha, S := exp2, l, P, m per key block, every one lane-private) met
  // at the warpgroup's barrier before each of them, 5 bar.sync per block where the arrival after
  // them needs one. dirty_ keeps its meaning (a store since the last barrier: an arrival or TMA
  // issue still meets first); private_run_ says every such store was lane-private, in straight-line
  // code since the barrier (control flow that may store ends the run: stmt()).
  bool lane_private(ir::StmtId id) const;
  enum class lane_ctx { row, tile };  // element `lane` of (128), or row `lane` of (128, C)
  bool lane_private_value(ir::ValueId v, lane_ctx at) const;
  bool row_vector_ref(ir::RefId r) const;
  bool quiet(ir::StmtId id) const;  // only barrier waits (and control flow around them)
  template <class Line>
  void meet_before_store(ir::StmtId id, Line const& line) {
    const bool own = lane_private(id);
    if (dirty_ && !(own && private_run_)) {
      line(fmt::format("sc::wg_sync(wg);  // op #{}: an earlier store may have touched these bytes from other lanes", id));
      private_run_ = own;
    } else if (!dirty_) {
      private_run_ = own;
    }
    dirty_ = true;
  }

  // ---- wgmma.fence -------------------------------------------------------------------------------
  // The PTX ISA asks for a wgmma.fence before the first wgmma of a warpgroup and between ordinary
  // accesses to registers and a wgmma that uses them (accumulators across wgmmas of one shape are
  // ordered without it). touch_after() is the "touched" state after a statement given the state
  // before it (true: ordinary code read or wrote an accumulator since the last fence), the same
  // fixpoint over loops as after().
  bool touches_acc(ir::Stmt const& s) const { return s.op == ir::StmtOp::store && fragment_acc(s) >= 0; }
  bool touch_after(ir::StmtId id, bool t) const;
  bool touch_loop_head(ir::StmtId id, bool t) const;

  // store(acc, v), or a store whose value loads an accumulator: every thread computes the elements
  // of its own fragment, (64 * mb + row, col) for each m64 block mb and register i. Every operand
  // is addressed at that element, so all of them must have the accumulator's (M, N) shape.
  // The bank conflicts of a fragment store into SMEM: each lane's address as element() computes
  // it (view at index 0, the allocation's swizzle applied to its offset: smem_base is 1024-byte
  // aligned), instruction by instruction, for each of the four warps.
  void count_banks(ir::StmtId id, std::int64_t blocks, std::int64_t regs, int step, int width);
  // The bank conflicts of `accesses` store instructions per thread into SMEM view `rid`, `width`
  // bytes per lane: index(thread, a) is the view's flat index thread (0..127 of the warpgroup)
  // writes in its a-th instruction. Each lane's address is the one element() computes (view at
  // index 0, the allocation's tiling and swizzle applied: smem_base is 1024-byte aligned); the
  // worst of the four warps, all its instructions together.
  template <class Index>
  store_banks bank_count(ir::StmtId id, ir::RefId rid, std::int64_t accesses, int width, Index const& index) const {
    auto const& r = k_.refs[rid];
    auto const& al = k_.allocs[r.id];
    const int bytes = ir::dtype_bits(al.dtype) / 8;
    std::int64_t slab = 1;
    for (std::size_t d = r.index.size(); d < al.shape.size(); ++d) slab *= al.shape[d];
    store_banks b{.op = id, .target = ir::alloc_name(k_, r.id), .accesses = accesses, .width = width};
    b.slabs_aligned = slab * bytes % (al.swizzle ? 1024 : 128) == 0;
    for (int warp = 0; warp < 4; ++warp) {
      ir::wavefronts all;
      for (std::int64_t a = 0; a < accesses; ++a) {
        std::array<std::uint32_t, 32> addr{};
        for (int lane = 0; lane < 32; ++lane) {
          const std::int64_t f = index(32 * warp + lane, a);
          const std::int64_t at = tiled(r.id) ? ir::tiled_element(view_element(rid, f), al.shape.back(), al.tiling[0], al.tiling[1]) : view_element(rid, f);
          addr[static_cast<std::size_t>(lane)] = ir::swizzle_address(static_cast<std::uint32_t>(offsets_[r.id] + at * bytes), al.swizzle);
        }
        const auto w = ir::smem_wavefronts(addr, width);
        all.actual += w.actual, all.ideal += w.ideal;
      }
      b.wavefronts = std::max(b.wavefronts, all.actual);
      b.ideal = std::max(b.ideal, all.ideal);
    }
    return b;
  }

  void fragment_store(ir::StmtId id, int a, std::string const& ind, std::string& out);
  // stmatrix.sync.aligned.m8n8.x4.shared.b16 in a fragment store of 16-bit elements into SMEM:
  // per warp and 8 registers i .. i + 7 of an m64 block, the four 8 x 8 matrices (column group
  // i / 4 and i / 4 + 1, row half 0 and 1) in one instruction, where the 4-byte stores take four.
  // Lane 8 m + r gives the address of row r of matrix m; lane 4 r + k's register m is word k of
  // that row (the PTX ISA's stmatrix fragment). stmatrix_lane_row() is the element whose address
  // lane `thread` gives for the instruction at register i: the pair register i + 2 m of lane
  // 4 r of its warp holds that row's first two columns.
  static ir::wgmma::coord stmatrix_lane_row(int thread, int i);
  // Checked on the one description (ir::wgmma::accumulator_element): lane 4 r + k's pair in
  // register i + 2 m (i a multiple of 8) is columns 2 k, 2 k + 1 of the row stmatrix_lane_row
  // names for lane 8 m + r, which starts on a multiple of 8 columns.
  static bool stmatrix_fits_fragment();
  // Whether the fragment store of shape `shape` into SMEM view `rid` may go by stmatrix: 16-bit
  // elements, whole pairs of 8-column groups (the x4 form), and every row the instructions
  // address 16 contiguous bytes at a 16-byte aligned address wherever the view starts (the
  // addresses as element() computes them, tiling and swizzle applied, checked for every lane).
  bool stmatrix_layout(ir::RefId rid, std::vector<std::int64_t> const& shape) const;
  // The SMEM bank conflicts of the stmatrix instructions of a fragment store: per instruction a
  // 16-byte row from each lane's address, 8 lanes (one matrix) per 128-byte phase.
  void count_stmatrix_banks(ir::StmtId id, std::int64_t blocks, std::int64_t regs);
  // The body of a fragment walk by stmatrix: the four registers, this lane's row address, the instruction.
  void stmatrix_store(ir::StmtId id, std::int64_t regs, std::string const& ind, std::string& out);
  // What a pair store of 16-bit `dt` converts: x of cast<dt>(x) from f32 (one rounding either way).
  ir::ValueId pair_value(ir::ValueId value, ir::DType dt) const;
  // Row vectors spread along the columns of the fragment being walked (broadcast<1> of a (rows)
  // value: the softmax's rescale factor exp2(m - m'), a running max, 1 / l) depend on the row
  // only, so each is computed once per row of the thread (two per m64 block) into registers
  // before the walk, not once per element: without this, attention recomputed exp2(m - m') for
  // every one of a row's 32 elements per 64 columns. The bits are the same either way.
  template <class Line>
  void hoist_rows(ir::ValueId root, std::vector<std::int64_t> const& shape, Line const& line) {
    std::vector<ir::ValueId> found, stack{root};
    while (!stack.empty()) {
      const ir::ValueId id = stack.back();
      stack.pop_back();
      auto const& v = k_.values[id];
      if (v.op == ir::ValueOp::broadcast && v.scalar == 1 && v.shape == shape && k_.values[v.a].shape.size() == 1) {
        if (std::find(found.begin(), found.end(), id) == found.end()) found.push_back(id);
        continue;
      }
      for (auto c : {v.a, v.b, v.c})
        if (c != ir::none) stack.push_back(c);
    }
    for (auto id : found) {
      auto const& v = k_.values[id];
      const std::string name = fmt::format("row{}_", row_hoisted_.size());
      row_mb_ = "mb", row_half_ = "h", walk_rows_ = shape[0];
      // Element f / cols of the operand: the row, 64 mb + the thread's row h of the block.
      const std::string x = value(v.a, "(64LL * mb + sc::accumulator_element(lane, 2 * h).row)");
      line(fmt::format("    {} {}[2];  // tile value {} ({}), per row", ir::dtype_is_float(v.dtype) ? "float" : "long long", name, id,
                       ir::value_op_name(k_.values[v.a].op)));
      line("    #pragma unroll");
      line(fmt::format("    for (int h = 0; h < 2; ++h) {}[h] = {};", name, x));
      row_hoisted_[id] = name;
    }
    row_mb_.clear(), row_half_.clear();
  }
  // The operands a fragment walk of a store addresses at the element it is at (all but those
  // under a reduction or broadcast, which fragment_fold and the row registers place) must have
  // the walked shape. False: the destination is a row vector, walked by row_store.
  bool check_walk_operands(ir::StmtId id, int a, std::vector<std::int64_t> const& shape) const;
  // The operands a walk addresses at its element: loads, and column slices of an accumulator's
  // load (acc_column_slice), which the walk reads at a register offset.
  void direct_loads_of(ir::ValueId id, std::vector<ir::ValueId>& out) const;
  // A store of shape (M) that involves an accumulator: every thread computes the rows its D
  // fragment holds, two per m64 block; the four lanes of a quad compute the same row (the
  // shuffles of a row reduction need all of them), and one of them writes it to memory.
  void row_store(ir::StmtId id, int a, std::string const& ind, std::string& out);
  // Whether accumulator_element puts register i + 1 right of register i (i even) in every thread:
  // checked on the one description rather than assumed.
  static bool pairs_adjacent();

  // The register of accumulator a (shape (M, n_acc)) that holds element i of the k16 step ks's A
  // fragment in every thread, if one does: what lets P = f(S) feed P * V without a shuffle.
  int a_from_accumulator(std::int64_t n_acc, int i, std::int64_t ks) const;
  int packed_a_source(ir::ValueId top, ir::DType a_type) const;
  // The store of a value into an 8-bit register tile: a register (four elements) at a time.
  void packed8_store(ir::StmtId id, int a, std::int64_t regs, std::string const& ind, std::string& out);
  void end_fragment_walk(std::string const& ind, std::string& out);
  std::string fp8_pair(ir::DType dt, std::string const& lo, std::string const& hi) const;

  // The row (0 or 1) of the thread's D fragment rows that holds A-from-registers element i, in
  // every thread; -1: none does.
  static int a_row_half(int i);

  // The four registers of A from registers for m block mb, k step ks of wgmma `id`.
  void register_a(ir::StmtId id, ir::wgmma::plan const& p, std::int64_t mb, std::int64_t ks, std::string& out, std::string const& ind);
  // The same for 8-bit A (k32 steps): computed where the D fragment holds each element, packed
  // in pairs, then gathered from the quad (sc::quad_gather8).
  void register_a8(ir::StmtId id, ir::wgmma::plan const& p, std::int64_t mb, std::int64_t ks, std::string& out, std::string const& ind,
                   std::string const& name = "ra");
  // Consecutive wgmmas in a seq from `i` with the same 8-bit A from registers, computed from
  // accumulators only and none of them writing one it reads (fp8 attention's P V over D's
  // 64-column chunks): how many (0 or 1: nothing to share). Their A registers are gathered once.
  std::size_t shared_a8_run(std::vector<ir::StmtId> const& body, std::size_t i) const;
  bool same_value(ir::ValueId a, ir::ValueId b) const;
  // The A-register arrays a wgmma reads ("ra": its own, declared in its block; another prefix:
  // gathered once before a run of them, shared_a8_run).
  std::map<ir::StmtId, std::string> a_regs_;
  std::string a_regs_of(ir::StmtId id) const {
    auto it = a_regs_.find(id);
    return it == a_regs_.end() ? "ra" : it->second;
  }
  // Whether sc::quad_gather8's lanes and halves deliver a_element8's elements from the D fragment
  // (accumulator_element), in every thread: checked on the descriptions rather than assumed.
  static bool quad_gather8_matches();

  void emit_wgmma(ir::StmtId id, std::string const& ind, std::string& out);

  // ---- statements ------------------------------------------------------------------------------
  void stmt(ir::StmtId id, int depth, std::string& out);
  // ---- warp specialization ---------------------------------------------------------------------
  // `if (thread_id == c) ...` whose branch only issues TMA loads and waits on and arrives at
  // barriers: the producer of a warp-specialized pipeline.
  bool data_mover(ir::StmtId id) const;
  bool producer_branch(ir::Stmt const& s) const;
  // Registers per thread for the producer and for everyone else, 0: leave as is. The SM's 64 K
  // registers are shared: 128 x 24 for the producer (TMA issue and barrier waits fit; FA3 gives
  // its producer 24 beside two consumers too), the rest split evenly (multiples of 8, as
  // setmaxnreg wants): 240 for two consumer warpgroups, where 40 left them 232 and
  // attention_hopper D=256 causal spilled 64 bytes. Only with three or more warpgroups: with two,
  // ptxas may already give each thread 255, and an "inc" below the current count is undefined.
  // The watchdog's bounded waits (%globaltimer, the report's printf) take the producer past 40
  // (ws_copy's spilled once setmaxnreg took effect), so it gets 56 there.
  std::pair<int, int> register_split() const;

  // Lane 0 issues TMA copies and arrivals for its warpgroup, after the other lanes' generic
  // accesses (stores, and the loads inside them) are done: a refill must not overtake a read, an
  // arrival must not release a stage still being read, a TMA store must not read unwritten
  // bytes. With no such access since the last warpgroup barrier (dirty_ false) the barrier would
  // protect nothing: wgmma reads are complete once lane 0's own wgmma_wait has returned, and
  // barrier waits are every lane's own.
  // TMA loads and arrivals carry no per-thread state (bulk groups do: TMA stores, their commits
  // and waits stay with lane 0), so they are issued by the elected thread (tcgen05.hpp).
  // In a role of one warp (ir/roles.hpp) the warp meets at __syncwarp and its elected lane issues
  // (`lane` counts within the role, so lane 0 is the warp's first); a statement that roles of
  // both kinds reach meets at the running role's own.
  std::string issuer() const;
  std::string role_sync() const;
  template <class Line>
  void sync_before_issue(Line const& line) const {
    if (dirty_) line(role_sync());
  }
  // A store into accumulator registers from accumulator registers reads and writes no lane's
  // memory but its own, so it needs no barrier and leaves the dirty state as it found it (a
  // barrier there would run in every key block of attention's loop, since its softmax stores
  // follow the previous block's stores). Any other store meets at the barrier when dirty and
  // leaves the state dirty. after() mirrors this.
  template <class Line>
  void sync_if_touches_memory(ir::Stmt const& s, ir::StmtId id, Line const& line) {
    if (!touches_memory(s)) return;
    if (dirty_) line(fmt::format("sc::wg_sync(wg);  // op #{}: an earlier store may have touched these bytes from other lanes", id));
    dirty_ = true;
  }
  void emit(ir::StmtId id, int depth, std::string& out);

  // commit_smem() fences GMEM too (DESIGN.md, docs/interpreter.md): needed only where a TMA copy
  // touches a parameter that ordinary stores also write; elsewhere the SMEM-only fence is enough.
  bool gmem_cross_proxy() const;

  tcgen05_gen::context tc_context();
  bool smem_vectors(ir::RefId rid, std::int64_t v) const;
  void count_row_banks(ir::StmtId id, ir::RefId rid, std::int64_t n, std::int64_t v);

  ir::Kernel const& k_;
  codegen_options o_;
  bool tc_ = false;  // tensor memory or tcgen05 ops: tcgen05.cpp's hooks apply
  tcgen05_gen::tmem_plan tmem_;
  std::vector<std::int64_t> offsets_, bar_first_;
  std::vector<ir::barrier_scope> scopes_;  // per allocation: the scope of its arrivals and waits
  std::vector<store_banks> banks_;         // the fragment stores' bank conflicts (count_banks)
  std::vector<range_t> var_range_;         // per loop variable: its values, when static
  mutable std::vector<std::pair<bool, range_t>> range_memo_;  // per expression: (known, range)
  // A barrier array as comments and the watchdog's report name it: the user's name, else b<N>
  // (cluster barriers included, as this backend has always printed them).
  std::string bar_label(int alloc) const;
  std::int64_t smem_end_ = 0, bar_elements_ = 0;
  std::vector<tensor_map_spec> maps_;
  std::map<int, int> map_of_;
  std::map<ir::ValueId, std::string> leaf_override_;  // loads already read as 16-byte vectors
  mutable int reduction_depth_ = 0;  // names the variables of nested reductions apart
  mutable std::map<std::pair<ir::StmtId, bool>, char> loop_head_memo_;  // 0 unknown, 1 false, 2 true
  mutable std::map<ir::StmtId, char> hoist_memo_;  // hoists_sync(id, true), the same way
  mutable std::map<std::pair<ir::StmtId, bool>, char> touch_head_memo_;  // the same for acc_touched_
  bool acc_touched_ = true;          // ordinary code touched accumulator registers since the last wgmma.fence
  mutable std::string fragment_index_;  // inside a fragment walk: the register index of its element
  mutable std::string walk_reg_;        // inside fragment_store's walk: its register within the block ("i", "i + 1")
  // Inside fragment_store's walk: the (row, column) of the flat indices it passes ("f", "(f + 1)"),
  // and the shape walked.
  std::map<std::string, std::pair<std::string, std::string>> walk_coords_;
  // The (row, column) of flat index i inside such a walk, when `shape` is the 2-D shape walked;
  // null elsewhere (then the flat index's division and modulo give them).
  std::pair<std::string, std::string> const* walk_coords(std::string const& i, std::vector<std::int64_t> const& shape) const;
  std::vector<std::int64_t> walk_shape_;
  // Inside a walk of the D fragment's rows (a store's fragment or row walk, a wgmma's A): the
  // m64 block and the thread's row (0 or 1) of the element, as C++ expressions, and the rows walked.
  std::string row_mb_, row_half_;
  std::int64_t walk_rows_ = 0;
  std::map<ir::ValueId, std::string> row_hoisted_;  // broadcast row vectors computed before the walk (hoist_rows)
  bool dirty_ = false;  // a store ran since this warpgroup's last sc::wg_sync (see after())
  bool private_run_ = false;  // every store since that barrier was lane_private (meet_before_store)
  bool one_warp_ = false;  // inside a data mover's branch, which one warp of its warpgroup runs (producer_branch)
  std::vector<ir::role_set> roles_;  // per statement: the roles that may run it (ir::stmt_roles)
  ir::role_set warp_roles_ = 0;      // the roles of one warp
  ir::StmtId cur_ = ir::none;        // the statement being emitted
  bool elected_ = false;             // inside a block the elected thread runs (tcgen05 issue runs)
  // Emits a sequence's statements; tcgen05 MMAs and commits one after another run in one block of
  // the elected thread (one elect per K-tile, not one per op).
  void emit_seq(ir::Stmt const& s, int depth, std::string& out);
  std::vector<op_span> spans_;  // offsets into the body until run() places them in the source
};

}  // namespace stagecraft::nvrtc::detail
