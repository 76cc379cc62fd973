// A kernel's host object, loaded: the two symbols the runtime calls.
#pragma once
#include <string>

#include "sc_host_abi.h"
#include "stagecraft/hostexec/hostexec.hpp"

namespace stagecraft::hostexec {

struct module {
  void* handle = nullptr;                                 // dlopen'ed, never closed (cached)
  void (*bind)(const schost::api*) = nullptr;             // sc_host_bind
  void (*entry)(const void* maps, void* const* gmem, const long long* extents) = nullptr;  // sc_host_entry: one CUDA thread
  std::string path;
  int pinned_fd = -1;  // the checked file, open for the process's life (dlopen'ed as /proc/self/fd/N)
};

}  // namespace stagecraft::hostexec
