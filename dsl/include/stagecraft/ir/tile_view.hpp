// Views of a tile value (ValueOp::permute, reshape, slice): each result element is one operand
// element, found at an affine function of the result's coordinates,
//
//   operand flat index = offset + sum over result axes d of coord_d * stride[d]
//
// (coord_d = (i / inner_d) % extent_d in the row-major result). One decoding serves the verifier
// (a view it cannot decode is rejected), the interpreter (which gathers) and the code generator
// (which writes the same sum into the element expression), so they cannot disagree on where an
// element comes from.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "stagecraft/ir/types.hpp"

namespace stagecraft::ir {

struct tile_view {
  std::int64_t offset = 0;
  std::vector<std::int64_t> stride;  // per result axis, in operand elements
};

inline std::vector<std::int64_t> row_major_strides(std::vector<std::int64_t> const& shape) {
  std::vector<std::int64_t> s(shape.size(), 1);
  for (std::size_t d = shape.size(); d-- > 1;) s[d - 1] = s[d] * shape[d];
  return s;
}

// The shape without its leading unit extents (every one but the last): a (1, 64) row of a 2-D
// array holds the same elements in the same order as a (64) vector.
inline std::vector<std::int64_t> drop_leading_units(std::vector<std::int64_t> shape) {
  std::size_t n = 0;
  while (n + 1 < shape.size() && shape[n] == 1) ++n;
  shape.erase(shape.begin(), shape.begin() + static_cast<std::ptrdiff_t>(n));
  return shape;
}

// permute: result axis d is operand axis (code >> 3d) & 7.
inline double pack_permutation(std::vector<int> const& perm) {
  std::int64_t code = 0;
  for (std::size_t d = 0; d < perm.size(); ++d) code |= static_cast<std::int64_t>(perm[d]) << (3 * d);
  return static_cast<double>(code);
}
inline double pack_slice(int axis, std::int64_t start) { return static_cast<double>(axis + 8 * start); }

// The view from `operand` to `result`, or why it is not one (the verifier's message).
struct tile_view_or_error {
  std::optional<tile_view> view;
  std::string error;
};

inline tile_view_or_error decode_tile_view(ValueOp op, double scalar, std::vector<std::int64_t> const& result,
                                           std::vector<std::int64_t> const& operand) {
  auto no = [](std::string why) { return tile_view_or_error{std::nullopt, std::move(why)}; };
  // Every code below is an integer in [0, 2^53); anything else is a corrupt IR.
  if (!(scalar >= 0 && scalar < 0x1p53) || scalar != static_cast<double>(static_cast<std::int64_t>(scalar)))
    return no("its parameter is not a non-negative integer");
  const auto code = static_cast<std::int64_t>(scalar);
  const auto in = row_major_strides(operand);
  tile_view v;
  switch (op) {
    case ValueOp::permute: {
      if (result.size() != operand.size() || result.size() > static_cast<std::size_t>(max_alloc_rank))
        return no("it changes the rank");
      if (code >> (3 * result.size()) != 0) return no("its permutation names more axes than the tile has");
      std::vector<bool> seen(result.size(), false);
      for (std::size_t d = 0; d < result.size(); ++d) {
        const auto from = static_cast<std::size_t>((code >> (3 * d)) & 7);
        if (from >= operand.size() || seen[from]) return no("its parameter is not a permutation of the axes");
        seen[from] = true;
      }
      for (std::size_t d = 0; d < result.size(); ++d) {
        const auto from = static_cast<std::size_t>((code >> (3 * d)) & 7);
        if (result[d] != operand[from]) return no("the result's extents are not the operand's, permuted");
        v.stride.push_back(in[from]);
      }
      return {v, {}};
    }
    case ValueOp::reshape: {
      std::int64_t n = 1, m = 1;
      for (auto e : result) n *= e;
      for (auto e : operand) m *= e;
      if (code != 0) return no("it carries a parameter");
      if (n != m) return no("the element counts differ");
      v.stride = row_major_strides(result);  // the flat index is kept
      return {v, {}};
    }
    case ValueOp::slice: {
      const auto axis = static_cast<std::size_t>(code & 7);
      const std::int64_t start = code >> 3;
      if (result.size() != operand.size() || axis >= operand.size()) return no("its axis is not an axis of the tile");
      for (std::size_t d = 0; d < result.size(); ++d)
        if (d != axis && result[d] != operand[d]) return no("it changes an extent other than its axis'");
      if (start + result[axis] > operand[axis]) return no("the slice runs past the end of the axis");
      v.stride = in;
      v.offset = start * in[axis];
      return {v, {}};
    }
    default: return no("it is not a view");
  }
}

}  // namespace stagecraft::ir
