// emit_pipeline: a K-deep TMA pipeline over a grid of steps, built from the ops of the catalog
// (DESIGN.md section 6). Both backends therefore run it without knowing it exists.
//
//   emit_pipeline<K>(steps, full,                       // full: K barriers, one arrival per input
//       ins(in(x, xs, [&](auto j) { return x.block(row, j); }),
//           in(z, zs, [&](auto j) { return z.block(row, j); }, delay_release<1>)),
//       outs(out(y, ys, [&](auto j) { return y.block(row, j); })),
//       [&](auto j, auto x_view, auto z_view, auto y_view) { return store(y_view, load(x_view) + load(z_view)); });
//
// Schedule, with s = stage<K>(j) the only stage index anywhere:
//   prologue  load steps 0..K-1 of every input
//   step j    wait full[s]; wait until the output stage s is free (at most K-1 store groups
//             pending); body; fence; store the outputs (one bulk group); refill every input's
//             stage of step j - d with step j - d + K, where d is that input's delay_release
//   epilogue  store every out_once buffer (set to its init before the prologue), wait for every store
// An input's stage stays untouched for d steps after its own step (delay_release = d).
#pragma once
#include <array>
#include <utility>
#include "stagecraft/memory/barrier.hpp"
#include "stagecraft/ops/barrier_ops.hpp"
#include "stagecraft/ops/copy.hpp"
#include "stagecraft/ops/stmt.hpp"

namespace stagecraft {

template <long long D>
struct delay_release_t {
  static constexpr long long value = D;
};
template <long long D>
inline constexpr delay_release_t<D> delay_release{};

template <class Ring, class Map, long long D>
struct in_spec {
  Ring ring;  // SMEM ring: (K, block...)
  Map map;    // step -> GMEM block
  src_loc loc;  // of the in(...): where this input's copies are reported
  static constexpr long long delay = D;
};
template <class Ring, class Map>
struct out_spec {
  Ring ring;
  Map map;
  src_loc loc;
  static constexpr bool once = false;
};
// An output whose block does not change between steps: one SMEM buffer (no stage dimension),
// optionally set to `init` before the first step (a carried accumulator), stored once after the
// last step.
template <class Buffer, class Block, class Init>
struct out_once_spec {
  Buffer ring;  // the buffer (named ring so the checks and views treat specs alike)
  Block block;
  Init init;
  src_loc loc;
  static constexpr bool once = true;
};
struct no_init {};

template <class Array, class Ring, class Map, long long D = 0>
auto in(Array const&, Ring const& ring, Map map, delay_release_t<D> = {}, src_loc loc = src_loc::current()) {
  return in_spec<Ring, Map, D>{ring, map, loc};
}
template <class Array, class Ring, class Map>
auto out(Array const&, Ring const& ring, Map map, src_loc loc = src_loc::current()) {
  return out_spec<Ring, Map>{ring, map, loc};
}

template <class Array, class Buffer, class Block, class Init = no_init>
auto out_once(Array const&, Buffer const& buffer, Block const& block, Init init = {}, src_loc loc = src_loc::current()) {
  return out_once_spec<Buffer, Block, Init>{buffer, block, init, loc};
}

template <class... S>
struct spec_list {
  hana::tuple<S...> specs;
  static constexpr std::size_t size = sizeof...(S);
};
template <class... S>
auto ins(S const&... s) {
  return spec_list<S...>{hana::make_tuple(s...)};
}
template <class... S>
auto outs(S const&... s) {
  return spec_list<S...>{hana::make_tuple(s...)};
}

namespace detail {
template <long long K, class Ring>
constexpr bool check_ring() {
  if constexpr (kind_of<Ring> != operand_kind::smem) {
    STAGECRAFT_ERROR_T(Ring, "emit_pipeline: every in(...) and out(...) needs a SMEM ring as its second argument");
    return false;
  } else if constexpr (Ring::static_dims::rank < 2 || Ring::static_dims::values[0] != K) {
    STAGECRAFT_ERROR("emit_pipeline: a ring must have max_concurrent_steps stages in its first dimension",
                     "emit_pipeline: a ring of shape " << typename Ring::static_dims{} << " cannot hold " << K
                                                       << " concurrent steps: its first dimension must be " << K);
    return false;
  } else {
    return true;
  }
}

template <long long K, class Spec>
constexpr bool check_out() {
  if constexpr (Spec::once) {
    if constexpr (kind_of<decltype(Spec::ring)> != operand_kind::smem)
      STAGECRAFT_ERROR_T(Spec, "emit_pipeline: out_once(...) needs a SMEM buffer as its second argument");
    return kind_of<decltype(Spec::ring)> == operand_kind::smem;
  } else {
    return check_ring<K, decltype(Spec::ring)>();
  }
}

template <long long K, class Spec>
constexpr bool check_in() {
  if constexpr (!check_ring<K, decltype(Spec::ring)>()) {
    return false;
  } else if constexpr (Spec::delay < 0 || Spec::delay >= K) {
    STAGECRAFT_ERROR("emit_pipeline: delay_release must be in [0, max_concurrent_steps)",
                     "emit_pipeline: delay_release = " << Spec::delay << " must be in [0, " << K
                                                       << "): the stage would be refilled before it was released");
    return false;
  } else {
    return true;
  }
}
}  // namespace detail

// A grid of steps, outermost first: steps(n0, n1, ...). The pipeline walks it in row-major
// order; index maps and the body receive one index per dimension. A plain integer is a 1-D grid.
// The outermost extent may be an index expression known only at run time (the tiles of a ragged
// batch's segment, read from its table): steps(tiles, k_slices).
template <class... N>
struct step_grid {
  hana::tuple<N...> extents;
};
template <index_like N0, int_like... N>
auto steps(N0 const& n0, N const&... n) {
  return step_grid<N0, N...>{hana::make_tuple(n0, n...)};
}

namespace detail {
template <class T>
struct is_step_grid : std::false_type {};
template <class... N>
struct is_step_grid<step_grid<N...>> : std::true_type {};

template <class S>
auto as_grid(S const& s) {
  if constexpr (is_step_grid<S>::value) return s;
  else return steps(s);
}
// The number of steps in a grid (static when every extent is).
template <class... N>
auto total_steps(step_grid<N...> const& g) {
  return hana::unpack(g.extents, [](auto const&... n) { return (n * ... * int_c<1>); });
}
// The grid index of linear step e, one index expression per dimension (row-major).
template <class... N, class E>
auto grid_index(step_grid<N...> const& g, E const& e) {
  // A run-time outermost extent counts 0 here: only the inner extents make strides, and the
  // outermost index needs no modulo (a step below the total has its quotient below the extent).
  const std::array<std::int64_t, sizeof...(N)> ext = hana::unpack(g.extents, [](auto const&... n) {
    return std::array<std::int64_t, sizeof...(N)>{[](auto const& x) -> std::int64_t {
      if constexpr (int_like<std::remove_cvref_t<decltype(x)>>) return value_of(x);
      else return 0;
    }(n)...};
  });
  return [&]<std::size_t... D>(std::index_sequence<D...>) {
    auto one = [&](std::size_t dim) {
      std::int64_t stride = 1;
      for (std::size_t i = dim + 1; i < ext.size(); ++i) stride *= ext[i];
      if (dim == 0 && ext[0] == 0) return runtime_index(e / stride);
      return runtime_index((e / stride) % ext[dim]);
    };
    return hana::make_tuple(one(D)...);  // each index depends only on its own D: any evaluation order
  }(std::index_sequence_for<N...>{});
}
}  // namespace detail

template <long long K, class Steps, class Bar, class... In, class... Out, class Body>
// The ops the pipeline adds are located at the user's in(...)/out(...) for their copies, and at
// the emit_pipeline(...) call for the rest (waits, fences, loops).
[[gnu::cold]] auto emit_pipeline(Steps const& grid_or_count, Bar const& full, spec_list<In...> const& inputs, spec_list<Out...> const& outputs, Body&& body,
                                 src_loc loc = src_loc::current()) {
  // A grid of steps runs as one linear step counter; maps and the body see its grid index.
  constexpr bool is_grid = detail::is_step_grid<Steps>::value;
  auto const steps = [&] {
    if constexpr (is_grid) return detail::total_steps(grid_or_count);
    else return grid_or_count;
  }();
  auto at_step = [&](auto const& f, auto const& e) {  // f(index of step e...)
    if constexpr (is_grid) return hana::unpack(detail::grid_index(grid_or_count, e), f);
    else return f(e);
  };
  static_assert(K >= 1, "emit_pipeline<K>: max_concurrent_steps must be at least 1");
  static_assert(sizeof...(In) >= 1, "emit_pipeline: give at least one input (ins(in(...)))");
  constexpr bool rings_ok = (detail::check_in<K, In>() && ...) && (detail::check_out<K, Out>() && ...);
  if constexpr (!rings_ok) {
    return stmt<>{};
  } else if constexpr (kind_of<Bar> != operand_kind::barrier || Bar::static_dims::rank != 1 || Bar::num_barriers != K) {
    STAGECRAFT_ERROR_T(Bar, "emit_pipeline: the barrier must be a barrier array of max_concurrent_steps elements (barrier(arrivals(n), count(K)))");
    return stmt<>{};
  } else if constexpr (Bar::arrivals != static_cast<long long>(sizeof...(In))) {
    STAGECRAFT_ERROR("emit_pipeline: the barrier expects one arrival per input",
                     "emit_pipeline: the barrier expects " << Bar::arrivals << " arrivals per phase, but the pipeline has "
                                                          << static_cast<long long>(sizeof...(In)) << " inputs (one copy each)");
    return stmt<>{};
  } else {
    constexpr bool has_out = (!Out::once || ...) && sizeof...(Out) > 0;  // a stage ring to store per step
    constexpr bool has_once = (Out::once || ...);
    // The view an output hands the body at stage s: its stage, or its one buffer.
    auto out_view = [](auto const& o, auto const& s) {
      if constexpr (std::remove_cvref_t<decltype(o)>::once) return o.ring;
      else return o.ring[s];
    };
    auto per_step_store = [&](auto const& o, auto const& s, auto const& j) {
      if constexpr (std::remove_cvref_t<decltype(o)>::once) return seq();
      else return copy_smem_to_gmem(o.ring[s], at_step(o.map, j), o.loc);
    };
    auto init_once = hana::unpack(outputs.specs, [&](auto const&... o) {
      [[maybe_unused]] auto one = [](auto const& spec) {
        using S = std::remove_cvref_t<decltype(spec)>;
        if constexpr (S::once) {
          if constexpr (!std::is_same_v<decltype(spec.init), no_init>) return store(spec.ring, spec.init, spec.loc);
          else return seq();
        } else {
          return seq();
        }
      };
      return seq(one(o)...);
    });
    auto store_once = hana::unpack(outputs.specs, [&](auto const&... o) {
      [[maybe_unused]] auto one = [](auto const& spec) {
        if constexpr (std::remove_cvref_t<decltype(spec)>::once) return copy_smem_to_gmem(spec.ring, spec.block, spec.loc);
        else return seq();
      };
      return seq(one(o)...);
    });
    auto load_step = [&](auto const& spec, auto cursor) {
      return detail::copy_in(spec.loc, at_step(spec.map, cursor.step), spec.ring[cursor], full[cursor]);
    };
    auto prologue = for_(range(int_c<K>), [&](auto p) {
      auto s = stage<K>(p);
      return if_(p < steps, hana::unpack(inputs.specs, [&](auto const&... in) { return seq(load_step(in, s)...); }), loc);
    }, loc);
    auto main_loop = for_(range(steps), [&](auto j) {
      auto s = stage<K>(j);
      auto views_then_body = hana::unpack(inputs.specs, [&](auto const&... in) {
        return hana::unpack(outputs.specs, [&](auto const&... o) {
          return at_step([&](auto const&... index) { return body(index..., in.ring[s]..., out_view(o, s)...); }, j);
        });
      });
      auto store_outputs = hana::unpack(outputs.specs, [&](auto const&... o) {
        if constexpr (has_out)
          return seq(commit_smem(loc), per_step_store(o, s, j)..., commit_smem_to_gmem_group(loc));
        else
          return seq();
      });
      auto refills = hana::unpack(inputs.specs, [&](auto const&... in) {
        auto one = [&](auto const& spec) {
          constexpr long long d = std::remove_cvref_t<decltype(spec)>::delay;
          auto next = s.advance(int_c<K - d>);  // the stage of step j - d, for step j - d + K
          return if_(j >= int_c<d> && next.step < steps, load_step(spec, next), loc);
        };
        return seq(one(in)...);
      });
      if constexpr (has_out)
        return seq(barrier_wait(full[s], loc), wait_smem_to_gmem(int_c<K - 1>, read_only, loc), views_then_body, store_outputs, refills);
      else
        return seq(barrier_wait(full[s], loc), views_then_body, store_outputs, refills);
    }, loc);
    if constexpr (has_once)
      return seq(init_once, prologue, main_loop, commit_smem(loc), store_once, commit_smem_to_gmem_group(loc),
                 wait_smem_to_gmem(0_c, detail::no_opt{}, loc));
    else if constexpr (has_out)
      return seq(prologue, main_loop, wait_smem_to_gmem(0_c, detail::no_opt{}, loc));
    else
      return seq(prologue, main_loop);
  }
}

}  // namespace stagecraft

namespace stagecraft {

// emit_pipeline_warp_specialized<K, C>: warpgroup 0 is the memory warpgroup (producer), warpgroups
// 1..C compute (consumers). `ready` (K barriers, one arrival per input) says a stage has landed;
// `consumed` (K barriers, C arrivals) says every consumer is done with it, and the producer waits
// on it before refilling the stage. Every consumer runs the body on every step:
//   body(j, consumer, input views...) -> statement     (consumer: an index in [0, C))
// and splits the work itself (e.g. by rows). `setup(consumer)` and `teardown(consumer)` run once
// per consumer around its loop (an accumulator's init and write-back). The kernel declares
// threads(C + 1).
// Releasing: by default the library arrives on consumed[s] after the body. With
// ManualRelease = true the body receives that barrier element as its last argument and must
// barrier_arrive on it itself, as soon as it is done reading the stage (e.g. before a long
// epilogue that no longer needs it).
template <long long K, long long C, bool ManualRelease = false, class Steps, class Ready, class Consumed, class... In, class Body,
          class Setup, class Teardown>
[[gnu::cold]] auto emit_pipeline_warp_specialized(Steps const& steps, Ready const& ready, Consumed const& consumed, spec_list<In...> const& inputs,
                                    Body&& body, Setup&& setup, Teardown&& teardown, src_loc loc = src_loc::current()) {
  static_assert(K >= 1, "emit_pipeline_warp_specialized<K, C>: max_concurrent_steps must be at least 1");
  static_assert(C >= 1 && C <= 7, "emit_pipeline_warp_specialized<K, C>: 1 to 7 compute warpgroups (plus the memory warpgroup)");
  constexpr bool rings_ok = (detail::check_in<K, In>() && ...);
  if constexpr (!rings_ok) {
    return stmt<>{};
  } else if constexpr (kind_of<Ready> != operand_kind::barrier || Ready::num_barriers != K || Ready::arrivals != static_cast<long long>(sizeof...(In))) {
    STAGECRAFT_ERROR("emit_pipeline_warp_specialized: `ready` must be K barriers with one arrival per input",
                     "emit_pipeline_warp_specialized: `ready` must be " << K << " barriers with " << static_cast<long long>(sizeof...(In))
                                                                         << " arrivals (one per input)");
    return stmt<>{};
  } else if constexpr (kind_of<Consumed> != operand_kind::barrier || Consumed::num_barriers != K || Consumed::arrivals != C) {
    STAGECRAFT_ERROR("emit_pipeline_warp_specialized: `consumed` must be K barriers with one arrival per compute warpgroup",
                     "emit_pipeline_warp_specialized: `consumed` must be " << K << " barriers with " << C
                                                                            << " arrivals (one per compute warpgroup)");
    return stmt<>{};
  } else {
    auto producer = for_(range(steps), [&](auto j) {
      auto s = stage<K>(j);
      auto loads = hana::unpack(inputs.specs, [&](auto const&... in) {
        return seq(detail::copy_in(in.loc, in.map(j), in.ring[s], ready[s])...);
      });
      // The stage's previous use (step j - K) must be released by every consumer first.
      return seq(if_(j >= int_c<K>, barrier_wait(consumed[s], loc), loc), loads);
    }, loc);
    auto consumer_of = [&](auto c) {
      auto loop = for_(range(steps), [&](auto j) {
        auto s = stage<K>(j);
        if constexpr (ManualRelease) {
          auto run = hana::unpack(inputs.specs, [&](auto const&... in) { return body(j, c, in.ring[s]..., consumed[s]); });
          return seq(barrier_wait(ready[s], loc), run);
        } else {
          auto run = hana::unpack(inputs.specs, [&](auto const&... in) { return body(j, c, in.ring[s]...); });
          return seq(barrier_wait(ready[s], loc), run, barrier_arrive(consumed[s], loc));
        }
      }, loc);
      return seq(setup(c), loop, teardown(c));
    };
    // thread_id() 0 produces; thread_id() c + 1 consumes as consumer c.
    auto consumers = [&]<long long... I>(std::integer_sequence<long long, I...>) {
      return seq(if_(thread_id() == int_c<I + 1>, consumer_of(int_c<I>), loc)...);
    }(std::make_integer_sequence<long long, C>{});
    return if_(thread_id() == 0_c, producer, consumers, loc);
  }
}

// Without per-consumer setup or teardown.
template <long long K, long long C, bool ManualRelease = false, class Steps, class Ready, class Consumed, class... In, class Body>
auto emit_pipeline_warp_specialized(Steps const& steps, Ready const& ready, Consumed const& consumed, spec_list<In...> const& inputs, Body&& body,
                                    src_loc loc = src_loc::current()) {
  auto nothing = [](auto) { return seq(); };
  return emit_pipeline_warp_specialized<K, C, ManualRelease>(steps, ready, consumed, inputs, std::forward<Body>(body), nothing, nothing, loc);
}

}  // namespace stagecraft
