// Host-side checks of a TMA descriptor before cuTensorMapEncodeTiled sees it: each rule the
// driver would answer with CUDA_ERROR_INVALID_VALUE gets its own plain-English message.
// No driver needed.
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "stagecraft/ir/types.hpp"

namespace stagecraft::cuda {

struct tensor_map_request {
  std::string name;                  // parameter name, for messages
  ir::DType dtype = ir::DType::f32;
  std::uintptr_t address = 0;        // device address of the array
  std::vector<std::int64_t> shape;   // outermost first (row-major array)
  std::vector<std::int64_t> box;     // outermost first
  int swizzle = 0;                   // bytes: 0, 32, 64, 128
};

struct tensor_map_error : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// Throws tensor_map_error naming the parameter, the rule and the values.
void validate(tensor_map_request const& r);

}  // namespace stagecraft::cuda
