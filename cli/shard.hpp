// Sharding for many machines: `run --explore N --shard i/N` and `bench --sweep ... --shard i/N`
// each do their share of the work units and write JSON lines; `stagecraft merge` combines the
// shards into exactly what one unsharded run writes (docs/bench.md).
//
// A unit is one (kernel, schedule seed) pair of an exploration, or one point of a sweep; unit u
// belongs to shard u mod N, so every shard gets a fair slice of every kernel's seeds.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "stagecraft/registry.hpp"

namespace stagecraft::cli::detail {

struct shard_spec {
  int index = 0, count = 1;
  bool owns(std::int64_t unit) const { return unit % count == index; }
  // The first unit at or after `from` (>= 0) that this shard owns; the next are count apart.
  std::int64_t first_owned(std::int64_t from) const { return from + ((index - from % count) % count + count) % count; }
  bool sharded() const { return count > 1; }
};
// "i/N" with 0 <= i < N; a usage_error naming the text otherwise.
shard_spec parse_shard(std::string const& text);

struct explore_request {
  std::string policy = "eager";
  std::uint64_t seed = 0, input_seed = 1;
  int explore = 0;  // 0: one schedule
  int pct_depth = 3;
  bool checks = true;
  shard_spec shard;
  std::string results;  // JSON-lines file ("" : none)
  bool progress = false;  // a progress line on stderr (a terminal)
};

// `run [--all | KERNEL] [--explore N] --shard i/N --results F`: this shard's schedules of every
// kernel, one JSON line per kernel it touched after a header line. Returns the worst exit code
// of the schedules it ran (0, 1 wrong result, 2 protocol error).
int run_explore_records(std::vector<std::pair<kernel_entry const*, param_values>> const& kernels, explore_request const& r);

// `stagecraft merge FILES... [-o F] [--json F --csv F --svg F]`: checks that the files are the
// shards 0..N-1 of one command (each exactly once), writes the merged JSON lines, and returns
// the exit code the unsharded run would have had.
struct merge_request {
  std::vector<std::string> files;
  std::optional<std::string> out, json, csv, svg;
};
int merge(merge_request const& m);

// A shard file as `merge` reads it: the header and the records, each line checked against the
// schema its writer writes (run_explore_records; bench's shard lines and bench::point_json):
// every field present, of its type and range, none unknown; every seed and point owned by the
// file's shard and none missing. Anything else is a usage_error "merge: 'F' line N: what".
struct shard_record {
  int line = 0;
  nlohmann::ordered_json value;
};
struct shard_file {
  std::string path;
  std::string command;  // "run" or "bench"
  shard_spec shard;
  nlohmann::ordered_json header;
  int header_line = 0;
  std::vector<shard_record> records;
};
shard_file read_shard_file(std::string const& path);
// Where two shards' configurations first differ (path "config.first_seed", the values as JSON).
struct json_difference {
  std::string path, here, there;
};
std::optional<json_difference> first_difference(nlohmann::ordered_json const& here, nlohmann::ordered_json const& there, std::string const& path);

}  // namespace stagecraft::cli::detail
