// Lesson 14: grid-wide semaphores, or CTAs taking turns.
//
// Barriers order the warpgroups of one CTA, cluster barriers the CTAs of one cluster. CTAs of
// different clusters share nothing but GMEM, and nothing orders them unless they order
// themselves through it: a semaphore is an i32 counter there that one CTA signals (a release:
// everything it did before is visible to whoever the signal lets go) and another waits on (an
// acquire: it blocks until the counter holds its value, takes it, and sees what was released).
//
// Here four CTAs add their blocks of x into the same y, in order: CTA s waits for its turn,
// adds, and hands the turn to CTA s + 1. The sum of floats depends on the order, so the order
// is the result: the same bits on every run, which a reduce_add (any order) would not give.
// A CTA may only wait for one launched before it: the GPU does not promise that a CTA launched
// later runs while an earlier one spins, so "wait for the next CTA" can hang for ever.
#include <stagecraft/lessons.hpp>
#include <stagecraft/stagecraft.hpp>

namespace stagecraft::lessons {
namespace {

enum class mistake { none, own_turn, no_wait, backwards };

template <mistake Bug>
ir::Kernel semaphores_in_turn() {
  constexpr long long S = 4;
  auto t = shape(64_c, 64_c);
  return lower(kernel<sm_90a>(
      "lesson14_semaphores", grid(int_c<S>), threads(1_c),
      gmem<f32>("x", shape(64_c, int_c<64 * S>)),  // (row, col): CTA s adds columns 64 s .. 64 s + 63
      gmem<f32>("y", shape(64_c, 64_c)),           // (row, col): y += every block, CTA 0's first
      semaphores("turn", shape(int_c<S>)),         // turn(s): 1 once CTA s may add; zero at launch
      [&](auto x, auto y, auto turn) {
        auto s = program_id();
        auto yt = y.tile(t, 0_c, 0_c);
        auto add = store(yt, load(yt) + load(x.tile(t, 0_c, s)));
        if constexpr (Bug == mistake::backwards) {
          // MISTAKE (backwards): the last CTA goes first and hands the turn down. CTA 0 waits for
          // CTA 1, which is launched after it.
          return seq(if_(s + 1_c < int_c<S>, semaphore_wait(turn(s))), add, if_(s > 0_c, semaphore_signal(turn(s - 1_c))));
        } else {
          // MISTAKE (no_wait): "the turns are handed on anyway", so nobody waits for theirs.
          auto wait = [&] {
            if constexpr (Bug == mistake::no_wait) return seq();
            else return if_(s > 0_c, semaphore_wait(turn(s)));
          }();
          // MISTAKE (own_turn): each CTA signals the counter it waits on itself, turn(s).
          auto next = [&] {
            if constexpr (Bug == mistake::own_turn) return turn(s);
            else return turn(s + 1_c);
          }();
          return seq(wait, add, if_(s + 1_c < int_c<S>, semaphore_signal(next)));
        }
      }));
}

STAGECRAFT_LESSON(lesson_entry{
    .number = 14,
    .slug = "semaphores",
    .title = "Grid-wide semaphores: CTAs taking turns",
    .summary = "CTAs of different clusters order themselves through GMEM counters: a signal releases what a CTA did, a "
               "wait acquires it and takes the count, and a CTA may wait only for one launched before it.",
    .build = semaphores_in_turn<mistake::none>,
    .reference =
        [](std::vector<host_tensor>& t) {
          auto x = t[0].as<float>();
          auto y = t[1].as<float>();
          for (std::size_t r = 0; r < 64; ++r)
            for (std::size_t c = 0; c < 64; ++c)
              for (std::size_t s = 0; s < 4; ++s) y[r * 64 + c] += x[r * 256 + s * 64 + c];  // CTA 0's block first
        },
    .twins = {{.name = "own_turn",
               .mistake = "each CTA signals the counter it waits on itself, turn(s), instead of the next CTA's",
               .expect = "deadlock",
               .policy = "eager",
               .hardware = "CTA 1 spins on turn(1) for ever (only CTA 1 itself would signal it), and every CTA after it "
                           "too: the launch never ends",
               .fix = "semaphore_signal(turn(s + 1)): hand the turn on",
               .build = semaphores_in_turn<mistake::own_turn>},
              {.name = "no_wait",
               .mistake = "the CTAs hand the turn on, but none waits for its own",
               .expect = "data-race",
               .policy = "eager",
               .hardware = "two CTAs load y, add and store it at once: one's sum overwrites the other's (a lost update), "
                           "and the order of the adds, so the bits of y, changes from run to run",
               .fix = "semaphore_wait(turn(s)) before the add: it acquires what the CTA before released",
               .build = semaphores_in_turn<mistake::no_wait>},
              {.name = "backwards",
               .mistake = "the last CTA goes first and hands the turn down: CTA s waits for CTA s + 1",
               .expect = "deadlock",
               .policy = "eager",
               .hardware = "with every CTA resident it happens to work; with more CTAs than the GPU holds at once, the "
                           "early ones spin waiting for CTAs that can only start when they finish: a hang",
               .fix = "wait only for CTAs launched before you (a lower index on the grid's first axis)",
               .build = semaphores_in_turn<mistake::backwards>}},
});

}  // namespace
}  // namespace stagecraft::lessons
