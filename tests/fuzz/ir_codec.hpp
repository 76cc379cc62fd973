// A compact binary form of ir::Kernel: the fuzzers' input format.
//
// Every field of every arena entry is written, in declaration order, as a LEB128 varint
// (zigzag for signed fields; enums as their raw byte, so a mutation can produce any value).
// decode() accepts any byte string: missing bytes read as zero and a count never exceeds the
// bytes left, so a short or mutated input still yields a kernel (usually one the verifier
// rejects) and never a large allocation. encode(decode(encode(k))) == encode(k) for every k.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "stagecraft/ir/kernel.hpp"

namespace stagecraft::fuzz {

std::string encode(ir::Kernel const& k);
ir::Kernel decode(std::uint8_t const* data, std::size_t size);
inline ir::Kernel decode(std::string const& s) { return decode(reinterpret_cast<std::uint8_t const*>(s.data()), s.size()); }

}  // namespace stagecraft::fuzz
