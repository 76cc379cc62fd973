// The timeline an interpreter run records, and its exports.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace stagecraft::interp {

struct trace_event {
  enum class kind : std::uint8_t {
    op,           // a warpgroup executes an op; [t0, t1] includes the time it was blocked
    async,        // an async operation in flight on an engine lane: issue t0, completion t1
    phase,        // a barrier phase completed at t0
    diagnostic,   // a check fired at t0 (the failing op)
    arrival,      // an arrival or completed transaction bytes on a barrier at t0, with its state after
  };
  kind what;
  std::uint64_t t0 = 0, t1 = 0;  // logical time: scheduler steps
  int cta = 0;                   // linear CTA index in the grid
  int lane = 0;                  // index into trace::lanes
  int op = -1;                   // op number in the printed IR, -1 if none
  std::string label;             // "barrier_wait b1[2]", "b1[2] phase 3 complete", ...
  // An async TMA copy: the GMEM bytes it moved, the part of its box inside the array (an
  // overhanging box's outside is neither read nor written); -1 for every other event.
  std::int64_t gmem_bytes = -1;
};

struct trace {
  std::string kernel;
  std::vector<std::string> lanes;  // per CTA, the same lanes: "wg0", ..., "tma load", "tma store", "barriers"
  int ctas = 0;
  std::vector<trace_event> events;  // in the order they happened
  // Per op number: where the user wrote it and the op as written, "add.cpp:42: barrier_wait(full[v0 % 2])"
  // (just the op when the location is unknown). The timeline shows it for the op under the mouse.
  std::vector<std::string> sources;
  // What t0/t1 count: the interpreter's scheduler steps, or the modelled machine's ns (a
  // timeline of stagecraft bench --backend model). Singular; the page adds "s" where it counts.
  std::string time_unit = "step";
};

// Chrome / Perfetto trace-event JSON (one process per CTA, one thread per lane).
std::string to_chrome_json(trace const& t);
// A self-contained HTML page (no network access needed) that draws the timeline: lanes per
// warpgroup and engine, barrier phases, the failing op highlighted.
std::string to_html(trace const& t);

}  // namespace stagecraft::interp
