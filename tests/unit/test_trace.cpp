#include <catch2/catch.hpp>
#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include <stagecraft/interp/trace.hpp>

using namespace stagecraft::interp;
using kind = trace_event::kind;
using json = nlohmann::json;

namespace {

const std::string nasty = R"(store "buf[0]" </script><script>alert('x')</script> <!-- end)";

// Two CTAs of a 3-deep ring: overlapping TMA loads, a blocked wait, a zero-length op and, in
// CTA 1, a failing op.
trace sample() {
  trace t;
  t.kernel = "ring<3>";
  t.lanes = {"wg0", "wg1", "tma load", "tma store", "barriers"};
  t.ctas = 2;
  for (int c = 0; c < 2; ++c) {
    t.events.push_back({kind::op, 0, 2, c, 0, 3, "copy_gmem_to_smem x[0] -> buf[0]"});
    t.events.push_back({kind::async, 1, 9, c, 2, 3, "tma load x.block(0, 0) -> buf[0]"});
    t.events.push_back({kind::async, 2, 11, c, 2, 4, "tma load x.block(0, 1) -> buf[1]"});
    t.events.push_back({kind::op, 0, 9, c, 1, 5, "barrier_wait full[0]"});
    t.events.push_back({kind::phase, 9, 9, c, 4, -1, "full[0] phase 0 complete"});
    t.events.push_back({kind::op, 9, 9, c, 1, 6, nasty});
    t.events.push_back({kind::async, 10, 14, c, 3, 8, "tma store buf[0] -> y.block(0, 0)"});
  }
  t.events.push_back({kind::op, 11, 13, 1, 1, 9, "load buf[1]"});
  t.events.push_back({kind::diagnostic, 12, 12, 1, 1, 9, "data_race: \"load buf[1]\" races with tma load"});
  return t;
}

// "tma load (2)" -> "tma load": the extra threads a lane uses for boxes that overlap.
std::string lane_of_thread(std::string const& name) {
  auto const p = name.rfind(" (");
  return p != std::string::npos && name.back() == ')' ? name.substr(0, p) : name;
}

std::size_t count(std::string const& hay, std::string const& needle) {
  std::size_t n = 0;
  for (auto p = hay.find(needle); p != std::string::npos; p = hay.find(needle, p + 1)) ++n;
  return n;
}

// The embedded JSON data of the HTML page, as written into the file.
std::string embedded_data(std::string const& html) {
  const std::string open = R"(<script type="application/json" id="trace-data">)";
  auto b = html.find(open);
  REQUIRE(b != std::string::npos);
  b += open.size();
  auto e = html.find("</script>", b);
  REQUIRE(e != std::string::npos);
  return html.substr(b, e - b);
}

}  // namespace

TEST_CASE("chrome json: one process per CTA, named threads for every lane", "[trace]") {
  const auto t = sample();
  const auto j = json::parse(to_chrome_json(t));
  REQUIRE(j.contains("traceEvents"));
  CHECK(j["otherData"]["kernel"] == "ring<3>");

  std::map<long long, std::string> process;                       // pid -> name
  std::map<std::pair<long long, long long>, std::string> thread;  // (pid, tid) -> name
  std::set<long long> tids;
  for (auto const& e : j["traceEvents"]) {
    if (e["ph"] != "M") continue;
    const long long pid = e["pid"], tid = e["tid"];
    CHECK(pid != 0);  // Perfetto treats pid / tid 0 as the idle task
    CHECK(tid != 0);
    if (e["name"] == "process_name") process[pid] = e["args"]["name"];
    if (e["name"] == "thread_name") {
      thread[{pid, tid}] = e["args"]["name"];
      tids.insert(tid);
    }
  }
  CHECK(process.size() == 2);
  std::set<std::string> names;
  for (auto const& [_, n] : process) names.insert(n);
  CHECK(names == std::set<std::string>{"CTA 0", "CTA 1"});
  // Every lane of every CTA, plus one extra "tma load (2)" per CTA for the two loads in flight.
  CHECK(thread.size() == 12);
  CHECK(tids.size() == 12);  // a tid reused across processes loses its name in Perfetto
  std::map<std::string, int> per_lane;
  for (auto const& [pt, name] : thread) {
    CHECK(process.count(pt.first) == 1);
    CHECK(std::find(t.lanes.begin(), t.lanes.end(), lane_of_thread(name)) != t.lanes.end());
    ++per_lane[name];
  }
  for (auto const& lane : t.lanes) CHECK(per_lane[lane] == 2);
  CHECK(per_lane["tma load (2)"] == 2);
}

TEST_CASE("chrome json: boxes on one thread never overlap", "[trace]") {
  // Perfetto drops "X" events that overlap on a thread without nesting.
  auto t = sample();
  for (int k = 0; k < 5; ++k) t.events.push_back({kind::async, 20u + k, 30u + k, 0, 2, 4, "in flight"});
  t.events.push_back({kind::op, 40, 40, 0, 0, 1, "instant op"});  // stretched to one step
  t.events.push_back({kind::op, 40, 42, 0, 0, 2, "next op"});
  const auto j = json::parse(to_chrome_json(t));
  std::map<std::pair<long long, long long>, std::vector<std::pair<std::uint64_t, std::uint64_t>>> spans;
  std::size_t boxes = 0;
  for (auto const& e : j["traceEvents"]) {
    if (e["ph"] != "X") continue;
    ++boxes;
    spans[{e["pid"], e["tid"]}].push_back({e["ts"], e["ts"].get<std::uint64_t>() + e["dur"].get<std::uint64_t>()});
  }
  CHECK(boxes == 13 + 5 + 2);
  for (auto& [_, s] : spans) {
    std::sort(s.begin(), s.end());
    for (std::size_t i = 1; i < s.size(); ++i) CHECK(s[i].first >= s[i - 1].second);
  }
}

TEST_CASE("chrome json: events keep kind, time, CTA, lane, op and label", "[trace]") {
  const auto t = sample();
  const auto j = json::parse(to_chrome_json(t));
  std::map<long long, std::string> process;
  std::map<std::pair<long long, long long>, std::string> thread;
  std::vector<json> events;
  for (auto const& e : j["traceEvents"]) {
    if (e["ph"] == "M") {
      if (e["name"] == "process_name") process[e["pid"]] = e["args"]["name"];
      if (e["name"] == "thread_name") thread[{e["pid"], e["tid"]}] = e["args"]["name"];
    } else {
      events.push_back(e);
    }
  }
  REQUIRE(events.size() == t.events.size());
  int complete = 0, instant = 0;
  for (std::size_t i = 0; i < events.size(); ++i) {
    auto const& in = t.events[i];
    auto const& out = events[i];
    INFO("event " << i << ": " << in.label);
    const bool box = in.what == kind::op || in.what == kind::async;
    CHECK(out["ph"] == (box ? "X" : "i"));
    CHECK(out["ts"] == in.t0);
    if (box) {
      ++complete;
      CHECK(out["dur"] == std::max<std::uint64_t>(1, in.t1 - in.t0));
    } else {
      ++instant;
      CHECK(out["s"] == "t");
      CHECK_FALSE(out.contains("dur"));
    }
    CHECK(process.at(out["pid"]) == "CTA " + std::to_string(in.cta));
    CHECK(lane_of_thread(thread.at({out["pid"], out["tid"]})) == t.lanes[in.lane]);
    CHECK(out["name"] == in.label);
    CHECK(out["args"]["op"] == in.op);
    CHECK(out["args"]["label"] == in.label);
    if (in.what == kind::diagnostic) CHECK(out["cat"] == "diagnostic");
  }
  CHECK(complete == 13);
  CHECK(instant == 3);
  // The zero-length op still has a visible duration.
  CHECK(events[5]["dur"] == 1);
}

TEST_CASE("html: self-contained, labels cannot break out of the script", "[trace]") {
  const auto t = sample();
  const auto html = to_html(t);
  CHECK(html.rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(html.find("http://") == std::string::npos);
  CHECK(html.find("https://") == std::string::npos);
  CHECK(html.find("<link") == std::string::npos);
  CHECK(html.find("@import") == std::string::npos);
  CHECK(html.find("<script src") == std::string::npos);
  // Exactly the data element and the code element close; the label's "</script>" does not.
  CHECK(count(html, "</script>") == 2);
  CHECK(html.find("<canvas") != std::string::npos);

  const auto data = embedded_data(html);
  CHECK(data.find("</") == std::string::npos);
  CHECK(data.find("<!--") == std::string::npos);
  CHECK(data.find(R"(<\/script>)") != std::string::npos);

  const auto d = json::parse(data);
  CHECK(d["kernel"] == "ring<3>");
  CHECK(d["ctas"] == 2);
  CHECK(d["lanes"] == json(t.lanes));
  REQUIRE(d["events"].size() == t.events.size());
  std::set<std::string> labels;
  for (auto const& l : d["labels"]) labels.insert(l.get<std::string>());
  for (std::size_t i = 0; i < t.events.size(); ++i) {
    auto const& in = t.events[i];
    auto const& out = d["events"][i];
    INFO("event " << i << ": " << in.label);
    CHECK(labels.count(in.label) == 1);
    CHECK(out[0] == static_cast<int>(in.what));
    CHECK(out[1] == in.t0);
    CHECK(out[2] == in.t1);
    CHECK(out[3] == in.cta);
    CHECK(out[4] == in.lane);
    CHECK(out[5] == in.op);
    CHECK(d["labels"][out[6].get<std::size_t>()] == in.label);
    // Every label is in the page as JSON text, with only "</" and "<!--" escaped further.
    auto esc = json(in.label).dump();
    for (auto p = esc.find("</"); p != std::string::npos; p = esc.find("</", p + 3)) esc.replace(p, 2, "<\\/");
    for (auto p = esc.find("<!--"); p != std::string::npos; p = esc.find("<!--", p + 6)) esc.replace(p, 1, "\\u003c");
    CHECK(html.find(esc) != std::string::npos);
  }
}

TEST_CASE("html: the kernel name is escaped in the title", "[trace]") {
  auto t = sample();
  t.kernel = "gemm<128, \"x\"></title>";
  const auto html = to_html(t);
  CHECK(html.find("</title></title>") == std::string::npos);
  CHECK(html.find("gemm&lt;128, &quot;x&quot;&gt;&lt;/title&gt;") != std::string::npos);
}

TEST_CASE("exports are deterministic", "[trace]") {
  const auto a = sample(), b = sample();
  CHECK(to_chrome_json(a) == to_chrome_json(a));
  CHECK(to_chrome_json(a) == to_chrome_json(b));
  CHECK(to_html(a) == to_html(a));
  CHECK(to_html(a) == to_html(b));
}

TEST_CASE("an empty trace still exports", "[trace]") {
  trace t;
  t.kernel = "empty";
  t.lanes = {"wg0", "barriers"};
  t.ctas = 1;
  const auto j = json::parse(to_chrome_json(t));
  CHECK(j["traceEvents"].size() == 1 * (2 + 2 * 2));  // metadata only
  const auto d = json::parse(embedded_data(to_html(t)));
  CHECK(d["events"].empty());
}

TEST_CASE("events outside the trace's CTAs or lanes are rejected", "[trace]") {
  auto bad_lane = sample();
  bad_lane.events.push_back({kind::op, 0, 1, 0, 5, -1, "nowhere"});
  CHECK_THROWS_AS(to_chrome_json(bad_lane), std::invalid_argument);
  CHECK_THROWS_AS(to_html(bad_lane), std::invalid_argument);
  auto bad_cta = sample();
  bad_cta.events.push_back({kind::op, 0, 1, 2, 0, -1, "nowhere"});
  CHECK_THROWS_AS(to_chrome_json(bad_cta), std::invalid_argument);
  CHECK_THROWS_AS(to_html(bad_cta), std::invalid_argument);
}
