// Replays fuzz inputs without libFuzzer: each argument is a file or a directory of files, each
// file one input to LLVMFuzzerTestOneInput. This is how the committed corpus (seeds and every
// crash the fuzzers found) runs as an ordinary test in every build, with any compiler.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size);

int main(int argc, char** argv) {
  std::vector<std::filesystem::path> files;
  for (int i = 1; i < argc; ++i) {
    // Absolute: a target may change directory (fuzz_cli runs in a scratch one).
    const std::filesystem::path p = std::filesystem::absolute(argv[i]);
    if (std::filesystem::is_directory(p)) {
      for (auto const& e : std::filesystem::directory_iterator(p))
        if (e.is_regular_file()) files.push_back(e.path());
    } else if (std::filesystem::is_regular_file(p)) {
      files.push_back(p);
    } else {
      std::fprintf(stderr, "replay: %s is neither a file nor a directory\n", argv[i]);
      return 2;
    }
  }
  std::sort(files.begin(), files.end());  // a failure names the same input on every machine
  if (files.empty()) {
    std::fprintf(stderr, "replay: no inputs found (an empty corpus tests nothing)\n");
    return 2;
  }
  for (auto const& f : files) {
    std::ifstream in(f, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (!in && !in.eof()) {
      std::fprintf(stderr, "replay: cannot read %s\n", f.string().c_str());
      return 2;
    }
    std::fprintf(stderr, "replay: %s (%zu bytes)\n", f.string().c_str(), bytes.size());
    LLVMFuzzerTestOneInput(reinterpret_cast<std::uint8_t const*>(bytes.data()), bytes.size());
  }
  std::fprintf(stderr, "replay: %zu input(s), no failure\n", files.size());
  return 0;
}
