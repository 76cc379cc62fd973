// A shard file read back for `merge`, every line checked against what the writers write
// (shard.hpp, read_shard_file). The merge then indexes the JSON without checks of its own, so
// whatever these checks let through would end in a crash or an "internal error" there.
#include <algorithm>
#include <climits>
#include <cstdint>
#include <fstream>
#include <limits>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "shard.hpp"

namespace stagecraft::cli::detail {
namespace {
using json = nlohmann::ordered_json;

struct place {
  std::string const& path;
  int line;
};

[[noreturn]] void bad(place const& at, std::string const& what) {
  throw usage_error(fmt::format("merge: '{}' line {}: {}", at.path, at.line, what));
}

// A value in a message, short: the first members of the first levels. Not dump(): it recurses
// once per level, and a line of a million '[' must not overflow the stack.
std::string brief(json const& v, int depth = 0) {
  if (!v.is_structured()) {
    std::string text = v.dump();
    return text.size() > 40 ? text.substr(0, 37) + "..." : text;
  }
  if (v.empty()) return v.is_array() ? "[]" : "{}";
  if (depth == 2) return v.is_array() ? "[...]" : "{...}";
  std::vector<std::string> parts;
  for (auto it = v.begin(); it != v.end() && parts.size() < 3; ++it)
    parts.push_back(v.is_object() ? fmt::format("\"{}\":{}", it.key(), brief(*it, depth + 1)) : brief(*it, depth + 1));
  if (v.size() > 3) parts.push_back("...");
  const std::string inside = fmt::format("{}", fmt::join(parts, ","));
  return v.is_array() ? "[" + inside + "]" : "{" + inside + "}";
}

// A value as a message shows it, with its JSON type ("\"4\" (a string)").
std::string shown(json const& v) {
  const std::string text = brief(v);
  const std::string type = v.type_name();
  return fmt::format("{} ({} {})", text, type == "array" || type == "object" ? "an" : "a", type);
}

// One JSON value of a record with its name in messages ("config.kernels[1].params"), and typed
// accessors that reject what no writer writes.
class field {
 public:
  field(json const& v, std::string name, place const& at) : v_(v), name_(std::move(name)), at_(at) {}

  // An object with exactly these keys: a missing one, or one no writer writes (a typo, a field
  // at the wrong level), is an error.
  field const& keys(std::initializer_list<const char*> required, std::initializer_list<const char*> optional = {}) const {
    object();
    for (const char* k : required)
      if (!v_.contains(k)) fail(fmt::format("{} has no \"{}\"", what(), k));
    for (auto const& item : v_.items()) {
      const std::string& k = item.key();  // not a structured binding: clang 14 cannot capture one
      const auto is = [&k](const char* x) { return k == x; };
      if (std::none_of(required.begin(), required.end(), is) && std::none_of(optional.begin(), optional.end(), is))
        fail(fmt::format("{} has a field \"{}\" that no shard writer writes", what(), k));
    }
    return *this;
  }
  void object() const {
    if (!v_.is_object()) fail_type("an object");
  }
  bool has(const char* key) const { return v_.contains(key); }
  field operator[](std::string const& key) const { return {v_.at(key), name_.empty() ? key : name_ + "." + key, at_}; }

  std::size_t array() const {
    if (!v_.is_array()) fail_type("an array");
    return v_.size();
  }
  field operator[](std::size_t i) const { return {v_.at(i), fmt::format("{}[{}]", name_, i), at_}; }

  std::string string() const {
    if (!v_.is_string()) fail_type("a string");
    return v_.get<std::string>();
  }
  std::string one_of(std::initializer_list<const char*> allowed) const {
    const std::string s = v_.is_string() ? v_.get<std::string>() : std::string();
    if (std::find(allowed.begin(), allowed.end(), s) == allowed.end())
      fail(fmt::format("{} must be one of \"{}\", got {}", what(), fmt::join(allowed, "\", \""), shown(v_)));
    return s;
  }
  bool boolean() const {
    if (!v_.is_boolean()) fail_type("true or false");
    return v_.get<bool>();
  }
  double number() const {
    if (!v_.is_number()) fail_type("a number");
    return v_.get<double>();
  }
  std::int64_t integer(std::int64_t lo = std::numeric_limits<std::int64_t>::min(),
                       std::int64_t hi = std::numeric_limits<std::int64_t>::max()) const {
    // A float (3.0 or 2.5) is not one of the writers' integers; an unsigned value past hi is
    // checked before it is read as int64.
    const bool in_range = v_.is_number_integer() && !(v_.is_number_unsigned() && v_.get<std::uint64_t>() > static_cast<std::uint64_t>(hi)) &&
                          v_.get<std::int64_t>() >= lo && v_.get<std::int64_t>() <= hi;
    if (!in_range) fail_type(fmt::format("an integer from {} to {}", lo, hi));
    return v_.get<std::int64_t>();
  }
  std::uint64_t u64() const {
    if (!v_.is_number_unsigned()) fail_type(fmt::format("an integer from 0 to {}", std::numeric_limits<std::uint64_t>::max()));
    return v_.get<std::uint64_t>();
  }
  bool null() const { return v_.is_null(); }
  json const& value() const { return v_; }
  std::string what() const { return name_.empty() ? "the record" : name_; }
  [[noreturn]] void fail(std::string const& message) const { bad(at_, message); }

 private:
  [[noreturn]] void fail_type(std::string const& expected) const { fail(fmt::format("{} must be {}, got {}", what(), expected, shown(v_))); }

  json const& v_;
  std::string name_;
  place const& at_;
};

// A kernel's parameters, as registry::resolve gives them: names to integers.
void check_params(field const& f) {
  f.object();
  for (auto const& [k, _] : f.value().items()) f[k].integer();
}

std::string describe(json const& kernel) {  // {"kernel", "params"} -> "'add_one' (K=4 M=512)"
  std::vector<std::string> set;
  for (auto const& [n, v] : kernel["params"].items()) set.push_back(fmt::format("{}={}", n, v.dump()));
  return fmt::format("'{}' ({})", kernel["kernel"].get<std::string>(), fmt::join(set, " "));
}

// ---- run shards: written by run_explore_records (shard.cpp) ------------------------------------

struct run_config {
  std::uint64_t first = 0;
  std::int64_t schedules = 0;
  std::vector<json> kernels;  // {"kernel", "params"}, in the order of their units
};

run_config check_run_config(field const& c) {
  c.keys({"policy", "pct_depth", "checks", "input_seed", "first_seed", "schedules", "kernels"});
  c["policy"].one_of({"eager", "lazy", "random", "pct"});
  c["pct_depth"].integer(1, INT_MAX);
  c["checks"].boolean();
  c["input_seed"].u64();
  run_config rc;
  rc.first = c["first_seed"].u64();
  rc.schedules = c["schedules"].integer(1, INT_MAX);  // --explore is an int
  if (rc.first > std::numeric_limits<std::uint64_t>::max() - static_cast<std::uint64_t>(rc.schedules - 1))
    c.fail(fmt::format("config.first_seed {} and config.schedules {}: the seeds run past {}", rc.first, rc.schedules,
                       std::numeric_limits<std::uint64_t>::max()));
  const field ks = c["kernels"];
  for (std::size_t i = 0, n = ks.array(); i < n; ++i) {
    const field k = ks[i];
    k.keys({"kernel", "params"});
    k["kernel"].string();
    check_params(k["params"]);
    for (std::size_t j = 0; j < i; ++j)
      if (rc.kernels[j] == k.value()) k.fail(fmt::format("{} repeats config.kernels[{}], kernel {}", k.what(), j, describe(k.value())));
    rc.kernels.push_back(k.value());
  }
  return rc;
}

// An "explore" record: one kernel's schedules of this shard, up to its first failure.
void check_explore(field const& r, run_config const& rc, shard_spec s, std::map<std::size_t, int>& seen, int line) {
  r.keys({"record", "kernel", "params", "ran", "failing_seed", "diagnostic", "last"});
  r["kernel"].string();
  check_params(r["params"]);
  const json id = {{"kernel", r.value()["kernel"]}, {"params", r.value()["params"]}};
  const auto it = std::find(rc.kernels.begin(), rc.kernels.end(), id);
  if (it == rc.kernels.end()) r.fail(fmt::format("kernel {} is not among the header's config.kernels", describe(id)));
  const auto ki = static_cast<std::size_t>(it - rc.kernels.begin());
  if (auto [prev, fresh] = seen.emplace(ki, line); !fresh)
    r.fail(fmt::format("a second record for kernel {} (the first is line {})", describe(id), prev->second));
  r["ran"].integer(1, rc.schedules);

  const std::uint64_t last_seed = rc.first + static_cast<std::uint64_t>(rc.schedules - 1);
  // unit ki * n + (seed - first) belongs to shard `unit mod N`, as run_explore_records splits them
  auto check_seed = [&](field const& f) {
    const std::uint64_t seed = f.u64();
    if (seed < rc.first || seed > last_seed)
      f.fail(fmt::format("{} {} is outside the run's seeds {}..{}", f.what(), seed, rc.first, last_seed));
    const auto unit = static_cast<std::int64_t>(ki) * rc.schedules + static_cast<std::int64_t>(seed - rc.first);
    if (!s.owns(unit)) f.fail(fmt::format("{} {} of kernel {} belongs to shard {}/{}, not to this shard {}/{}", f.what(), seed, describe(id),
                                          unit % s.count, s.count, s.index, s.count));
    return seed;
  };
  const field failing = r["failing_seed"], diag = r["diagnostic"], last = r["last"];
  if (!failing.null()) {
    check_seed(failing);
    if (diag.null()) r.fail("\"failing_seed\" is set but \"diagnostic\" is null");
    diag.keys({"check", "message"});
    diag["check"].string();
    diag["message"].string();
    if (!last.null()) r.fail("a record with a failing seed has no \"last\": the exploration stops at the failure");
    return;
  }
  if (!diag.null()) r.fail("\"diagnostic\" is set but \"failing_seed\" is null");
  const auto last_unit = static_cast<std::int64_t>(ki) * rc.schedules + rc.schedules - 1;
  if (last.null()) {
    if (s.owns(last_unit)) r.fail(fmt::format("\"last\" is null, but this shard ran the last schedule (seed {}) and no failure stopped it", last_seed));
    return;
  }
  last.keys({"seed", "verdict", "detail"});
  if (check_seed(last["seed"]) != last_seed)
    last.fail(fmt::format("last.seed {} is not the run's last seed {}", last.value()["seed"].get<std::uint64_t>(), last_seed));
  last["verdict"].one_of({"correct", "wrong result"});
  last["detail"].string();
}

// ---- bench shards: written by bench_command_impl::shard_lines (bench.cpp), bench::point_json --

std::size_t check_bench_config(field const& c) {
  c.keys({"kernel", "backend", "device", "machine", "set", "sweep", "points", "flush_l2", "check", "input_seed"});
  c["kernel"].string();
  c["backend"].one_of({"gpu", "model"});
  c["device"].string();
  c["machine"].string();
  check_params(c["set"]);
  std::int64_t product = 1;
  const field sweep = c["sweep"];
  for (std::size_t i = 0, n = sweep.array(); i < n; ++i) {
    const field a = sweep[i];
    a.keys({"name", "values"});
    a["name"].string();
    const field values = a["values"];
    const std::size_t m = values.array();
    if (m == 0) values.fail(fmt::format("{} is empty: a swept parameter has at least one value", values.what()));
    for (std::size_t j = 0; j < m; ++j) values[j].integer();
    product = product > INT_MAX ? product : product * static_cast<std::int64_t>(m);
  }
  const std::int64_t points = c["points"].integer(1, INT_MAX);
  if (points != product) c["points"].fail(fmt::format("config.points is {}, but the sweep has {} points", points, product));
  c["flush_l2"].boolean();
  c["check"].boolean();
  c["input_seed"].u64();
  return static_cast<std::size_t>(points);
}

// A "point" record: one configuration, measured or modelled, or the error it could not run with.
std::size_t check_point(field const& r, std::size_t points, shard_spec s) {
  if (r.has("error")) {
    r.keys({"record", "index", "params", "error"});
    r["error"].string();
  } else {
    r.keys({"record", "index", "params", "median_ms", "min_ms", "spread", "reps", "bytes", "flops", "gbps", "tflops", "baseline", "baseline_ms",
            "baseline_gbps", "of_baseline", "check", "limited_by", "ctas", "ctas_per_sm", "waves", "wait_fraction"});
    for (const char* k : {"median_ms", "min_ms", "spread", "bytes", "flops", "gbps", "tflops", "baseline_ms", "baseline_gbps", "of_baseline"}) r[k].number();
    for (const char* k : {"reps", "ctas_per_sm"}) r[k].integer(INT_MIN, INT_MAX);
    for (const char* k : {"ctas", "waves"}) r[k].integer();
    for (const char* k : {"baseline", "check", "limited_by"}) r[k].string();
    const field w = r["wait_fraction"];
    for (std::size_t i = 0, n = w.array(); i < n; ++i) w[i].number();
  }
  check_params(r["params"]);
  const auto index = static_cast<std::size_t>(r["index"].integer(0, static_cast<std::int64_t>(points) - 1));
  if (!s.owns(static_cast<std::int64_t>(index)))
    r["index"].fail(fmt::format("point {} belongs to shard {}/{}, not to this shard {}/{}", index, index % static_cast<std::size_t>(s.count), s.count,
                                s.index, s.count));
  return index;
}

}  // namespace

shard_file read_shard_file(std::string const& path) {
  std::ifstream in(path);
  if (!in) throw usage_error(fmt::format("merge: cannot read '{}'", path));
  shard_file f;
  f.path = path;
  run_config rc;
  std::size_t points = 0;
  std::map<std::size_t, int> seen;  // kernel (run) or point (bench) -> the line of its record
  std::string text;
  for (int n = 1; std::getline(in, text); ++n) {
    if (text.empty()) continue;
    const place at{path, n};
    json j;
    try {
      j = json::parse(text);
    } catch (json::exception const& e) {
      bad(at, fmt::format("not JSON ({}): is it a --results file of `run` or `bench`?", e.what()));
    }
    if (!j.is_object()) bad(at, fmt::format("a JSON {}, not a record (an object with \"record\")", j.type_name()));
    const field r(j, "", at);
    if (!r.has("record")) bad(at, "the record has no \"record\" (\"shard\", \"explore\" or \"point\")");
    const std::string kind = r["record"].string();
    if (f.header.is_null()) {
      if (kind != "shard")
        bad(at, "does not start with a shard header ({\"record\":\"shard\",...}): write it with `run ... --results F` or `bench ... --results F`");
      r.keys({"record", "command", "shard", "of", "config"});
      f.command = r["command"].one_of({"run", "bench"});
      f.shard.count = static_cast<int>(r["of"].integer(1, INT_MAX));
      f.shard.index = static_cast<int>(r["shard"].integer(0, f.shard.count - 1));
      if (f.command == "run") rc = check_run_config(r["config"]);
      else points = check_bench_config(r["config"]);
      f.header = std::move(j);
      f.header_line = n;
      continue;
    }
    const char* expected = f.command == "run" ? "explore" : "point";
    if (kind == "shard") bad(at, fmt::format("a second shard header (the first is line {}): give each shard as its own file", f.header_line));
    if (kind != expected) bad(at, fmt::format("\"record\" must be \"{}\" in a shard of `{}`, got \"{}\"", expected, f.command, kind));
    if (f.command == "run") {
      check_explore(r, rc, f.shard, seen, n);
    } else {
      const std::size_t index = check_point(r, points, f.shard);
      if (auto [prev, fresh] = seen.emplace(index, n); !fresh) bad(at, fmt::format("point {} again (the first is line {})", index, prev->second));
    }
    f.records.push_back({n, std::move(j)});
  }
  if (f.header.is_null()) throw usage_error(fmt::format("merge: '{}' is empty: write it with `run ... --results F` or `bench ... --results F`", path));

  // What the shard owns and has no record of: a file cut short (the writers write every one).
  const place end{path, f.header_line};
  if (f.command == "run") {
    for (std::size_t ki = 0; ki < rc.kernels.size(); ++ki) {
      const auto first_unit = static_cast<std::int64_t>(ki) * rc.schedules;
      if (f.shard.first_owned(first_unit) < first_unit + rc.schedules && !seen.count(ki))
        bad(end, fmt::format("shard {}/{} has schedules of kernel {} but no record of them: is the file cut short?", f.shard.index, f.shard.count,
                             describe(rc.kernels[ki])));
    }
  } else {
    for (std::size_t p = static_cast<std::size_t>(f.shard.index); p < points; p += static_cast<std::size_t>(f.shard.count))
      if (!seen.count(p)) bad(end, fmt::format("shard {}/{} has point {} of the sweep but no record of it: is the file cut short?", f.shard.index,
                                               f.shard.count, p));
  }
  return f;
}

std::optional<json_difference> first_difference(nlohmann::ordered_json const& a, nlohmann::ordered_json const& b, std::string const& path) {
  if (a == b) return std::nullopt;
  if (a.is_object() && b.is_object()) {
    for (auto const& [k, v] : a.items()) {
      if (!b.contains(k)) return json_difference{path + "." + k, v.dump(), "nothing"};
      if (auto d = first_difference(v, b[k], path + "." + k)) return d;
    }
    for (auto const& [k, v] : b.items())
      if (!a.contains(k)) return json_difference{path + "." + k, "nothing", v.dump()};
  } else if (a.is_array() && b.is_array() && a.size() == b.size()) {
    for (std::size_t i = 0; i < a.size(); ++i)
      if (auto d = first_difference(a[i], b[i], fmt::format("{}[{}]", path, i))) return d;
  }
  return json_difference{path, a.dump(), b.dump()};  // also: the same members in another order
}

}  // namespace stagecraft::cli::detail
