// `stagecraft bench` in the CLI: its flags live with it (cli/bench.cpp), cli.cpp only asks
// whether it was chosen and runs it.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "shard.hpp"
#include "stagecraft/registry.hpp"

namespace CLI {
class App;
}

namespace stagecraft::cli::detail {

struct bench_command {
  virtual ~bench_command() = default;
  virtual bool parsed() const = 0;
  virtual int run(registry const& kernels) = 0;
};
std::unique_ptr<bench_command> add_bench(CLI::App& app);

// merge's half for bench shards (shard.cpp calls it for "command": "bench").
int merge_bench(nlohmann::ordered_json const& config, std::vector<nlohmann::ordered_json> const& records, std::string& lines, merge_request const& req);

}  // namespace stagecraft::cli::detail
