// `stagecraft` over a registry with kernels whose explorations fail: the zoo's handoff with one
// release barrier for two stages (a missed phase that needs a PCT interleaving) and two races,
// next to their fixed twins. The sharding test (shard_merge.cmake) needs failing seeds to prove
// that merging keeps the unsharded run's first failure, not whichever shard reported first.
#include <stagecraft/cli.hpp>

#include "../zoo/zoo.hpp"

using namespace stagecraft;

int main(int argc, char** argv) {
  registry r;
  for (auto const& z : zoo::all()) {
    const std::string name = z.name;
    if (name != "zoo_single_release" && name != "zoo_one_consumer_releases" && name != "zoo_refill_while_storing") continue;
    for (auto v : {zoo::variant::buggy, zoo::variant::fixed}) {
      auto build = z.build;
      auto ref = z.reference;
      r.add({.name = name + (v == zoo::variant::buggy ? "" : "_fixed"),
             .summary = v == zoo::variant::buggy ? "a zoo kernel with its mistake" : "its fixed twin",
             .params = {},
             .build = [build, v](param_values const&) { return build(v); },
             .reference = [ref](std::vector<host_tensor>& t, param_values const&) { ref(t); }});
    }
  }
  return cli::main(argc, argv, r);
}
