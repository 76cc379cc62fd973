#include "shard.hpp"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <limits>
#include <map>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "bench.hpp"
#include "internal.hpp"
#include "stagecraft/cli.hpp"

namespace stagecraft::cli::detail {
namespace {
using json = nlohmann::ordered_json;

json params_json(param_values const& v) {
  json j = json::object();
  for (auto const& [n, x] : v) j[n] = x;
  return j;
}

int to_int(std::string const& text, std::string const& whole) {
  int v = -1;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc{} || p != text.data() + text.size())
    throw usage_error(fmt::format("--shard '{}': expected i/N with integers 0 <= i < N (e.g. --shard 0/4)", whole));
  return v;
}

}  // namespace

shard_spec parse_shard(std::string const& text) {
  const auto slash = text.find('/');
  if (slash == std::string::npos) throw usage_error(fmt::format("--shard '{}': expected i/N with integers 0 <= i < N (e.g. --shard 0/4)", text));
  shard_spec s{to_int(text.substr(0, slash), text), to_int(text.substr(slash + 1), text)};
  if (s.count < 1 || s.index < 0 || s.index >= s.count)
    throw usage_error(fmt::format("--shard {}: the shard index must be at least 0 and below the shard count {}", text, s.count));
  return s;
}

int run_explore_records(std::vector<std::pair<kernel_entry const*, param_values>> const& kernels, explore_request const& r) {
  interp::options base;
  base.schedule = parse_policy(r.policy);
  base.seed = r.seed;
  base.pct_depth = r.pct_depth;
  base.checks = r.checks;
  if (r.explore > 0 && (base.schedule == interp::policy::eager || base.schedule == interp::policy::lazy)) base.schedule = interp::policy::pct;
  if (base.pct_depth < 1) throw usage_error("--pct-depth must be at least 1");
  const std::int64_t n = std::max(r.explore, 1);
  if (base.seed > std::numeric_limits<std::uint64_t>::max() - static_cast<std::uint64_t>(n - 1))
    throw usage_error(fmt::format("--seed {} --explore {}: the seeds would run past {}", base.seed, n, std::numeric_limits<std::uint64_t>::max()));
  std::optional<output_file> out;
  if (!r.results.empty()) out.emplace("--results", r.results);
  explore_clock clock(std::nullopt, r.progress);

  // Everything that must be equal for shards to belong to one run.
  json config = {{"policy", interp::policy_name(base.schedule)}, {"pct_depth", base.pct_depth}, {"checks", base.checks},
                 {"input_seed", r.input_seed}, {"first_seed", base.seed}, {"schedules", n}, {"kernels", json::array()}};
  for (auto const& [e, values] : kernels) config["kernels"].push_back({{"kernel", e->name}, {"params", params_json(values)}});
  std::string lines = json{{"record", "shard"}, {"command", "run"}, {"shard", r.shard.index}, {"of", r.shard.count}, {"config", config}}.dump() + "\n";

  int worst = exit_ok;
  for (std::size_t ki = 0; ki < kernels.size(); ++ki) {
    auto const& [e, values] = kernels[ki];
    const ir::Kernel k = registry::build(*e, values);
    // This shard's schedules of the kernel: offsets first_mine, first_mine + N, ... below n.
    const std::int64_t first_unit = static_cast<std::int64_t>(ki) * n;
    const std::int64_t first_mine = r.shard.first_owned(first_unit) - first_unit;
    if (first_mine >= n) continue;
    const std::int64_t share = (n - 1 - first_mine) / r.shard.count + 1;
    const auto inputs = entry_inputs(*e, values, k, r.input_seed);
    json rec = {{"record", "explore"}, {"kernel", e->name}, {"params", params_json(values)}, {"ran", 0}, {"failing_seed", nullptr},
                {"diagnostic", nullptr}, {"last", nullptr}};
    std::int64_t ran = 0;
    std::string said;
    for (std::int64_t off = first_mine; off < n; off += r.shard.count) {
      interp::options o = base;
      o.seed = base.seed + static_cast<std::uint64_t>(off);
      auto res = interp::run(k, inputs, o);
      clock.ran(e->name, ++ran, share);
      if (!res.ok()) {
        auto const& d = res.diagnostics.front();
        rec["failing_seed"] = o.seed;
        rec["diagnostic"] = {{"check", interp::check_name(d.kind)}, {"message", d.message}};
        said = fmt::format("seed {} fails: {}", o.seed, d.message);
        worst = std::max(worst, exit_protocol);
        break;
      }
      if (off == n - 1) {  // the schedule whose outputs the unsharded run checks
        auto expected = inputs;
        e->reference(expected, values);
        std::int64_t checked = 0;
        const auto bad = first_mismatch(k, res.buffers, expected, "the reference", checked, interp::tolerance_of(k, res, inputs));
        rec["last"] = {{"seed", o.seed}, {"verdict", bad.empty() ? "correct" : "wrong result"},
                       {"detail", bad.empty() ? fmt::format("{} output elements match the reference", checked) : bad}};
        if (!bad.empty()) worst = std::max(worst, exit_wrong);
      }
    }
    clock.clear();
    rec["ran"] = ran;
    if (said.empty()) said = rec["last"].is_null() ? "no diagnostic" : fmt::format("no diagnostic; last schedule: {}", rec["last"]["verdict"].get<std::string>());
    fmt::print("{} ({}): shard {}/{}: {} of {} schedule(s): {}\n", e->name, describe_values(values), r.shard.index, r.shard.count, ran, n, said);
    lines += rec.dump() + "\n";
  }
  if (out) out->write(lines);
  return worst;
}

namespace {

// The shards' explore records -> one record per kernel, as the unsharded run decides: the first
// failing seed stops it; otherwise the last schedule's outputs give the verdict.
int merge_run(json const& config, std::vector<json> const& records, std::string& lines, bool say) {
  const auto first = config["first_seed"].get<std::uint64_t>();
  const auto n = config["schedules"].get<std::int64_t>();
  int worst = exit_ok;
  for (auto const& kc : config["kernels"]) {
    std::optional<std::uint64_t> failing;
    json diag, last;
    int lasts = 0;
    for (auto const& rec : records) {
      if (rec["kernel"] != kc["kernel"] || rec["params"] != kc["params"]) continue;
      if (!rec["failing_seed"].is_null()) {
        const auto s = rec["failing_seed"].get<std::uint64_t>();
        if (!failing || s < *failing) failing = s, diag = rec["diagnostic"];
      }
      if (!rec["last"].is_null()) last = rec["last"], ++lasts;
    }
    json m = {{"record", "explore"}, {"kernel", kc["kernel"]}, {"params", kc["params"]}, {"schedules", n}};
    if (failing) {
      m["explored"] = static_cast<std::int64_t>(*failing - first) + 1;
      m["failing_seed"] = *failing;
      m["verdict"] = "protocol error";
      m["check"] = diag["check"];
      m["detail"] = diag["message"];
      worst = std::max(worst, exit_protocol);
    } else {
      if (lasts != 1)
        throw usage_error(fmt::format("merge: kernel '{}': {} shards report its last schedule (seed {}), expected exactly 1: a shard is "
                                      "missing, repeated or from another run",
                                      kc["kernel"].get<std::string>(), lasts, first + static_cast<std::uint64_t>(n - 1)));
      m["explored"] = n;
      m["failing_seed"] = nullptr;
      m["verdict"] = last["verdict"];
      m["check"] = nullptr;
      m["detail"] = last["detail"];
      if (last["verdict"] != "correct") worst = std::max(worst, exit_wrong);
    }
    if (say)
      fmt::print("{}: {} of {} schedule(s): {}{}\n", kc["kernel"].get<std::string>(), m["explored"].get<std::int64_t>(), n,
               m["verdict"].get<std::string>(), failing ? fmt::format(" at seed {}", *failing) : std::string());
    lines += m.dump() + "\n";
  }
  return worst;
}

}  // namespace

int merge(merge_request const& req) {
  if (req.files.empty()) throw usage_error("merge: name the shard files (JSON lines written by `run --results` or `bench --results`)");
  std::optional<output_file> out;
  if (req.out) out.emplace("--output", *req.out);
  std::vector<shard_file> shards;
  std::map<int, std::string> by_index;  // shard index -> its file
  for (auto const& path : req.files) {
    shard_file f = read_shard_file(path);
    const std::string where = fmt::format("merge: '{}' line {}", f.path, f.header_line);
    if (!shards.empty()) {
      auto const& first = shards.front();
      if (f.command != first.command)
        throw usage_error(fmt::format("{}: a shard of `{}`, but '{}' is one of `{}`: merge the shards of one command", where, f.command, first.path,
                                      first.command));
      if (f.shard.count != first.shard.count)
        throw usage_error(fmt::format("{}: shard {}/{}, but '{}' is one of {} shards", where, f.shard.index, f.shard.count, first.path, first.shard.count));
      if (auto d = first_difference(f.header["config"], first.header["config"], "config"))
        throw usage_error(fmt::format("{}: {} is {}, but {} in '{}': the shards of one merge come from one run", where, d->path, d->here, d->there,
                                      first.path));
    }
    if (auto [it, fresh] = by_index.emplace(f.shard.index, f.path); !fresh)
      throw usage_error(fmt::format("{}: shard {}/{} is given twice ('{}' and '{}')", where, f.shard.index, f.shard.count, it->second, f.path));
    shards.push_back(std::move(f));
  }
  const int of = shards.front().shard.count;
  if (static_cast<int>(by_index.size()) != of) {
    std::vector<int> missing;
    for (int i = 0; i < of; ++i)
      if (!by_index.count(i)) missing.push_back(i);
    throw usage_error(fmt::format("merge: {} of {} shards given; missing: {}", by_index.size(), of, fmt::join(missing, ", ")));
  }
  json const& header = shards.front().header;
  std::vector<json> records;
  for (auto& f : shards)
    for (auto& r : f.records) records.push_back(std::move(r.value));
  // The shard count is not part of the result: one run and four shards merge to the same bytes.
  std::string lines = json{{"record", "merged"}, {"command", header["command"]}, {"config", header["config"]}}.dump() + "\n";
  int rc = exit_ok;
  if (header["command"] == "run") {
    if (req.json || req.csv || req.svg) throw usage_error("merge: --json, --csv and --svg are for `bench` shards; these are `run` shards");
    rc = merge_run(header["config"], records, lines, out.has_value());
  } else {  // "bench": read_shard_file allows no other
    rc = merge_bench(header["config"], records, lines, req);
  }
  if (out) out->write(lines);
  else fmt::print("{}", lines);
  return rc;
}

}  // namespace stagecraft::cli::detail
