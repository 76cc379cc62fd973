// The cache directory rules (disk_cache.hpp, docs/cache.md) on their own: which directories are
// trusted, how entries are read and written. Ownership cases chown to uid 65534 and need root
// (CI runs as root); without root they are skipped with a message.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "stagecraft/nvrtc/disk_cache.hpp"

using namespace stagecraft;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {

constexpr uid_t other_uid = 65534;  // "nobody": a user who is neither you nor root

// A scratch directory of the test's own, removed at the end.
struct sandbox {
  fs::path dir;
  sandbox() {
    std::string t = (fs::temp_directory_path() / "sc-disk-cache-test.XXXXXX").string();
    REQUIRE(::mkdtemp(t.data()));
    dir = t;
  }
  ~sandbox() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

// Every warning the cache emits while the test runs.
struct captured_warnings {
  std::vector<std::string> said;
  captured_warnings() {
    disk_cache::set_warning_sink([this](std::string const& t) { said.push_back(t); });
  }
  ~captured_warnings() { disk_cache::set_warning_sink({}); }
};

mode_t mode_of(fs::path const& p) {
  struct stat st{};
  REQUIRE(::stat(p.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

void write_file(fs::path const& p, std::string const& text) { std::ofstream(p, std::ios::binary) << text; }
std::string read_file(fs::path const& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}
bool root() { return ::geteuid() == 0; }

}  // namespace

TEST_CASE("a missing cache directory is created 0700, each level of it", "[security]") {
  sandbox s;
  const auto d = disk_cache::open((s.dir / "a" / "b").string(), "host");
  CHECK(d.writable());
  CHECK(d.path == s.dir / "a" / "b" / "host");
  for (auto p : {s.dir / "a", s.dir / "a" / "b", s.dir / "a" / "b" / "host"}) {
    INFO(p);
    CHECK(mode_of(p) == 0700);
  }
}

TEST_CASE("a cache directory others may write is refused, and said once", "[security]") {
  sandbox s;
  captured_warnings w;
  for (mode_t mode : {0777, 0770, 0722}) {
    const auto dir = s.dir / fmt::format("m{:o}", mode);
    fs::create_directory(dir);
    REQUIRE(::chmod(dir.c_str(), mode) == 0);
    const auto d = disk_cache::open(dir.string(), "host");
    INFO(dir << ": " << d.refused);
    CHECK_FALSE(d.readable());
    CHECK_THAT(d.refused, Contains(fmt::format("its mode {:04o} lets", mode)));
    CHECK_FALSE(fs::exists(dir / "host"));  // nothing is created in a refused directory
  }
  CHECK(w.said.size() == 3);
  (void)disk_cache::open((s.dir / "m777").string(), "host");
  CHECK(w.said.size() == 3);  // the same refusal again: not repeated
  CHECK_THAT(w.said.front(), Contains("not using the cache directory " + (s.dir / "m777").string()) && Contains("running without the cache"));
}

TEST_CASE("above the cache, a directory others may write must be sticky", "[security]") {
  sandbox s;
  const auto open_dir = s.dir / "open";
  fs::create_directory(open_dir);
  REQUIRE(::chmod(open_dir.c_str(), 0777) == 0);
  auto d = disk_cache::open((open_dir / "cache").string());
  CHECK_THAT(d.refused, Contains(open_dir.string() + " above it has mode 0777: others may rename or replace what it holds"));
  CHECK_FALSE(fs::exists(open_dir / "cache"));
  REQUIRE(::chmod(open_dir.c_str(), 01777) == 0);  // as /tmp
  d = disk_cache::open((open_dir / "cache").string());
  CHECK(d.writable());
}

TEST_CASE("a cache directory another user owns, or reaches through a link, is refused", "[security]") {
  if (!root()) {
    WARN("skipped: giving a directory to another user needs root");
    return;
  }
  sandbox s;
  const auto theirs = s.dir / "theirs";
  fs::create_directory(theirs);
  REQUIRE(::chown(theirs.c_str(), other_uid, other_uid) == 0);
  REQUIRE(::chmod(theirs.c_str(), 0755) == 0);
  auto d = disk_cache::open(theirs.string(), "host");
  CHECK_THAT(d.refused, Contains(fmt::format("it is owned by uid {}, not by you", other_uid)));
  CHECK_FALSE(fs::exists(theirs / "host"));
  // A directory of your own under theirs: they could swap it.
  fs::create_directory(theirs / "mine");
  d = disk_cache::open((theirs / "mine").string());
  CHECK_THAT(d.refused, Contains(theirs.string() + " above it is owned by uid 65534"));
  // A link in their directory to a good directory of yours: they could repoint it.
  fs::create_directory(s.dir / "good");
  REQUIRE(::chmod((s.dir / "good").c_str(), 0700) == 0);
  fs::create_directory_symlink(s.dir / "good", theirs / "link");
  d = disk_cache::open((theirs / "link").string());
  CHECK_THAT(d.refused, Contains(theirs.string() + " on its path is owned by uid 65534, who could redirect it"));
  // The same link in a directory of yours is fine.
  fs::create_directory_symlink(s.dir / "good", s.dir / "link");
  CHECK(disk_cache::open((s.dir / "link").string()).writable());
}

TEST_CASE("a file where the cache directory should be is refused", "[security]") {
  sandbox s;
  write_file(s.dir / "file", "x");
  const auto d = disk_cache::open((s.dir / "file").string(), "host");
  CHECK_THAT(d.refused, Contains((s.dir / "file").string() + " is not a directory"));
}

TEST_CASE("the cache root: explicit, then the environment, then the account's own home", "[security]") {
  struct restore {
    std::vector<std::pair<std::string, std::optional<std::string>>> saved;
    void set(const char* n, const char* v) {
      const char* old = std::getenv(n);
      saved.emplace_back(n, old ? std::optional<std::string>(old) : std::nullopt);
      if (v) ::setenv(n, v, 1);
      else ::unsetenv(n);
    }
    ~restore() {
      for (auto it = saved.rbegin(); it != saved.rend(); ++it)
        if (it->second) ::setenv(it->first.c_str(), it->second->c_str(), 1);
        else ::unsetenv(it->first.c_str());
    }
  } env;
  env.set("STAGECRAFT_CACHE_DIR", "/x/explicit-env");
  env.set("XDG_CACHE_HOME", "/x/xdg");
  env.set("HOME", "/x/home");
  env.set("XDG_RUNTIME_DIR", "/x/run");
  CHECK(disk_cache::root("/given") == "/given");
  CHECK(disk_cache::root() == "/x/explicit-env");
  env.set("STAGECRAFT_CACHE_DIR", "");
  CHECK(disk_cache::root() == "/x/xdg/stagecraft");
  env.set("XDG_CACHE_HOME", nullptr);
  CHECK(disk_cache::root() == "/x/home/.cache/stagecraft");
  env.set("HOME", "");
  // No HOME (cron, systemd, env -i): never the one directory all users share.
  const auto r = disk_cache::root();
  CHECK(r != "/tmp/stagecraft-cache");
  struct stat home{};
  if (root() && ::stat("/root", &home) == 0 && home.st_uid == 0) CHECK(r == "/root/.cache/stagecraft");
}

TEST_CASE("an entry is written under a fresh name and renamed: a planted link is replaced, never followed", "[security]") {
  sandbox s;
  const auto victim = s.dir / "victim.txt";
  write_file(victim, "the victim's data");
  const auto entry = s.dir / "0123456789abcdef.scjit";
  fs::create_symlink(victim, entry);
  CHECK(disk_cache::write_atomically(entry, "entry bytes").empty());
  CHECK(read_file(victim) == "the victim's data");
  CHECK_FALSE(fs::is_symlink(entry));
  CHECK(read_file(entry) == "entry bytes");
  CHECK(mode_of(entry) == 0600);
  std::size_t files = 0;
  for ([[maybe_unused]] auto const& f : fs::directory_iterator(s.dir)) ++files;
  CHECK(files == 2);  // the victim and the entry: no temporary left
  // A directory that does not exist: an error with the path, nothing left behind.
  CHECK_THAT(disk_cache::write_atomically(s.dir / "nowhere" / "e", "x"), Contains("cannot create a temporary file beside") && Contains("nowhere"));
}

TEST_CASE("an entry is read only when it is a regular file of ours that no one else may write", "[security]") {
  sandbox s;
  const auto good = s.dir / "good";
  REQUIRE(disk_cache::write_atomically(good, "payload").empty());
  std::string why;
  int fd = disk_cache::open_entry(good, &why);
  REQUIRE(fd >= 0);
  CHECK(disk_cache::read_all(fd) == std::optional<std::string>("payload"));
  ::close(fd);

  fs::create_symlink(good, s.dir / "link");
  CHECK(disk_cache::open_entry(s.dir / "link", &why) == -1);
  CHECK(why == "it is a symbolic link");

  REQUIRE(::chmod(good.c_str(), 0666) == 0);
  CHECK(disk_cache::open_entry(good, &why) == -1);
  CHECK(why == "its mode 0666 lets others write it");

  fs::create_directory(s.dir / "dir");
  CHECK(disk_cache::open_entry(s.dir / "dir", &why) == -1);
  CHECK(why == "it is not a regular file");

  if (root()) {
    REQUIRE(::chmod(good.c_str(), 0644) == 0);
    REQUIRE(::chown(good.c_str(), other_uid, other_uid) == 0);
    CHECK(disk_cache::open_entry(good, &why) == -1);
    CHECK(why == "it is owned by uid 65534, not by you");
  }
}

TEST_CASE("the digest finds every single-bit flip of an entry", "[security]") {
  std::string bytes(4096, '\0');
  std::uint64_t x = 0x9e3779b97f4a7c15ull;  // seeded bytes, never all zeros
  for (auto& b : bytes) b = static_cast<char>((x = x * 6364136223846793005ull + 1442695040888963407ull) >> 56);
  const auto h = disk_cache::digest(bytes);
  for (std::size_t i = 0; i < bytes.size(); i += 7)
    for (int bit = 0; bit < 8; bit += 3) {
      auto flipped = bytes;
      flipped[i] = static_cast<char>(flipped[i] ^ (1 << bit));
      CHECK(disk_cache::digest(flipped) != h);
    }
}
