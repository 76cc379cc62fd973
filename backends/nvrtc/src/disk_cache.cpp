#include "stagecraft/nvrtc/disk_cache.hpp"

#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <vector>

#include <fmt/format.h>

namespace stagecraft::disk_cache {
namespace {

namespace fs = std::filesystem;

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : "";
}

// The account's home from the password database, used only when it exists and is the user's
// own: a service account whose home is missing (or is /nonexistent) falls through to the next rule.
std::string passwd_home() {
  std::vector<char> buf(16384);
  passwd pw{}, *found = nullptr;
  if (::getpwuid_r(::geteuid(), &pw, buf.data(), buf.size(), &found) != 0 || !found || !pw.pw_dir || !*pw.pw_dir) return {};
  struct stat st{};
  if (::stat(pw.pw_dir, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid()) return {};
  return pw.pw_dir;
}

std::string errno_text(int e) { return std::strerror(e); }

bool writable_by_others(struct stat const& st) { return (st.st_mode & (S_IWGRP | S_IWOTH)) != 0; }

std::string owner_text(uid_t uid) { return fmt::format("uid {}", uid); }

// Why a directory above the cache lets someone else replace what it holds: owned by another
// user than you or root, or writable by others without the sticky bit (as /tmp has).
std::string ancestor_problem(fs::path const& up) {
  struct stat st{};
  if (::stat(up.c_str(), &st) != 0) return fmt::format("cannot inspect {}: {}", up.string(), errno_text(errno));
  if (st.st_uid != ::geteuid() && st.st_uid != 0) return fmt::format("{} above it is owned by {}, who could replace it", up.string(), owner_text(st.st_uid));
  if (writable_by_others(st) && !(st.st_mode & S_ISVTX))
    return fmt::format("{} above it has mode {:04o}: others may rename or replace what it holds", up.string(), st.st_mode & 07777);
  return {};
}

// Creates the missing directories of `p` (absolute) with mode 0700, each only inside a
// directory no one else controls (nothing is left behind in one that will be refused); empty
// or the reason.
std::string make_dirs(fs::path const& p) {
  fs::path prefix;
  for (auto const& part : p) {
    const fs::path parent = prefix;
    prefix /= part;
    struct stat st{};
    if (::stat(prefix.c_str(), &st) == 0) {
      if (!S_ISDIR(st.st_mode)) return fmt::format("{} is not a directory", prefix.string());
      continue;
    }
    if (auto why = ancestor_problem(parent); !why.empty()) return why;
    if (::mkdir(prefix.c_str(), 0700) != 0 && errno != EEXIST) return fmt::format("cannot create {}: {}", prefix.string(), errno_text(errno));
  }
  return {};
}

// Why the directory `dir` (canonical) or one above it lets someone else change what is in it.
std::string trust_problem(fs::path const& dir) {
  const uid_t me = ::geteuid();
  struct stat st{};
  if (::stat(dir.c_str(), &st) != 0) return fmt::format("cannot inspect it: {}", errno_text(errno));
  if (!S_ISDIR(st.st_mode)) return "it is not a directory";
  if (st.st_uid != me) return fmt::format("it is owned by {}, not by you ({})", owner_text(st.st_uid), owner_text(me));
  if (writable_by_others(st))
    return fmt::format("its mode {:04o} lets {} write it (chmod go-w it, or choose another directory)", st.st_mode & 07777,
                       (st.st_mode & S_IWOTH) ? "every user" : "its group");
  for (fs::path up = dir.parent_path();; up = up.parent_path()) {
    if (auto why = ancestor_problem(up); !why.empty()) return why;
    if (up == up.parent_path()) return {};
  }
}

std::mutex& warn_mutex() {
  static std::mutex m;
  return m;
}
std::function<void(std::string const&)>& sink() {
  static std::function<void(std::string const&)> s;
  return s;
}

}  // namespace

fs::path root(std::string const& explicit_dir) {
  if (!explicit_dir.empty()) return explicit_dir;
  if (auto d = env("STAGECRAFT_CACHE_DIR"); !d.empty()) return d;
  if (auto x = env("XDG_CACHE_HOME"); !x.empty()) return fs::path(x) / "stagecraft";
  if (auto h = env("HOME"); !h.empty()) return fs::path(h) / ".cache" / "stagecraft";
  if (auto h = passwd_home(); !h.empty()) return fs::path(h) / ".cache" / "stagecraft";
  if (auto r = env("XDG_RUNTIME_DIR"); !r.empty()) return fs::path(r) / "stagecraft";
  std::error_code ec;
  fs::path tmp = fs::temp_directory_path(ec);
  if (ec) tmp = "/tmp";
  return tmp / fmt::format("stagecraft-cache-{}", ::geteuid());
}

namespace {
// `dir` (absolute) created where missing, then checked; empty when it may be used.
std::string usable_problem(fs::path const& dir) {
  if (auto why = make_dirs(dir); !why.empty()) return why;
  std::error_code ec;
  const fs::path real = fs::canonical(dir, ec);
  if (ec) return fmt::format("cannot resolve it: {}", ec.message());
  if (auto why = trust_problem(real); !why.empty()) return real == dir ? why : fmt::format("{} (it resolves to {})", why, real.string());
  // The real directory is what gets written, but a link on the way there counts as well:
  // whoever owns the link's directory can point it elsewhere tomorrow.
  if (real != dir)
    for (auto up = dir.parent_path();; up = up.parent_path()) {
      struct stat st{};
      if (::lstat(up.c_str(), &st) == 0 && st.st_uid != ::geteuid() && st.st_uid != 0)
        return fmt::format("{} on its path is owned by {}, who could redirect it", up.string(), owner_text(st.st_uid));
      if (up == up.parent_path()) break;
    }
  return {};
}
}  // namespace

directory open(std::string const& explicit_dir, std::string_view sub) {
  directory d;
  std::error_code ec;
  fs::path base = fs::absolute(root(explicit_dir), ec);
  if (ec) base = root(explicit_dir);
  d.path = sub.empty() ? base : base / sub;
  // The root first, so that nothing is created inside a root that is refused.
  fs::path refused_path = base;
  d.refused = usable_problem(base);
  if (d.refused.empty() && !sub.empty()) {
    refused_path = d.path;
    d.refused = usable_problem(d.path);
  }
  if (d.refused.empty() && ::access(d.path.c_str(), W_OK | X_OK) != 0) d.read_only = errno_text(errno);
  if (!d.refused.empty())
    warn_once(fmt::format("not using the cache directory {}: {}; running without the cache", refused_path.string(), d.refused));
  else if (!d.read_only.empty())
    warn_once(fmt::format("the cache directory {} cannot be written ({}); results are not cached", d.path.string(), d.read_only));
  return d;
}

bool warn_once(std::string const& text) {
  std::lock_guard lock(warn_mutex());
  static std::set<std::string> said;
  if (!said.insert(text).second) return false;
  if (sink()) sink()(text);
  else std::fprintf(stderr, "stagecraft: warning: %s\n", text.c_str());
  return true;
}

void set_warning_sink(std::function<void(std::string const&)> s) {
  std::lock_guard lock(warn_mutex());
  sink() = std::move(s);
}

int open_entry(fs::path const& p, std::string* why) {
  auto fail = [&](std::string text) {
    if (why) *why = std::move(text);
    return -1;
  };
  const int fd = ::open(p.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return fail(errno == ELOOP ? "it is a symbolic link" : errno_text(errno));
  struct stat st{};
  std::string problem;
  if (::fstat(fd, &st) != 0) problem = errno_text(errno);
  else if (!S_ISREG(st.st_mode)) problem = "it is not a regular file";
  else if (st.st_uid != ::geteuid()) problem = fmt::format("it is owned by {}, not by you", owner_text(st.st_uid));
  else if (writable_by_others(st)) problem = fmt::format("its mode {:04o} lets others write it", st.st_mode & 07777);
  if (problem.empty()) return fd;
  ::close(fd);
  return fail(problem);
}

std::optional<std::string> read_all(int fd) {
  std::string out;
  char buf[1 << 16];
  if (::lseek(fd, 0, SEEK_SET) < 0) return std::nullopt;
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n == 0) return out;
    if (n < 0) {
      if (errno == EINTR) continue;
      return std::nullopt;
    }
    out.append(buf, static_cast<std::size_t>(n));
  }
}

std::string write_atomically(fs::path const& p, std::string_view bytes) {
  std::string tmp = p.string() + ".XXXXXX";
  const int fd = ::mkstemp(tmp.data());
  if (fd < 0) return fmt::format("cannot create a temporary file beside {}: {}", p.string(), errno_text(errno));
  std::string error;
  for (std::size_t done = 0; done < bytes.size() && error.empty();) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) error = fmt::format("cannot write {}: {}", tmp, errno_text(n < 0 ? errno : ENOSPC));
    else done += static_cast<std::size_t>(n);
  }
  if (::close(fd) != 0 && error.empty()) error = fmt::format("cannot write {}: {}", tmp, errno_text(errno));
  if (error.empty() && ::rename(tmp.c_str(), p.c_str()) != 0) error = fmt::format("cannot rename {} to {}: {}", tmp, p.string(), errno_text(errno));
  if (!error.empty()) ::unlink(tmp.c_str());
  return error;
}

std::uint64_t digest(std::string_view bytes, std::uint64_t h) {
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}


}  // namespace stagecraft::disk_cache
