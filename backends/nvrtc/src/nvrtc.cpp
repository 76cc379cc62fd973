#include "stagecraft/nvrtc/nvrtc.hpp"

#include <nvrtc.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <regex>
#include <sstream>
#include <unordered_map>

#include <fmt/format.h>

namespace stagecraft::nvrtc {
namespace {

const char* arch_option(ir::Target t) { return t == ir::Target::sm_90a ? "--gpu-architecture=sm_90a" : "--gpu-architecture=sm_100a"; }

// The options every compile uses; part of the cache key.
std::vector<const char*> compile_options(ir::Target t) {
  // --fmad=false: every multiply and add rounds on its own, as in the interpreter and the C++
  // references, so GPU results compare bit for bit.
  return {arch_option(t), "-std=c++17", "--ptxas-options=-v", "-default-device", "--extra-device-vectorization", "--fmad=false"};
}

std::uint64_t fnv(std::uint64_t h, std::string_view s) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

std::mutex& cache_mutex() {
  static std::mutex m;
  return m;
}
std::unordered_map<std::uint64_t, compiled>& memory() {
  static std::unordered_map<std::uint64_t, compiled> m;
  return m;
}

void check(nvrtcResult r, const char* what) {
  if (r != NVRTC_SUCCESS) throw compile_error(fmt::format("NVRTC {} failed: {}", what, nvrtcGetErrorString(r)));
}

// The generated lines around the first error NVRTC reports ("k.cu(LINE): error ...").
std::string context(std::string const& source, std::string const& log) {
  std::smatch m;
  if (!std::regex_search(log, m, std::regex(R"(\((\d+)\): error)"))) return {};
  const int line = std::stoi(m[1]);
  std::istringstream in(source);
  std::string text, out;
  for (int n = 1; std::getline(in, text); ++n)
    if (n >= line - 3 && n <= line + 3) out += fmt::format("{}{:5} | {}\n", n == line ? ">" : " ", n, text);
  return out;
}

void parse_resources(compiled& c) {
  std::smatch m;
  if (std::regex_search(c.log, m, std::regex(R"((\d+) bytes spill stores, (\d+) bytes spill loads)")))
    c.spill_bytes = std::stoi(m[1]) + std::stoi(m[2]);
  if (std::regex_search(c.log, m, std::regex(R"(Used (\d+) registers)"))) c.registers = std::stoi(m[1]);
}

// ---- disk cache: one file per key, written to a temporary name and renamed into place, so two
// processes filling the cache at once never see half a file.
std::filesystem::path entry_path(std::string const& dir, std::uint64_t key) { return std::filesystem::path(dir) / fmt::format("{:016x}.scjit", key); }

void write_blob(std::ostream& o, std::string_view s) {
  const std::uint64_t n = s.size();
  o.write(reinterpret_cast<const char*>(&n), sizeof n);
  o.write(s.data(), static_cast<std::streamsize>(n));
}
bool read_blob(std::istream& in, std::string& s) {
  std::uint64_t n = 0;
  if (!in.read(reinterpret_cast<char*>(&n), sizeof n) || n > (std::uint64_t{1} << 30)) return false;
  s.resize(n);
  return static_cast<bool>(in.read(s.data(), static_cast<std::streamsize>(n)));
}
constexpr std::string_view magic = "stagecraft-jit-1";

bool load_disk(std::string const& dir, compiled& c) {
  std::ifstream in(entry_path(dir, c.key), std::ios::binary);
  if (!in) return false;
  std::string head, cubin;
  if (!read_blob(in, head) || head != magic || !read_blob(in, c.ptx) || !read_blob(in, cubin) || !read_blob(in, c.log)) return false;
  c.cubin.assign(cubin.begin(), cubin.end());
  return true;
}

void store_disk(std::string const& dir, compiled const& c) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return;  // a cache we cannot write is not an error
  const auto final_path = entry_path(dir, c.key);
  const auto tmp = final_path.string() + fmt::format(".{}.tmp", ::getpid());
  {
    std::ofstream o(tmp, std::ios::binary | std::ios::trunc);
    if (!o) return;
    write_blob(o, magic);
    write_blob(o, c.ptx);
    write_blob(o, std::string_view(c.cubin.data(), c.cubin.size()));
    write_blob(o, c.log);
    if (!o) return;
  }
  std::filesystem::rename(tmp, final_path, ec);
  if (ec) std::filesystem::remove(tmp, ec);
}

}  // namespace

std::string nvrtc_version() {
  int major = 0, minor = 0;
  nvrtcVersion(&major, &minor);
  return fmt::format("{}.{}", major, minor);
}

std::uint64_t cache_key(ir::Kernel const& k, ir::Target target) {
  std::uint64_t h = fnv(14695981039346656037ull, fmt::format("{:016x}|{}|", ir::hash(k), ir::target_name(target)));
  for (auto const* o : compile_options(target)) h = fnv(h, o);
  return fnv(h, nvrtc_version());
}

std::string cache_directory(options const& o) {
  if (!o.cache_dir.empty()) return o.cache_dir;
  if (const char* d = std::getenv("STAGECRAFT_CACHE_DIR"); d && *d) return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/stagecraft";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/stagecraft";
  return "/tmp/stagecraft-cache";
}

void clear_memory_cache() {
  std::lock_guard lock(cache_mutex());
  memory().clear();
}

compiled compile_generated(generated code, ir::Target target) {
  compiled c;
  c.code = std::move(code);
  c.target = target;
  nvrtcProgram prog = nullptr;
  check(nvrtcCreateProgram(&prog, c.code.source.c_str(), (c.code.entry + ".cu").c_str(), 0, nullptr, nullptr), "program creation");
  auto opts = compile_options(target);
  const nvrtcResult r = nvrtcCompileProgram(prog, static_cast<int>(opts.size()), opts.data());
  std::size_t n = 0;
  nvrtcGetProgramLogSize(prog, &n);
  c.log.assign(n, '\0');
  if (n) nvrtcGetProgramLog(prog, c.log.data());
  while (!c.log.empty() && c.log.back() == '\0') c.log.pop_back();
  if (r != NVRTC_SUCCESS) {
    nvrtcDestroyProgram(&prog);
    throw compile_error(fmt::format(
        "internal error (a bug in stagecraft's code generator, please report it): NVRTC rejected the code generated for "
        "kernel '{}' on {}: {}\n{}\n{}",
        c.code.entry, ir::target_name(target), nvrtcGetErrorString(r), c.log, context(c.code.source, c.log)));
  }
  std::size_t ptx_n = 0, cubin_n = 0;
  check(nvrtcGetPTXSize(prog, &ptx_n), "PTX size");
  c.ptx.assign(ptx_n, '\0');
  check(nvrtcGetPTX(prog, c.ptx.data()), "PTX");
  while (!c.ptx.empty() && c.ptx.back() == '\0') c.ptx.pop_back();
  check(nvrtcGetCUBINSize(prog, &cubin_n), "CUBIN size");
  c.cubin.resize(cubin_n);
  check(nvrtcGetCUBIN(prog, c.cubin.data()), "CUBIN");
  nvrtcDestroyProgram(&prog);
  parse_resources(c);
  return c;
}

compiled compile(ir::Kernel const& k, ir::Target target, options const& o) {
  const std::uint64_t key = cache_key(k, target);
  if (o.memory_cache) {
    std::lock_guard lock(cache_mutex());
    if (auto it = memory().find(key); it != memory().end()) {
      compiled c = it->second;
      c.origin = compiled::source::memory_cache;
      return c;
    }
  }
  compiled c;
  c.code = generate(k);
  c.target = target;
  // On disk the key also covers the generated source: a binary built by an older code generator
  // must never be reused (within one process the generator cannot change, so memory needs no more).
  c.key = fnv(key, c.code.source);
  const std::string dir = cache_directory(o);
  if (o.disk_cache && load_disk(dir, c)) {
    c.origin = compiled::source::disk_cache;
  } else {
    auto fresh = compile_generated(std::move(c.code), target);
    fresh.key = c.key;
    c = std::move(fresh);
    if (o.disk_cache) store_disk(dir, c);
  }
  parse_resources(c);
  if (o.memory_cache) {
    std::lock_guard lock(cache_mutex());
    memory()[key] = c;
  }
  return c;
}

}  // namespace stagecraft::nvrtc
