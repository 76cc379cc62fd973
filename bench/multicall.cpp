// The GPU bundle's one binary (scripts/gpu_bundle.sh, docs/gpu.md): the CLI, the GPU tests and
// the benchmarks in one executable, so the front end, the backends and every kernel are in the
// bundle once (as five static binaries they were 41 MB, each carrying all of them). It runs the
// tool its name says (argv[0]'s file name: a link or a copy named stagecraft, gpu_tests, ...),
// or, started under its own name, the tool its first argument names:
//
//   stagecraft-gpu gpu_tests "~[watchdog]"      # as bin/gpu_tests "~[watchdog]"
//   stagecraft-gpu --tools                      # the tools it has, one per line
#include <cstdio>
#include <string>
#include <string_view>

int stagecraft_main(int, char**);
int gpu_tests_main(int, char**);
int gpu_bench_main(int, char**);
int gemm_bench_main(int, char**);
#ifdef STAGECRAFT_MULTICALL_ATTENTION
int attention_bench_main(int, char**);
#endif

namespace {

struct tool {
  std::string_view name;
  int (*run)(int, char**);
};
constexpr tool tools[] = {
    {"stagecraft", stagecraft_main}, {"gpu_tests", gpu_tests_main}, {"gpu_bench", gpu_bench_main}, {"gemm_bench", gemm_bench_main},
#ifdef STAGECRAFT_MULTICALL_ATTENTION
    {"attention_bench", attention_bench_main},
#endif
};

std::string_view file_name(const char* path) {
  const std::string_view p(path ? path : "");
  const auto slash = p.rfind('/');
  return slash == std::string_view::npos ? p : p.substr(slash + 1);
}

}  // namespace

int main(int argc, char** argv) {
  for (auto const& t : tools)
    if (file_name(argv[0]) == t.name) return t.run(argc, argv);
  if (argc == 2 && std::string_view(argv[1]) == "--tools") {
    for (auto const& t : tools) std::printf("%.*s\n", static_cast<int>(t.name.size()), t.name.data());
    return 0;
  }
  if (argc >= 2)
    for (auto const& t : tools)
      if (std::string_view(argv[1]) == t.name) return t.run(argc - 1, argv + 1);
  std::fprintf(stderr, "usage: %s TOOL [ARGS...], or start it through a link named TOOL; the tools:",
               std::string(file_name(argv[0])).c_str());
  for (auto const& t : tools) std::fprintf(stderr, " %.*s", static_cast<int>(t.name.size()), t.name.data());
  std::fprintf(stderr, "\n");
  return 64;
}
