// Generated code -> a host shared object: the translation unit, the compiler call, the cache.
#include <dlfcn.h>
#include <unistd.h>

#include <chrono>
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
#include "stagecraft/hostexec/hostexec.hpp"

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
    case ir::DType::e4m3: case ir::DType::e5m2: return "unsigned char";
    case ir::DType::pred: return "unsigned char";  // never a parameter (the verifier's rule)
  }
  return "void";
}

std::uint64_t fnv(std::uint64_t h, std::string_view s) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

std::string compiler_of(options const& o) {
  if (!o.compiler.empty()) return o.compiler;
  if (const char* c = std::getenv("STAGECRAFT_HOST_CXX"); c && *c) return c;
  return STAGECRAFT_HOST_CXX;
}

// -O1: a kernel compiles in about a second and runs far faster than unoptimised; no
// -ffast-math and no contraction, so every multiply and add rounds on its own as on the GPU
// (--fmad=false) and in the interpreter; no strict aliasing, as the generated code reads
// 16-byte vectors through other types, which NVCC allows.
std::vector<std::string> flags() {
  return {"-std=c++17", "-O1", "-g0", "-shared", "-fPIC", "-fno-strict-aliasing", "-ffp-contract=off", "-fvisibility=hidden", "-w"};
}

// Same places as the NVRTC cache (nvrtc::cache_directory), in a subdirectory of its own.
std::string cache_dir(options const& o) {
  std::string d;
  if (!o.cache_dir.empty()) d = o.cache_dir;
  else if (const char* e = std::getenv("STAGECRAFT_CACHE_DIR"); e && *e) d = e;
  else if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) d = std::string(x) + "/stagecraft";
  else if (const char* h = std::getenv("HOME"); h && *h) d = std::string(h) + "/.cache/stagecraft";
  else d = "/tmp/stagecraft-cache";
  return d + "/host";
}

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

std::shared_ptr<module const> load(fs::path const& so, std::string const& kernel) {
  void* h = ::dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) throw compile_error(fmt::format("kernel '{}': cannot load its host object {}: {}", kernel, so.string(), ::dlerror()));
  auto m = std::make_shared<module>();
  m->handle = h;
  m->path = so.string();
  m->bind = reinterpret_cast<void (*)(const schost::api*)>(::dlsym(h, "sc_host_bind"));
  m->entry = reinterpret_cast<void (*)(const void*, void* const*)>(::dlsym(h, "sc_host_entry"));
  if (!m->bind || !m->entry)
    throw compile_error(fmt::format("kernel '{}': its host object {} lacks sc_host_bind or sc_host_entry", kernel, so.string()));
  return m;
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
  tu += "// the device prelude's portable part, verbatim\nnamespace sc {\n";
  tu += src.substr(pb, pe + portable_end.size() - pb);
  tu += "}  // namespace sc\n\n// the generated kernel, verbatim\n";
  tu += src.substr(end + prelude_end.size());
  // The entry point: one CUDA thread, arguments as the CUDA runtime passes them (tensor maps
  // by value, then the GMEM pointers).
  std::vector<std::string> args;
  for (std::size_t m = 0; m < g.maps.size(); ++m) args.push_back(fmt::format("static_cast<const sc::tmap_t*>(maps)[{}]", m));
  for (std::size_t p = 0; p < k.params.size(); ++p) args.push_back(fmt::format("static_cast<{}*>(gmem[{}])", storage_type(k.params[p].dtype), p));
  tu += "\nextern \"C\" __attribute__((visibility(\"default\"))) void sc_host_entry(const void* maps, void* const* gmem) {\n";
  tu += "  (void)maps;\n  (void)gmem;\n";
  tu += fmt::format("  {}({});\n}}\n", g.entry, fmt::join(args, ", "));
  return tu;
}

compiled compile_generated(nvrtc::generated g, ir::Kernel const& k, options const& o) {
  // The generated wgmma and tcgen05 code is inline PTX for the tensor core (and tensor memory),
  // which the host prelude does not model: say so, as the code generator does for what it
  // cannot express, instead of failing to compile.
  for (std::size_t i = 0; i < k.stmts.size(); ++i)
    if (auto op = k.stmts[i].op; op == ir::StmtOp::wgmma || op == ir::StmtOp::tcgen05_mma || op == ir::StmtOp::tcgen05_commit_arrive)
      throw nvrtc::unsupported(fmt::format("kernel '{}', op #{} ({}): the tensor core is not modelled by the host backend yet", k.name, i,
                                           ir::stmt_name(op)));
  compiled c;
  c.translation_unit = translation_unit(g, k);
  c.code = std::move(g);
  const std::string cxx = compiler_of(o);
  std::string command = shell_quote(cxx);
  for (auto const& f : flags()) command += " " + f;
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
  const fs::path dir = cache_dir(o);
  const fs::path so = dir / fmt::format("{:016x}.so", key);
  std::error_code ec;
  if (fs::exists(so, ec)) {
    c.mod = load(so, k.name);
    c.from_cache = true;
    loaded()[key] = c.mod;
    return c;
  }
  const auto t0 = std::chrono::steady_clock::now();
  fs::create_directories(dir, ec);
  if (ec) throw compile_error(fmt::format("kernel '{}': cannot create the host cache directory {}: {}", k.name, dir.string(), ec.message()));
  // A private scratch directory per compile; the object is renamed into the cache, so two
  // processes compiling the same kernel never see half a file.
  std::string scratch_template = (dir / "build-XXXXXX").string();
  if (!::mkdtemp(scratch_template.data()))
    throw compile_error(fmt::format("kernel '{}': cannot create a scratch directory under {}", k.name, dir.string()));
  const fs::path scratch = scratch_template;
  auto write = [&](fs::path const& p, std::string_view text) {
    std::ofstream out(p, std::ios::binary);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    if (!out) throw compile_error(fmt::format("kernel '{}': cannot write {}", k.name, p.string()));
  };
  write(scratch / "sc_host_abi.h", detail::abi_header);
  write(scratch / "sc_host_prelude.h", detail::prelude_header);
  write(scratch / "kernel.cpp", c.translation_unit);
  const std::string full = fmt::format("cd {} && {} kernel.cpp -o kernel.so > compile.log 2>&1", shell_quote(scratch.string()), command);
  const int rc = std::system(full.c_str());
  if (rc != 0) {
    const std::string log = read_all(scratch / "compile.log");
    throw compile_error(fmt::format(
        "internal error (a bug in stagecraft's code generator or host prelude, please report it): the host compiler rejected the "
        "code generated for kernel '{}' (exit {}; kept in {}):\n{}\n{}\n{}",
        k.name, rc, scratch.string(), command, log, context(c.translation_unit, log)));
  }
  fs::rename(scratch / "kernel.so", so, ec);
  if (ec && !fs::exists(so)) throw compile_error(fmt::format("kernel '{}': cannot move its host object into {}: {}", k.name, so.string(), ec.message()));
  fs::remove_all(scratch, ec);
  c.compile_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  c.mod = load(so, k.name);
  loaded()[key] = c.mod;
  return c;
}

compiled compile(ir::Kernel const& k, options const& o) { return compile_generated(nvrtc::generate(k), k, o); }

}  // namespace stagecraft::hostexec
