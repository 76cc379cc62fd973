#pragma once

namespace stagecraft::hostexec::detail {
extern const char* const abi_header;      // sc_host_abi.h
extern const char* const prelude_header;  // sc_host_prelude.h
}  // namespace stagecraft::hostexec::detail
