// interp::run_in_place on the user's arrays: a copy in, the run, the outputs copied back.
#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "stagecraft/interp/interp.hpp"

namespace stagecraft::interp {

result run_in_place(ir::Kernel const& k, std::span<host_view const> arrays, options const& o) {
  if (arrays.size() != k.params.size())
    throw std::invalid_argument(fmt::format("kernel '{}' takes {} arrays (one per GMEM parameter), got {}", k.name, k.params.size(), arrays.size()));
  std::vector<host_tensor> buffers;
  buffers.reserve(arrays.size());
  for (std::size_t i = 0; i < arrays.size(); ++i) {
    auto const& v = arrays[i];
    auto t = host_tensor::zeros(v.dtype, v.shape);  // the run checks dtype and shape against the parameter
    if (t.bytes.size() != v.bytes.size())
      throw std::invalid_argument(fmt::format("kernel '{}': the array for parameter '{}' has {} bytes, but its shape needs {}", k.name,
                                              k.params[i].name, v.bytes.size(), t.bytes.size()));
    std::memcpy(t.bytes.data(), v.bytes.data(), v.bytes.size());
    buffers.push_back(std::move(t));
  }
  result r = run(k, std::move(buffers), o);
  for (int p : written_params(k)) std::memcpy(arrays[p].bytes.data(), r.buffers[p].bytes.data(), arrays[p].bytes.size());
  r.buffers.clear();
  return r;
}

}  // namespace stagecraft::interp
