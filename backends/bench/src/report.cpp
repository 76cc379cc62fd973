// The writers of a bench report: the terminal table, JSON, CSV and an SVG plot drawn by a small
// SVG writer of our own (no plotting library: the page must open anywhere, offline).
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "stagecraft/bench/bench.hpp"

namespace stagecraft::bench {
namespace {
using json = nlohmann::ordered_json;

bool memory_bound(report const& r) {
  double bytes = 0, flops = 0;
  for (auto const& p : r.points) bytes += p.bytes, flops += p.flops;
  // A kernel is plotted in GB/s unless it does more than 4 FLOPs per byte (then TFLOP/s).
  return flops <= 4 * bytes;
}

std::string pct(double f) { return fmt::format("{:.0f}%", 100 * f); }

std::string csv_quote(std::string const& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string o = "\"";
  for (char c : s) o += c == '"' ? std::string("\"\"") : std::string(1, c);
  return o + "\"";
}

std::string xml(std::string const& s) {
  std::string o;
  for (char c : s) {
    switch (c) {
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '&': o += "&amp;"; break;
      case '"': o += "&quot;"; break;
      default: o += c;
    }
  }
  return o;
}

// "Nice" axis ticks: 1, 2 or 5 times a power of ten.
std::vector<double> ticks(double lo, double hi, int want = 6) {
  if (!(hi > lo)) hi = lo + 1;
  const double raw = (hi - lo) / want, mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double step = raw / mag < 1.5 ? mag : raw / mag < 3.5 ? 2 * mag : raw / mag < 7.5 ? 5 * mag : 10 * mag;
  std::vector<double> t;
  for (double v = std::ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) t.push_back(std::abs(v) < step * 1e-9 ? 0 : v);
  return t;
}

// A tiny SVG document builder.
class svg {
 public:
  svg(int w, int h) : w_(w), h_(h) {}
  void line(double x1, double y1, double x2, double y2, std::string const& stroke, double width = 1, std::string const& dash = "") {
    body_ += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\" stroke-width=\"{}\"{}/>\n", x1, y1, x2, y2, stroke, width,
                         dash.empty() ? "" : fmt::format(" stroke-dasharray=\"{}\"", dash));
  }
  void polyline(std::vector<std::pair<double, double>> const& pts, std::string const& stroke, double width, std::string const& dash = "") {
    std::string p;
    for (auto [x, y] : pts) p += fmt::format("{:.1f},{:.1f} ", x, y);
    body_ += fmt::format("<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"{}\"{}/>\n", p, stroke, width,
                         dash.empty() ? "" : fmt::format(" stroke-dasharray=\"{}\"", dash));
  }
  void circle(double x, double y, double r, std::string const& fill) {
    body_ += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"{}\" fill=\"{}\"/>\n", x, y, r, fill);
  }
  void text(double x, double y, std::string const& s, int size = 12, std::string const& anchor = "start", std::string const& extra = "") {
    body_ += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"{}\" text-anchor=\"{}\"{}>{}</text>\n", x, y, size, anchor, extra, xml(s));
  }
  void rect(double x, double y, double w, double h, std::string const& fill, std::string const& stroke = "none") {
    body_ += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\" stroke=\"{}\"/>\n", x, y, w, h, fill, stroke);
  }
  std::string str() const {
    return fmt::format("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" font-family=\"sans-serif\">\n"
                       "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n{}</svg>\n",
                       w_, h_, w_, h_, body_);
  }

 private:
  int w_, h_;
  std::string body_;
};

json point_obj(point const& p, bool modelled) {
  json v = json::object();
  for (auto const& [n, x] : p.values) v[n] = x;
  json j = {{"index", p.index}, {"params", v}, {"modelled", modelled}};
  if (!p.error.empty()) {
    j["error"] = p.error;
    return j;
  }
  j[modelled ? "predicted_ms" : "median_ms"] = p.median_ms;
  if (!modelled) j["min_ms"] = p.min_ms, j["spread"] = p.spread, j["reps"] = p.reps;
  j["bytes"] = p.bytes;
  j["flops"] = p.flops;
  j["gbps"] = p.gbps;
  j["tflops"] = p.tflops;
  j["baseline"] = p.baseline.empty() ? json(nullptr) : json(p.baseline);
  j["baseline_ms"] = p.baseline_ms;
  j["baseline_gbps"] = p.baseline_gbps;
  j["of_baseline"] = p.of_baseline;
  j["check"] = p.check;
  if (modelled) {
    j["limited_by"] = p.limited_by;
    j["ctas"] = p.ctas;
    j["ctas_per_sm"] = p.ctas_per_sm;
    j["waves"] = p.waves;
    j["wait_fraction"] = p.wait_fraction;
  }
  return j;
}

std::string label_of(point const& p, std::vector<std::string> const& names) {
  std::vector<std::string> s;
  for (auto const& n : names) s.push_back(fmt::format("{}={}", n, p.values.at(n)));
  return fmt::format("{}", fmt::join(s, " "));
}

}  // namespace

std::string table(report const& r) {
  const bool model = r.modelled();
  std::string out = model ? fmt::format("{} -- MODEL: every time below is predicted by the cost model, none is measured\n", r.kernel)
                          : fmt::format("{} on {} (measured: CUDA events, median of repeated launches{})\n", r.kernel, r.device, "");
  if (model) out += fmt::format("machine: {}\n", r.device);
  // The fixed parameters once, the swept ones per row.
  if (!r.points.empty()) {
    std::vector<std::string> fixed;
    std::vector<std::string> run_time;  // --dynamic NAME: "NAME?" = 1 (registry.hpp)
    for (auto const& [n, v] : r.points.front().values) {
      if (!n.empty() && n.back() == '?') run_time.push_back(n.substr(0, n.size() - 1));
      else if (std::find(r.axes.begin(), r.axes.end(), n) == r.axes.end()) fixed.push_back(fmt::format("{}={}", n, v));
    }
    out += fmt::format("fixed: {}\n", fmt::join(fixed, " "));
    if (!run_time.empty()) out += fmt::format("run-time extents (one compiled kernel for every point): {}\n", fmt::join(run_time, " "));
  }
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> head = r.axes;
  if (model) {
    for (auto const* h : {"MODEL ms", "MODEL GB/s", "MODEL TFLOP/s", "D2D MODEL ms", "of D2D", "CTAs", "waves", "wg waits", "limited by"}) head.push_back(h);
  } else {
    for (auto const* h : {"median ms", "min ms", "spread", "reps", "GB/s", "TFLOP/s", "D2D ms", "D2D GB/s", "of D2D", "check"}) head.push_back(h);
  }
  rows.push_back(head);
  for (auto const& p : r.points) {
    std::vector<std::string> row;
    for (auto const& a : r.axes) row.push_back(std::to_string(p.values.at(a)));
    if (!p.error.empty()) {
      row.push_back("error: " + p.error);
      rows.push_back(row);
      continue;
    }
    const std::string base = p.baseline.empty() ? "-" : fmt::format("{:.4f}", p.baseline_ms);
    const std::string of = p.baseline.empty() ? "-" : pct(p.of_baseline);
    if (model) {
      std::vector<std::string> waits;
      for (auto f : p.wait_fraction) waits.push_back(pct(f));
      for (auto s : {fmt::format("{:.4f}", p.median_ms), fmt::format("{:.0f}", p.gbps), fmt::format("{:.3f}", p.tflops), base, of,
                     std::to_string(p.ctas), std::to_string(p.waves), fmt::format("{}", fmt::join(waits, "/")), p.limited_by})
        row.push_back(s);
    } else {
      for (auto s : {fmt::format("{:.4f}", p.median_ms), fmt::format("{:.4f}", p.min_ms), pct(p.spread), std::to_string(p.reps),
                     fmt::format("{:.0f}", p.gbps), fmt::format("{:.3f}", p.tflops), base,
                     p.baseline.empty() ? std::string("-") : fmt::format("{:.0f}", p.baseline_gbps), of, p.check})
        row.push_back(s);
    }
    rows.push_back(row);
  }
  std::vector<std::size_t> width;
  for (auto const& row : rows)
    for (std::size_t c = 0; c < row.size(); ++c) {
      if (width.size() <= c) width.push_back(0);
      if (c + 1 < row.size()) width[c] = std::max(width[c], row[c].size());
    }
  for (auto const& row : rows) {
    std::string line;
    for (std::size_t c = 0; c < row.size(); ++c) line += c + 1 < row.size() ? fmt::format("{:>{}}  ", row[c], width[c]) : row[c];
    out += line + "\n";
  }
  if (model) out += "(MODEL: \"wg waits\" is the share of the CTA's time each warpgroup spends blocked; docs/bench.md says how the model works)\n";
  return out;
}

std::string to_json(report const& r) {
  json j = {{"kind", r.modelled() ? "stagecraft bench MODEL (predicted, not measured)" : "stagecraft bench measurement"},
            {"modelled", r.modelled()}, {"kernel", r.kernel}, {"backend", backend_name(r.where)}, {"device", r.device}, {"axes", r.axes},
            {"points", json::array()}};
  for (auto const& p : r.points) j["points"].push_back(point_obj(p, r.modelled()));
  return j.dump(2) + "\n";
}

std::string to_csv(report const& r) {
  std::set<std::string> names;
  for (auto const& p : r.points)
    for (auto const& [n, _] : p.values) names.insert(n);
  std::string out = "kernel,backend,modelled";
  for (auto const& n : names) out += "," + csv_quote(n);
  out += ",time_ms,min_ms,spread,reps,bytes,flops,gbps,tflops,baseline,baseline_ms,baseline_gbps,of_baseline,check,limited_by,error\n";
  for (auto const& p : r.points) {
    out += fmt::format("{},{},{}", csv_quote(r.kernel), backend_name(r.where), r.modelled() ? "MODEL" : "measured");
    for (auto const& n : names) out += "," + (p.values.count(n) ? std::to_string(p.values.at(n)) : std::string());
    out += fmt::format(",{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", p.median_ms, r.modelled() ? std::string() : fmt::format("{}", p.min_ms),
                       r.modelled() ? std::string() : fmt::format("{}", p.spread), p.reps, p.bytes, p.flops, p.gbps, p.tflops, csv_quote(p.baseline),
                       p.baseline_ms, p.baseline_gbps, p.of_baseline, csv_quote(p.check), csv_quote(p.limited_by), csv_quote(p.error));
  }
  return out;
}

std::string to_svg(report const& r) {
  const bool gb = memory_bound(r);
  const std::string metric = gb ? "GB/s" : "TFLOP/s";
  const std::string xname = r.axes.empty() ? "configuration" : r.axes.front();
  std::vector<std::string> others(r.axes.size() > 1 ? r.axes.begin() + 1 : r.axes.end(), r.axes.end());
  auto yval = [&](point const& p) { return gb ? p.gbps : p.tflops; };
  auto xval = [&](point const& p) { return r.axes.empty() ? static_cast<double>(p.index) : static_cast<double>(p.values.at(xname)); };

  // One series per combination of the other swept parameters.
  std::map<std::string, std::vector<point const*>> series;
  double xlo = 1e300, xhi = -1e300, yhi = 0;
  for (auto const& p : r.points) {
    if (!p.error.empty()) continue;
    series[label_of(p, others)].push_back(&p);
    xlo = std::min(xlo, xval(p)), xhi = std::max(xhi, xval(p));
    yhi = std::max({yhi, yval(p), gb ? p.baseline_gbps : 0.0});
  }
  const int W = 760, H = 460, L = 80, R = 220, T = 60, B = 60;
  svg s(W, H);
  const std::string title = r.modelled() ? fmt::format("{}: {} against {} -- MODEL of {} (predicted, not measured)", r.kernel, metric, xname, r.machine)
                                         : fmt::format("{}: {} against {} -- measured on {}", r.kernel, metric, xname, r.device);
  s.text(W / 2.0, 24, title, 15, "middle", " font-weight=\"bold\"");
  if (r.modelled()) s.text(W / 2.0, 42, "a cost model's prediction: docs/bench.md says what it models and what it does not", 11, "middle", " fill=\"#a00\"");
  if (series.empty()) {
    s.text(W / 2.0, H / 2.0, "no point ran (see the table for the errors)", 14, "middle");
    return s.str();
  }
  if (xhi == xlo) xlo -= 1, xhi += 1;
  const auto yt = ticks(0, yhi * 1.1 > 0 ? yhi * 1.1 : 1);
  const double ytop = yt.back();
  auto X = [&](double x) { return L + (x - xlo) / (xhi - xlo) * (W - L - R); };
  auto Y = [&](double y) { return H - B - y / ytop * (H - T - B); };
  // Axes, grid and labels.
  for (double y : yt) {
    s.line(L, Y(y), W - R, Y(y), "#e4e4e4");
    s.text(L - 6, Y(y) + 4, fmt::format("{:g}", y), 11, "end");
  }
  std::set<double> xs;
  for (auto const& [_, pts] : series)
    for (auto const* p : pts) xs.insert(xval(*p));
  for (double x : xs) {
    s.line(X(x), H - B, X(x), H - B + 5, "#333");
    s.text(X(x), H - B + 18, fmt::format("{:g}", x), 11, "middle");
  }
  s.line(L, H - B, W - R, H - B, "#333", 1.5);
  s.line(L, T, L, H - B, "#333", 1.5);
  s.text((L + W - R) / 2.0, H - 18, xname, 13, "middle");
  s.text(18, (T + H - B) / 2.0, r.modelled() ? metric + " (MODEL)" : metric, 13, "middle",
         fmt::format(" transform=\"rotate(-90 18 {:.1f})\"", (T + H - B) / 2.0));
  const char* colours[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf"};
  int ci = 0, ly = T + 10;
  std::vector<std::pair<std::string, std::vector<std::pair<double, double>>>> baselines;
  for (auto const& [name, pts0] : series) {
    auto pts = pts0;
    std::sort(pts.begin(), pts.end(), [&](auto a, auto b) { return xval(*a) < xval(*b); });
    const std::string col = colours[ci++ % 8];
    std::vector<std::pair<double, double>> line, base;
    for (auto const* p : pts) {
      line.emplace_back(X(xval(*p)), Y(yval(*p)));
      if (gb && !p->baseline.empty()) base.emplace_back(X(xval(*p)), Y(p->baseline_gbps));
    }
    s.polyline(line, col, 2.5);
    for (auto [x, y] : line) s.circle(x, y, 3.5, col);
    s.line(W - R + 15, ly, W - R + 40, ly, col, 2.5);
    s.text(W - R + 46, ly + 4, name.empty() ? r.kernel : name, 11);
    ly += 18;
    baselines.push_back({col, base});
  }
  // The baseline of each series, dashed; one grey line when they coincide (the same bytes).
  bool same = true;
  for (auto const& b : baselines) same = same && b.second == baselines.front().second;
  for (auto const& [col, base] : baselines) {
    if (base.empty()) continue;
    s.polyline(base, same ? std::string("#555") : col, 1.5, "6 4");
    s.line(W - R + 15, ly, W - R + 40, ly, same ? std::string("#555") : col, 1.5, "6 4");
    s.text(W - R + 46, ly + 4, r.modelled() ? "D2D copy (MODEL)" : "D2D copy, same run", 11);
    ly += 18;
    if (same) break;
  }
  return s.str();
}

std::string point_json(point const& p) {
  json j = point_obj(p, false);  // the measured layout has every field; "modelled" is set by the header
  j["median_ms"] = p.median_ms;
  j["baseline"] = p.baseline;
  j["limited_by"] = p.limited_by;
  j["ctas"] = p.ctas;
  j["ctas_per_sm"] = p.ctas_per_sm;
  j["waves"] = p.waves;
  j["wait_fraction"] = p.wait_fraction;
  j.erase("modelled");
  return j.dump();
}

point point_from_json(std::string const& line) {
  const auto j = json::parse(line);
  point p;
  p.index = j.at("index").get<std::size_t>();
  for (auto const& [n, v] : j.at("params").items()) p.values[n] = v.get<std::int64_t>();
  if (j.contains("error")) {
    p.error = j["error"].get<std::string>();
    return p;
  }
  p.median_ms = j.at("median_ms").get<double>();
  p.min_ms = j.at("min_ms").get<double>();
  p.spread = j.at("spread").get<double>();
  p.reps = j.at("reps").get<int>();
  p.bytes = j.at("bytes").get<double>();
  p.flops = j.at("flops").get<double>();
  p.gbps = j.at("gbps").get<double>();
  p.tflops = j.at("tflops").get<double>();
  p.baseline = j.at("baseline").get<std::string>();
  p.baseline_ms = j.at("baseline_ms").get<double>();
  p.baseline_gbps = j.at("baseline_gbps").get<double>();
  p.of_baseline = j.at("of_baseline").get<double>();
  p.check = j.at("check").get<std::string>();
  p.limited_by = j.at("limited_by").get<std::string>();
  p.ctas = j.at("ctas").get<std::int64_t>();
  p.ctas_per_sm = j.at("ctas_per_sm").get<int>();
  p.waves = j.at("waves").get<std::int64_t>();
  p.wait_fraction = j.at("wait_fraction").get<std::vector<double>>();
  return p;
}

}  // namespace stagecraft::bench
