// The CLI's output files, written whole or not at all (internal.hpp, class output_file).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <random>

#include <fmt/format.h>

#include "internal.hpp"
#include "stagecraft/nvrtc/environment.hpp"

namespace stagecraft::cli::detail {
namespace {
namespace fs = std::filesystem;

// ---- temporaries removed on SIGINT, SIGTERM and SIGHUP ----------------------------------------
// A Ctrl-C (or a batch system's timeout) must not leave '.r.jsonl.stagecraft-*' files behind.
// The handler only reads this table and calls unlink(), both async-signal-safe; each slot holds
// the c_str() of a live output_file's temporary. More temporaries than slots at once (no command
// has them) would only lose the cleanup on a signal, never an output.
constexpr int signal_slots = 32;
std::atomic<const char*> pending_temporaries[signal_slots];
constexpr int cleanup_signals[] = {SIGINT, SIGTERM, SIGHUP};
struct sigaction previous_action[std::size(cleanup_signals)];

extern "C" void remove_temporaries_and_reraise(int sig) {
  const int saved = errno;
  for (auto& slot : pending_temporaries)
    if (const char* path = slot.load()) ::unlink(path);
  // The disposition the program had (by default: terminate), so the exit status still says
  // "killed by SIGINT" to the shell and a user's own handler still runs.
  for (std::size_t i = 0; i < std::size(cleanup_signals); ++i)
    if (cleanup_signals[i] == sig) ::sigaction(sig, &previous_action[i], nullptr);
  errno = saved;
  ::raise(sig);  // blocked until this handler returns, then delivered under the old disposition
}

void install_cleanup_handlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (std::size_t i = 0; i < std::size(cleanup_signals); ++i) {
      struct sigaction current{};
      ::sigaction(cleanup_signals[i], nullptr, &current);
      // An ignored signal (nohup, a background job) must stay ignored: we would kill a process
      // that was meant to survive it.
      if (current.sa_handler == SIG_IGN) continue;
      struct sigaction sa{};
      sa.sa_handler = &remove_temporaries_and_reraise;
      sigemptyset(&sa.sa_mask);
      sa.sa_flags = SA_RESTART;
      ::sigaction(cleanup_signals[i], &sa, &previous_action[i]);
    }
  });
}

int register_temporary(const char* path) {
  install_cleanup_handlers();
  for (int i = 0; i < signal_slots; ++i) {
    const char* expected = nullptr;
    if (pending_temporaries[i].compare_exchange_strong(expected, path)) return i;
  }
  return -1;
}

void unregister_temporary(int slot) {
  if (slot >= 0) pending_temporaries[slot].store(nullptr);
}

// ---- errors ------------------------------------------------------------------------------------
// A path the user got wrong is theirs to fix (64); a machine that refuses a good path (no
// permission, a read-only or full file system, an I/O error) is the environment's (69).
[[noreturn]] void fail(int err, const char* flag, std::string const& path, std::string const& what = {}) {
  const std::string msg = fmt::format("cannot write '{}' ({}): {}{}", path, flag, what, std::strerror(err));
  switch (err) {
    case ENOENT:
    case ENOTDIR:
    case EISDIR:
    case ENAMETOOLONG:
    case ELOOP:
      throw usage_error(msg);
    default:
      throw environment_error(msg);
  }
}

// The file a path names once symbolic links are followed: replacing the link itself with a
// regular file would silently cut it from what it pointed at.
fs::path follow_links(fs::path p) {
  for (int hops = 0; hops < 40; ++hops) {  // the kernel's own limit (ELOOP) is of this order
    std::error_code ec;
    if (!fs::is_symlink(p, ec)) return p;
    const fs::path to = fs::read_symlink(p, ec);
    if (ec) return p;
    p = to.is_absolute() ? to : p.parent_path() / to;
  }
  return p;
}

// Streams and devices (/dev/stdout, /dev/null, a FIFO, /proc/self/fd/N) are written where they
// are: there is nothing to replace, and following /dev/stdout to a redirected file and renaming
// over it would cut the file from the shell's descriptor.
bool written_in_place(std::string const& path, fs::path const& target) {
  if (path.starts_with("/dev/") || path.starts_with("/proc/")) return true;
  struct stat st{};
  return ::stat(target.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
}

std::string random_suffix() {
  static std::mt19937_64 gen{std::random_device{}() ^ static_cast<std::uint64_t>(::getpid())};
  static constexpr char alphabet[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  std::string s(8, ' ');
  for (auto& c : s) c = alphabet[gen() % (sizeof alphabet - 1)];
  return s;
}

bool write_all(int fd, std::string const& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = EIO;
      return false;
    }
    done += static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

output_file::output_file(const char* flag, std::string path) : flag_(flag), path_(std::move(path)) {
  if (path_.empty()) throw usage_error(fmt::format("{} needs a file name", flag_));
  const fs::path target = follow_links(path_);
  if (written_in_place(path_, target)) {
    // What a shell's `>` does; truncation means nothing to a stream or a device.
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd_ < 0) fail(errno, flag_, path_);
    return;
  }
  struct stat existing{};
  const bool exists = ::stat(target.c_str(), &existing) == 0;
  if (exists && S_ISDIR(existing.st_mode)) fail(EISDIR, flag_, path_);
  // A file we may not write stays as it is: renaming over it would get round its permissions.
  if (exists && ::access(target.c_str(), W_OK) != 0) fail(errno, flag_, path_);
  target_ = target.string();
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  // Hidden, and short enough that a long target name still leaves room for the suffix.
  const std::string stem = "." + target.filename().string().substr(0, 200) + ".stagecraft-";
  for (int attempt = 0; fd_ < 0; ++attempt) {
    temp_ = (dir / (stem + random_suffix())).string();
    // 0666 and the umask: the permissions a new file gets from the shell's `>`.
    fd_ = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd_ < 0 && (errno != EEXIST || attempt == 100)) {
      const int err = errno;
      temp_.clear();
      fail(err, flag_, path_, err == EEXIST ? "no unused temporary name beside it: " : "");
    }
  }
  // Replacing a file keeps its permissions (a private 0600 results file stays private) and, as
  // far as we may, its owner.
  if (exists) {
    (void)::fchmod(fd_, existing.st_mode & 07777);
    if (existing.st_uid != ::geteuid() || existing.st_gid != ::getegid()) (void)::fchown(fd_, existing.st_uid, existing.st_gid);
  }
  signal_slot_ = register_temporary(temp_.c_str());
}

output_file::~output_file() { discard(); }

void output_file::discard() noexcept {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (!temp_.empty()) {
    ::unlink(temp_.c_str());
    unregister_temporary(signal_slot_);
    signal_slot_ = -1;
    temp_.clear();
  }
}

void output_file::write(std::string const& text) {
  if (fd_ < 0) throw std::logic_error(fmt::format("output_file '{}' ({}) written twice", path_, flag_));
  const bool in_place = temp_.empty();
  // fsync before the rename: after a crash the target is the old file or the whole new one, not
  // a new name for blocks that never reached the disk. A full disk often shows only here.
  bool ok = write_all(fd_, text) && (in_place || ::fsync(fd_) == 0);
  int err = errno;
  if (::close(fd_) != 0 && ok) ok = false, err = errno;
  fd_ = -1;
  if (ok && !in_place && ::rename(temp_.c_str(), target_.c_str()) != 0) ok = false, err = errno;
  if (!ok) {
    discard();
    fail(err, flag_, path_);
  }
  // Renamed: the temporary's name is gone, so the signal handler must not unlink it (another
  // run's temporary could take the name).
  unregister_temporary(signal_slot_);
  signal_slot_ = -1;
  temp_.clear();
}

}  // namespace stagecraft::cli::detail
