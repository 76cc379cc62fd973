// The on-disk caches of both JITs (NVRTC's PTX/CUBIN entries, the host backend's shared
// objects): where they live, who may have written them, and how an entry is put in place.
//
// Threat model (docs/cache.md): a cache directory is trusted only when it and every directory
// above it can be changed by no one but the user and root (sticky directories such as /tmp
// excepted above it). A directory that fails the check is not used at all: the run goes on
// without the cache and says so once, naming the directory and why. Entries are regular files
// owned by the user, written under a fresh O_EXCL name and renamed into place (never through a
// link), and carry a digest that is checked before use: a damaged entry is rebuilt, not blamed
// on the kernel. The digest finds damage, not forgery: keeping others out is the owner check's job.
#pragma once
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace stagecraft::disk_cache {

// The cache root, by precedence: `explicit_dir` (an API option), $STAGECRAFT_CACHE_DIR,
// $XDG_CACHE_HOME/stagecraft, $HOME/.cache/stagecraft, the account's home from the password
// database (/root when HOME is unset for root), $XDG_RUNTIME_DIR/stagecraft, and last
// <temp>/stagecraft-cache-<uid>: one per user, never a directory every user shares.
std::filesystem::path root(std::string const& explicit_dir = {});

struct directory {
  std::filesystem::path path;  // root(...)/sub
  std::string refused;         // why it must not be used (empty: it may be read)
  std::string read_only;       // why nothing can be written there (empty: writable)
  bool readable() const { return refused.empty(); }
  bool writable() const { return refused.empty() && read_only.empty(); }
};

// root(explicit_dir)/sub, created with mode 0700 where missing, then checked: a directory (not
// a file), owned by the effective user, writable by no group and no other user; its ancestors
// owned by the user or root and, where others may write them, sticky. Never throws.
directory open(std::string const& explicit_dir, std::string_view sub = {});

// One warning per distinct text for the life of the process, to stderr as "stagecraft: warning:
// ..." unless a sink is set (tests, a GUI). Returns whether this call emitted it.
bool warn_once(std::string const& text);
void set_warning_sink(std::function<void(std::string const&)> sink);

// The file at `p` opened for reading if it is a regular file (a link is not followed), owned by
// the effective user and writable by no one else; -1 otherwise, with the reason in *why.
int open_entry(std::filesystem::path const& p, std::string* why = nullptr);
// Everything readable from fd (which stays open), or nullopt on a read error.
std::optional<std::string> read_all(int fd);

// `bytes` put at `p` atomically: written to a fresh file beside it (mkstemp: O_EXCL, mode
// 0600, so no planted link is followed), flushed, then renamed over `p`. Returns the error
// (with errno's words) or empty; a partial temporary is always removed.
std::string write_atomically(std::filesystem::path const& p, std::string_view bytes);

// FNV-1a, 64 bits: finds a torn, truncated or bit-flipped entry.
std::uint64_t digest(std::string_view bytes, std::uint64_t seed = 14695981039346656037ull);

}  // namespace stagecraft::disk_cache
