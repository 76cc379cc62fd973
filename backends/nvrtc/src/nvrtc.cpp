#include "stagecraft/nvrtc/nvrtc.hpp"

#include <unistd.h>

#include <charconv>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <regex>
#include <sstream>
#include <unordered_map>

#include <fmt/format.h>

#include "library.hpp"
#include "stagecraft/nvrtc/disk_cache.hpp"

namespace stagecraft::nvrtc {
namespace {

const char* arch_option(ir::Target t) { return t == ir::Target::sm_90a ? "--gpu-architecture=sm_90a" : "--gpu-architecture=sm_100a"; }

// The options every compile uses; part of the cache key.
std::vector<const char*> compile_options(ir::Target t, ir::math_mode m) {
  // --fmad=false: every multiply and add rounds on its own, as in the interpreter and the C++
  // references, so GPU results compare bit for bit.
  // Fast mode contracts a * b + c into one FFMA (one rounding fewer: within the fast bound).
  return {arch_option(t), "-std=c++17", "--ptxas-options=-v", "-default-device", "--extra-device-vectorization",
          m == ir::math_mode::fast ? "--fmad=true" : "--fmad=false"};
}

std::uint64_t fnv(std::uint64_t h, std::string_view s) { return disk_cache::digest(s, h); }

std::mutex& cache_mutex() {
  static std::mutex m;
  return m;
}
std::unordered_map<std::uint64_t, compiled>& memory() {
  static std::unordered_map<std::uint64_t, compiled> m;
  return m;
}

void check(detail::library const& lib, nvrtcResult r, const char* what) {
  if (r != NVRTC_SUCCESS) throw compile_error(fmt::format("NVRTC {} failed: {}", what, lib.error_string(r)));
}

// A decimal that ptxas printed; out-of-range or absent digits give -1, never an exception (a
// log can come from a damaged cache file).
int parse_int(std::string const& digits) {
  int v = -1;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  return ec == std::errc() && end == digits.data() + digits.size() ? v : -1;
}

// The generated lines around the first error NVRTC reports ("k.cu(LINE): error ...").
std::string context(std::string const& source, std::string const& log) {
  std::smatch m;
  if (!std::regex_search(log, m, std::regex(R"(\((\d+)\): error)"))) return {};
  const int line = parse_int(m[1]);
  std::istringstream in(source);
  std::string text, out;
  for (int n = 1; std::getline(in, text); ++n)
    if (n >= line - 3 && n <= line + 3) out += fmt::format("{}{:5} | {}\n", n == line ? ">" : " ", n, text);
  return out;
}

void parse_resources(compiled& c) {
  std::smatch m;
  if (std::regex_search(c.log, m, std::regex(R"((\d+) bytes spill stores, (\d+) bytes spill loads)"))) {
    const int stores = parse_int(m[1]), loads = parse_int(m[2]);
    c.spill_bytes = stores < 0 || loads < 0 ? -1 : stores + loads;
  }
  if (std::regex_search(c.log, m, std::regex(R"(Used (\d+) registers)"))) c.registers = parse_int(m[1]);
}

// ---- disk cache: one file per key, owned by the user and put in place whole
// (disk_cache::write_atomically), so two processes filling the cache at once never see half a
// file and no planted link is followed. The directory rules are disk_cache::open's.
std::filesystem::path entry_path(std::filesystem::path const& dir, std::uint64_t key) { return dir / fmt::format("{:016x}.scjit", key); }

void put_blob(std::string& o, std::string_view s) {
  const std::uint64_t n = s.size();
  o.append(reinterpret_cast<const char*>(&n), sizeof n);
  o.append(s);
}
// A length-prefixed string at `at`. The length is checked against what is left of the file
// before anything is copied, so a damaged header cannot ask for gigabytes.
bool take_blob(std::string_view file, std::size_t& at, std::string& s) {
  std::uint64_t n = 0;
  if (file.size() - at < sizeof n) return false;
  std::memcpy(&n, file.data() + at, sizeof n);
  at += sizeof n;
  if (n > file.size() - at) return false;
  s.assign(file.substr(at, n));
  at += n;
  return true;
}
// Version 2 ends with a digest of the payload: a file whose framing is intact but whose bytes are
// not what was written (a torn disk, a stray edit) is recompiled, never served.
constexpr std::string_view magic = "stagecraft-jit-2";

std::uint64_t payload_hash(compiled const& c) {
  std::uint64_t h = disk_cache::digest(c.ptx);
  h = disk_cache::digest("|", h);
  h = disk_cache::digest(std::string_view(c.cubin.data(), c.cubin.size()), h);
  return disk_cache::digest(c.log, disk_cache::digest("|", h));
}

bool load_disk(disk_cache::directory const& dir, compiled& c) {
  if (!dir.readable()) return false;
  const int fd = disk_cache::open_entry(entry_path(dir.path, c.key));
  if (fd < 0) return false;  // absent, or not a file of ours: compiled afresh and replaced
  const auto file = disk_cache::read_all(fd);
  ::close(fd);
  if (!file) return false;
  std::size_t at = 0;
  std::string head, ptx, cubin, log, hash;
  if (!take_blob(*file, at, head) || head != magic || !take_blob(*file, at, ptx) || !take_blob(*file, at, cubin) ||
      !take_blob(*file, at, log) || !take_blob(*file, at, hash) || at != file->size() || hash.size() != sizeof(std::uint64_t))
    return false;
  compiled got;
  got.ptx = std::move(ptx);
  got.cubin.assign(cubin.begin(), cubin.end());
  got.log = std::move(log);
  std::uint64_t want = 0;
  std::memcpy(&want, hash.data(), sizeof want);
  if (payload_hash(got) != want) return false;
  c.ptx = std::move(got.ptx);
  c.cubin = std::move(got.cubin);
  c.log = std::move(got.log);
  return true;
}

// A cache we cannot write is not an error: the result is still returned, and the reason said once.
void store_disk(disk_cache::directory const& dir, compiled const& c) {
  if (!dir.writable()) return;
  std::string file;
  put_blob(file, magic);
  put_blob(file, c.ptx);
  put_blob(file, std::string_view(c.cubin.data(), c.cubin.size()));
  put_blob(file, c.log);
  const std::uint64_t h = payload_hash(c);
  put_blob(file, std::string_view(reinterpret_cast<const char*>(&h), sizeof h));
  if (auto error = disk_cache::write_atomically(entry_path(dir.path, c.key), file); !error.empty())
    disk_cache::warn_once(fmt::format("the NVRTC cache entry was not saved: {}", error));
}

}  // namespace

std::string nvrtc_version() {
  int major = 0, minor = 0;
  detail::load().version(&major, &minor);
  return fmt::format("{}.{}", major, minor);
}

std::string library_path() { return detail::load().path; }

std::uint64_t cache_key(ir::Kernel const& k, ir::Target target, codegen_options const& g) {
  std::uint64_t h = fnv(14695981039346656037ull, fmt::format("{:016x}|{}|watchdog={}|math={}|", ir::hash(k), ir::target_name(target), g.watchdog_ms, ir::math_mode_name(g.math)));
  // The generated code spells the user's names (comments, watchdog reports), so a kernel renamed
  // must not be handed the code of its twin; its source locations appear nowhere in it.
  for (std::size_t a = 0; a < k.allocs.size(); ++a) h = fnv(h, ir::alloc_name(k, static_cast<int>(a)) + "|");
  for (auto const* o : compile_options(target, g.math)) h = fnv(h, o);
  return fnv(h, nvrtc_version());
}

std::string cache_directory(options const& o) { return disk_cache::root(o.cache_dir).string(); }

void clear_memory_cache() {
  std::lock_guard lock(cache_mutex());
  memory().clear();
}

compiled compile_generated(generated code, ir::Target target) {
  auto const& lib = detail::load();
  compiled c;
  c.code = std::move(code);
  c.target = target;
  nvrtcProgram prog = nullptr;
  check(lib, lib.create(&prog, c.code.source.c_str(), (c.code.entry + ".cu").c_str(), 0, nullptr, nullptr), "program creation");
  auto opts = compile_options(target, c.code.options.math);
  const nvrtcResult r = lib.compile(prog, static_cast<int>(opts.size()), opts.data());
  std::size_t n = 0;
  lib.log_size(prog, &n);
  c.log.assign(n, '\0');
  if (n) lib.log(prog, c.log.data());
  while (!c.log.empty() && c.log.back() == '\0') c.log.pop_back();
  if (r != NVRTC_SUCCESS) {
    lib.destroy(&prog);
    throw compile_error(fmt::format(
        "internal error (a bug in stagecraft's code generator, please report it): NVRTC rejected the code generated for "
        "kernel '{}' on {}: {}\n{}\n{}",
        c.code.entry, ir::target_name(target), lib.error_string(r), c.log, context(c.code.source, c.log)));
  }
  std::size_t ptx_n = 0, cubin_n = 0;
  check(lib, lib.ptx_size(prog, &ptx_n), "PTX size");
  c.ptx.assign(ptx_n, '\0');
  check(lib, lib.ptx(prog, c.ptx.data()), "PTX");
  while (!c.ptx.empty() && c.ptx.back() == '\0') c.ptx.pop_back();
  check(lib, lib.cubin_size(prog, &cubin_n), "CUBIN size");
  c.cubin.resize(cubin_n);
  check(lib, lib.cubin(prog, c.cubin.data()), "CUBIN");
  lib.destroy(&prog);
  parse_resources(c);
  return c;
}

compiled compile(ir::Kernel const& k, ir::Target target, options const& o) {
  const std::uint64_t key = cache_key(k, target, o.codegen);
  if (o.memory_cache) {
    std::lock_guard lock(cache_mutex());
    if (auto it = memory().find(key); it != memory().end()) {
      compiled c = it->second;
      c.origin = compiled::source::memory_cache;
      return c;
    }
  }
  compiled c;
  c.code = generate(k, o.codegen);
  c.target = target;
  // On disk the key also covers the generated source: a binary built by an older code generator
  // must never be reused (within one process the generator cannot change, so memory needs no more).
  c.key = fnv(key, c.code.source);
  const auto dir = o.disk_cache ? disk_cache::open(o.cache_dir) : disk_cache::directory{};
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
