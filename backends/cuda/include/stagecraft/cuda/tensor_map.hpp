// Host-side checks of a TMA descriptor before cuTensorMapEncodeTiled sees it: each rule the
// driver would answer with CUDA_ERROR_INVALID_VALUE gets its own plain-English message.
// No driver needed.
#pragma once
#include <array>
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
  std::vector<std::int64_t> box;     // outermost first: elements traversed (boxDim)
  int swizzle = 0;                   // bytes: 0, 32, 64, 128
  // Outermost first, 1 to 8 (elementStrides); the innermost must be 1. Empty: every stride 1.
  // TMA moves ceil(box[d] / elem_strides[d]) elements of dimension d: every stride-th.
  std::vector<std::int64_t> elem_strides = {};
  // What lands outside the array: zeros (OOB_FILL_NONE), or NaN (OOB_FILL_NAN_REQUEST_ZERO_FMA,
  // floating-point tensor maps only).
  bool nan_fill = false;
};

// The arrays cuTensorMapEncodeTiled takes, innermost dimension first (the driver's order).
struct tensor_map_args {
  unsigned rank = 0;
  std::array<std::uint64_t, 5> dims{};          // globalDim: elements
  std::array<std::uint64_t, 4> strides{};       // globalStrides: bytes, dimensions 1..rank-1
  std::array<std::uint32_t, 5> box{};           // boxDim: elements traversed
  std::array<std::uint32_t, 5> elem_strides{};  // elementStrides
};

struct tensor_map_error : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// Throws tensor_map_error naming the parameter, the rule and the values.
void validate(tensor_map_request const& r);
// validate(r), then the arguments for the driver (the CUDA runtime and the host backend both
// encode with these, so a test of them tests what the GPU gets).
tensor_map_args encode_args(tensor_map_request const& r);

}  // namespace stagecraft::cuda
