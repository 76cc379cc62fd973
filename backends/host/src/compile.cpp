// Generated code -> a host shared object: the translation unit, the compiler call, the cache.
#include <dlfcn.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <ctime>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "module.hpp"
#include "prelude_text.hpp"

#define STAGECRAFT_PRELUDE_STR_(...) #__VA_ARGS__
#define STAGECRAFT_PRELUDE_STR(...) STAGECRAFT_PRELUDE_STR_(__VA_ARGS__)
#include "stagecraft/hostexec/hostexec.hpp"
#include "stagecraft/ir/math.hpp"
#include "stagecraft/nvrtc/disk_cache.hpp"
#include "stagecraft/nvrtc/environment.hpp"

namespace stagecraft::hostexec {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view prelude_end = "// ---- end of prelude ----\n";
constexpr std::string_view portable_begin = "// ---- portable ----\n";
constexpr std::string_view portable_end = "// ---- end of portable ----\n";

const char* storage_type(ir::DType t) {
  switch (t) {
    case ir::DType::f32: return "float";
    case ir::DType::f16: case ir::DType::bf16: return "unsigned short";
    case ir::DType::i32: return "int";
    case ir::DType::u32: return "unsigned";
    case ir::DType::i8: return "signed char";
    case ir::DType::u8: case ir::DType::e2m1x2: case ir::DType::ue4m3: case ir::DType::e2m3: case ir::DType::e3m2: case ir::DType::e2m1: return "unsigned char";
    case ir::DType::e4m3: case ir::DType::e5m2: return "unsigned char";
    case ir::DType::pred: return "unsigned char";  // never a parameter (the verifier's rule)
  }
  return "void";
}

std::uint64_t fnv(std::uint64_t h, std::string_view s) { return disk_cache::digest(s, h); }

std::string compiler_of(options const& o) {
  if (!o.compiler.empty()) return o.compiler;
  if (const char* c = std::getenv("STAGECRAFT_HOST_CXX"); c && *c) return c;
  return STAGECRAFT_HOST_CXX;
}

// -O1: a kernel compiles in about a second and runs far faster than unoptimised; no
// -ffast-math and, in exact mode, no contraction, so every multiply and add rounds on its own as
// on the GPU (--fmad=false) and in the interpreter; fast mode lets the compiler contract as
// NVRTC's --fmad=true does (where the target has FMA: the bound allows either); no strict
// aliasing, as the generated code reads 16-byte vectors through other types, which NVCC allows.
std::vector<std::string> flags(ir::math_mode m) {
  return {"-std=c++17", "-O1", "-g0", "-shared", "-fPIC", "-fno-strict-aliasing",
          m == ir::math_mode::fast ? "-ffp-contract=fast" : "-ffp-contract=off", "-fvisibility=hidden", "-w"};
}

// A cached object ends with a trailer: the digest of every byte before it, then this magic. The
// loader maps only what the ELF headers name, so the trailer changes nothing once it is checked;
// an object that fails the check (a flipped bit, a truncation, an empty file) is rebuilt.
constexpr std::string_view object_magic = "sc-host-object-1";
constexpr std::size_t trailer_size = sizeof(std::uint64_t) + object_magic.size();

std::string trailer(std::string_view object) {
  const std::uint64_t h = disk_cache::digest(object);
  return std::string(reinterpret_cast<const char*>(&h), sizeof h) + std::string(object_magic);
}
// Empty when `file` carries a trailer that matches it, else what is wrong.
std::string trailer_problem(std::string_view file) {
  if (file.size() < trailer_size) return fmt::format("{} bytes, too short for an object", file.size());
  if (file.substr(file.size() - object_magic.size()) != object_magic) return "no stagecraft trailer (truncated or overwritten)";
  std::uint64_t want = 0;
  std::memcpy(&want, file.data() + file.size() - trailer_size, sizeof want);
  if (disk_cache::digest(file.substr(0, file.size() - trailer_size)) != want) return "its digest does not match its bytes (damaged)";
  return {};
}

// The compiler as a program this machine can start: a path that is executable, or a name found
// on PATH. Empty when there is none (an environment problem, not a code generator bug).
std::string find_program(std::string const& name) {
  if (name.find('/') != std::string::npos) return ::access(name.c_str(), X_OK) == 0 ? name : "";
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "");
  for (std::string d; std::getline(dirs, d, ':');) {
    const auto candidate = (d.empty() ? std::string(".") : d) + "/" + name;
    struct stat st{};
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return {};
}

// What in a failed compile says the machine is at fault rather than the generated code: the
// shell's "not found" status, a signal (the OOM killer), or the tool chain's own words for a
// missing program, a full disk or exhausted memory. Empty: the compiler rejected the code.
std::string environment_cause(int status, std::string const& log, fs::path const& scratch) {
  // A disk that fills may leave no words at all (the compiler's own log is the first file that
  // cannot be written) or kill the compiler (clang aborts): what is left on the scratch
  // directory's file system says it first.
  struct statvfs fs_info{};
  if (::statvfs(scratch.c_str(), &fs_info) == 0) {
    const auto free_bytes = static_cast<unsigned long long>(fs_info.f_bavail) * fs_info.f_frsize;
    if (free_bytes < (1ull << 20)) return fmt::format("the disk is full ({} bytes free where it builds, {})", free_bytes, scratch.string());
  }
  if (WIFSIGNALED(status)) return fmt::format("the compile was killed by signal {} (out of memory?)", WTERMSIG(status));
  const int rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (rc == 127) return "the compiler could not be started (not found)";
  if (rc > 128 && rc < 160) return fmt::format("the compiler was killed by signal {} (out of memory?)", rc - 128);
  // g++: "fatal error: cannot execute 'as': execvp: ..." (the quotes are typographic in a UTF-8
  // locale): the program's name is what follows the quote.
  for (const char* missing : {"cannot execute ", "error trying to exec "})
    if (auto at = log.find(missing); at != std::string::npos) {
      at += std::strlen(missing);
      while (at < log.size() && !(std::isalnum(static_cast<unsigned char>(log[at])) || log[at] == '/')) ++at;
      auto end = at;
      while (end < log.size() && (std::isalnum(static_cast<unsigned char>(log[end])) || std::strchr("._+-/", log[end]))) ++end;
      return fmt::format("the compiler cannot start '{}', a program of its tool chain (install g++ and binutils, or fix PATH)",
                         log.substr(at, end - at));
    }
  static const std::pair<const char*, const char*> words[] = {
      {"No space left on device", "the disk is full"},
      {"Disk quota exceeded", "the disk quota is exhausted"},
      {"Read-only file system", "the file system is read-only"},
      {"cannot find 'ld'", "the linker is missing (binutils)"},
      {"virtual memory exhausted", "the compiler ran out of memory"},
      {"Cannot allocate memory", "the compiler ran out of memory"},
  };
  for (auto const& [text, cause] : words)
    if (log.find(text) != std::string::npos) return cause;
  return {};
}

// A scratch directory ("build-<pid>-XXXXXX") whose compile was killed is never cleaned up by its
// own process: the next compile removes those whose process is gone and that are older than a
// minute (another PID namespace's live compile looks gone, but is never that old), and any
// older than a day.
void sweep_scratch(fs::path const& dir) {
  const auto now = std::time(nullptr);
  std::error_code ec;
  std::vector<fs::path> stale;
  for (auto const& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    struct stat st{};
    if (name.rfind("build-", 0) != 0 || ::lstat(e.path().c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid()) continue;
    const long pid = std::atol(name.c_str() + 6);
    const bool gone = pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
    const auto age = now - st.st_mtime;
    if ((gone && age > 60) || age > 24 * 3600) stale.push_back(e.path());
  }
  for (auto const& p : stale) fs::remove_all(p, ec);
}

// Removes a scratch directory on every way out of a compile.
struct scratch_dir {
  fs::path path;
  ~scratch_dir() {
    std::error_code ec;
    if (!path.empty()) fs::remove_all(path, ec);
  }
};

std::string shell_quote(std::string const& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string read_all(fs::path const& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The lines of the translation unit around the first error the compiler reports.
std::string context(std::string const& tu, std::string const& log) {
  const auto at = log.find("kernel.cpp:");
  if (at == std::string::npos) return {};
  const int line = std::atoi(log.c_str() + at + 11);
  std::istringstream in(tu);
  std::string text, out;
  for (int n = 1; std::getline(in, text); ++n)
    if (n >= line - 3 && n <= line + 3) out += fmt::format("{}{:5} | {}\n", n == line ? ">" : " ", n, text);
  return out;
}

// Loads an object whose bytes were checked through `fd`, through /proc/self/fd when the system
// has it, so what dlopen maps is the very file that was checked, not whatever the path names
// now. dlopen knows an object by the name it was opened with, so the descriptor stays open for
// the life of the process (as the object does): no later object can be given that name.
std::shared_ptr<module const> load(fs::path const& so, int fd, std::string const& kernel) {
  const std::string pinned = fmt::format("/proc/self/fd/{}", fd);
  void* h = ::access(pinned.c_str(), R_OK) == 0 ? ::dlopen(pinned.c_str(), RTLD_NOW | RTLD_LOCAL) : nullptr;
  if (!h) h = ::dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    ::close(fd);
    throw compile_error(fmt::format("kernel '{}': cannot load its host object {}: {}", kernel, so.string(), ::dlerror()));
  }
  auto m = std::make_shared<module>();
  m->handle = h;
  m->path = so.string();
  m->pinned_fd = fd;
  m->bind = reinterpret_cast<void (*)(const schost::api*)>(::dlsym(h, "sc_host_bind"));
  m->entry = reinterpret_cast<void (*)(const void*, void* const*, const long long*)>(::dlsym(h, "sc_host_entry"));
  if (!m->bind || !m->entry)
    throw compile_error(fmt::format("kernel '{}': its host object {} lacks sc_host_bind or sc_host_entry", kernel, so.string()));
  return m;
}

// The object at `so` when it is ours and whole; null when absent or refused (a damaged or
// foreign entry is said once, then rebuilt over).
std::shared_ptr<module const> load_verified(fs::path const& so, std::string const& kernel) {
  std::string why;
  const int fd = disk_cache::open_entry(so, &why);
  if (fd >= 0) {
    if (const auto bytes = disk_cache::read_all(fd); !bytes) why = "unreadable";
    else why = trailer_problem(*bytes);
    if (why.empty()) return load(so, fd, kernel);
    ::close(fd);
  }
  if (why != std::strerror(ENOENT)) disk_cache::warn_once(fmt::format("the host cache entry {} is not used ({}); rebuilding it", so.string(), why));
  return nullptr;
}

std::mutex& cache_mutex() {
  static std::mutex m;
  return m;
}
std::map<std::uint64_t, std::shared_ptr<module const>>& loaded() {
  static std::map<std::uint64_t, std::shared_ptr<module const>> m;
  return m;
}

}  // namespace

std::string translation_unit(nvrtc::generated const& g, ir::Kernel const& k) {
  auto const& src = g.source;
  const auto end = src.find(prelude_end);
  const auto pb = src.find(portable_begin);
  const auto pe = src.find(portable_end);
  if (end == std::string::npos || pb == std::string::npos || pe == std::string::npos || !(pb < pe && pe < end))
    throw compile_error(fmt::format("kernel '{}': the generated source does not carry the device prelude's portable block "
                                    "(markers '{}' and '{}' before '{}'); the host backend cannot build it",
                                    k.name, portable_begin.substr(0, portable_begin.size() - 1), portable_end.substr(0, portable_end.size() - 1),
                                    prelude_end.substr(0, prelude_end.size() - 1)));
  std::string tu = "// host translation unit of kernel '" + k.name + "' (stagecraft host backend)\n#include \"sc_host_prelude.h\"\n\n";
  tu += "// fast math mode's primitives on the CPU (stagecraft/ir/math.hpp), which the device prelude writes as PTX\nnamespace sc {\n";
  tu += STAGECRAFT_PRELUDE_STR(STAGECRAFT_APPROX_HOST_FN(inline, __float_as_uint, __uint_as_float));
  tu += "\n}  // namespace sc\n";
  tu += "// the device prelude's portable part, verbatim\nnamespace sc {\n";
  tu += src.substr(pb, pe + portable_end.size() - pb);
  tu += "}  // namespace sc\n\n// the generated kernel, verbatim\n";
  tu += src.substr(end + prelude_end.size());
  // The entry point: one CUDA thread, arguments as the CUDA runtime passes them (tensor maps
  // by value, then the GMEM pointers, then the run-time extents).
  std::vector<std::string> args;
  for (std::size_t m = 0; m < g.maps.size(); ++m) args.push_back(fmt::format("static_cast<const sc::tmap_t*>(maps)[{}]", m));
  for (std::size_t p = 0; p < k.params.size(); ++p) args.push_back(fmt::format("static_cast<{}*>(gmem[{}])", storage_type(k.params[p].dtype), p));
  for (std::size_t x = 0; x < k.extents.size(); ++x) args.push_back(fmt::format("extents[{}]", x));
  tu += "\nextern \"C\" __attribute__((visibility(\"default\"))) void sc_host_entry(const void* maps, void* const* gmem, const long long* extents) {\n";
  tu += "  (void)maps;\n  (void)gmem;\n  (void)extents;\n";
  tu += fmt::format("  {}({});\n}}\n", g.entry, fmt::join(args, ", "));
  return tu;
}

compiled compile_generated(nvrtc::generated g, ir::Kernel const& k, options const& o) {
  compiled c;
  c.translation_unit = translation_unit(g, k);
  c.code = std::move(g);
  const std::string cxx = compiler_of(o);
  std::string command = shell_quote(cxx);
  for (auto const& f : flags(c.code.options.math)) command += " " + f;
  std::uint64_t key = fnv(14695981039346656037ull, command);
  key = fnv(key, detail::abi_header);
  key = fnv(key, detail::prelude_header);
  key = fnv(key, c.translation_unit);

  std::lock_guard lock(cache_mutex());
  if (auto it = loaded().find(key); it != loaded().end()) {
    c.mod = it->second;
    c.from_cache = true;
    return c;
  }
  const auto dir = disk_cache::open(o.cache_dir, "host");
  const fs::path so = dir.path / fmt::format("{:016x}.so", key);
  if (dir.readable())
    if (auto m = load_verified(so, k.name)) {
      c.mod = m;
      c.from_cache = true;
      loaded()[key] = c.mod;
      return c;
    }
  if (find_program(cxx).empty())
    throw environment_error(fmt::format("kernel '{}': the host backend needs a C++ compiler, and '{}' cannot be started here (not an "
                                        "executable path, nor a program on PATH): install g++ or set STAGECRAFT_HOST_CXX",
                                        k.name, cxx));
  const auto t0 = std::chrono::steady_clock::now();
  // A private scratch directory per compile (mkdtemp: mode 0700), in the cache so the object
  // is renamed into place without a copy; in the temporary directory when the cache may not be
  // written, the object then loaded from there and not kept.
  std::error_code ec;
  fs::path parent = dir.path;
  if (dir.writable()) sweep_scratch(dir.path);
  else parent = fs::temp_directory_path(ec);
  std::string scratch_template = (parent / fmt::format("build-{}-XXXXXX", ::getpid())).string();
  if (!::mkdtemp(scratch_template.data()))
    throw environment_error(fmt::format("kernel '{}': cannot create a scratch directory under {}: {}", k.name, parent.string(), std::strerror(errno)));
  const scratch_dir scratch{scratch_template};
  auto write = [&](fs::path const& p, std::string_view text) {
    std::ofstream out(p, std::ios::binary);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    out.close();
    if (!out) throw environment_error(fmt::format("kernel '{}': cannot write {} (is the disk full?)", k.name, p.string()));
  };
  write(scratch.path / "sc_host_abi.h", detail::abi_header);
  write(scratch.path / "sc_host_prelude.h", detail::prelude_header);
  write(scratch.path / "kernel.cpp", c.translation_unit);
  const std::string full = fmt::format("cd {} && {} kernel.cpp -o kernel.so > compile.log 2>&1", shell_quote(scratch.path.string()), command);
  const int status = std::system(full.c_str());
  if (status != 0) {
    const std::string log = read_all(scratch.path / "compile.log");
    if (auto cause = environment_cause(status, log, scratch.path); !cause.empty())
      throw environment_error(fmt::format("kernel '{}': the host compiler could not build it: {}:\n{}\n{}", k.name, cause, command, log));
    throw compile_error(fmt::format(
        "internal error (a bug in stagecraft's code generator or host prelude, please report it): the host compiler rejected the "
        "code generated for kernel '{}' (exit {}):\n{}\n{}\n{}",
        k.name, WIFEXITED(status) ? WEXITSTATUS(status) : status, command, log, context(c.translation_unit, log)));
  }
  const fs::path built = scratch.path / "kernel.so";
  {
    std::ofstream out(built, std::ios::binary | std::ios::app);
    out << trailer(read_all(built));
    out.close();
    if (!out) throw environment_error(fmt::format("kernel '{}': cannot write {} (is the disk full?)", k.name, built.string()));
  }
  // Renamed into the cache, not copied: another process compiling the same kernel never sees half
  // a file. Without a writable cache the object is loaded from the scratch directory (and goes
  // with it: the mapping outlives the file).
  fs::path final_path = built;
  if (dir.writable()) {
    if (::rename(built.c_str(), so.c_str()) != 0)
      throw environment_error(fmt::format("kernel '{}': cannot move its host object into {}: {}", k.name, so.string(), std::strerror(errno)));
    final_path = so;
  }
  c.mod = load_verified(final_path, k.name);
  if (!c.mod) throw compile_error(fmt::format("kernel '{}': its freshly built host object {} did not verify", k.name, final_path.string()));
  c.compile_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  loaded()[key] = c.mod;
  return c;
}

compiled compile(ir::Kernel const& k, options const& o) { return compile_generated(nvrtc::generate(k, {.math = o.math}), k, o); }

}  // namespace stagecraft::hostexec
