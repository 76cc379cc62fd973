// The vendor libraries the benchmarks compare against (cuBLASLt, cuDNN) are dlopen'ed, so the
// benchmarks build and report "not found" on machines without them instead of failing to link.
#pragma once
#include <dlfcn.h>

#include <string>
#include <type_traits>
#include <vector>

namespace stagecraft::bench {

struct dl_library {
  void* handle = nullptr;
  std::string path;    // the entry of `tries` that loaded
  std::string reason;  // empty when loaded: else every dlopen failure, for the user
};

// The first of `tries` dlopen loads; `what` names the library in the reason when none does.
inline dl_library dl_open_first(std::vector<std::string> const& tries, std::string const& what) {
  dl_library l;
  std::string errors;
  for (auto const& t : tries) {
    if ((l.handle = ::dlopen(t.c_str(), RTLD_NOW | RTLD_LOCAL))) {
      l.path = t;
      return l;
    }
    errors += std::string(errors.empty() ? "" : "; ") + ::dlerror();
  }
  l.reason = what + " could not be loaded (" + errors + ")";
  return l;
}

// Binds function pointers to their symbols; ok() says whether every one was found.
class dl_symbols {
 public:
  explicit dl_symbols(void* handle) : handle_(handle) {}
  template <class F>
  dl_symbols& operator()(const char* name, F& fn) {
    fn = reinterpret_cast<std::remove_reference_t<F>>(::dlsym(handle_, name));
    ok_ = ok_ && fn;
    return *this;
  }
  bool ok() const { return ok_; }

 private:
  void* handle_;
  bool ok_ = true;
};

}  // namespace stagecraft::bench
