#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "stagecraft/host/tensor.hpp"
#include "stagecraft/ir/fp8.hpp"
#include "stagecraft/ir/kernel.hpp"
#include "stagecraft/ir/mx_formats.hpp"

namespace stagecraft {

host_tensor host_tensor::zeros(ir::DType dt, std::vector<std::int64_t> shape) {
  host_tensor t{dt, std::move(shape), {}};
  t.bytes.assign(static_cast<std::size_t>(byte_count(dt, t.shape)), std::byte{0});
  return t;
}

// Shapes come from users (CLI parameters up to 2^31 per extent): a product that wraps would
// allocate a few bytes for a tensor that is then indexed far beyond them, so every product is
// checked and a shape that does not fit is an error naming it.
std::int64_t host_tensor::element_count(std::span<const std::int64_t> shape) {
  std::int64_t n = 1;
  for (auto e : shape) {
    if (e < 0) throw std::invalid_argument(fmt::format("host_tensor of shape ({}): extent {} is negative", fmt::join(shape, ", "), e));
    if (__builtin_mul_overflow(n, e, &n))
      throw std::invalid_argument(fmt::format("host_tensor of shape ({}): the element count does not fit in 63 bits", fmt::join(shape, ", ")));
  }
  return n;
}

std::int64_t host_tensor::byte_count(ir::DType dt, std::span<const std::int64_t> shape) {
  const std::int64_t n = element_count(shape);
  std::int64_t bits = 0;
  if (__builtin_mul_overflow(n, std::int64_t{ir::packed_bits(dt)}, &bits))
    throw std::invalid_argument(fmt::format("host_tensor of {} with shape ({}): {} elements of {} bits do not fit in 63 bits of bytes",
                                            ir::dtype_name(dt), fmt::join(shape, ", "), n, ir::packed_bits(dt)));
  return bits / 8 + (bits % 8 != 0);
}

std::int64_t host_tensor::elements() const { return element_count(shape); }

void host_tensor::check_storage(bool matches, std::size_t elem) const {
  if (!matches)
    throw std::invalid_argument(fmt::format("host_tensor of {} viewed with a {}-byte element type", ir::dtype_name(dtype), elem));
}

double host_tensor::get(std::int64_t i) const {
  switch (dtype) {
    case ir::DType::f32: return as<float>()[i];
    case ir::DType::f16: return f16_to_f32(as<std::uint16_t>()[i]);
    case ir::DType::bf16: return bf16_to_f32(as<std::uint16_t>()[i]);
    case ir::DType::i32: return as<std::int32_t>()[i];
    case ir::DType::u32: return as<std::uint32_t>()[i];
    case ir::DType::i8: return as<std::int8_t>()[i];
    case ir::DType::u8: case ir::DType::e2m1x2: case ir::DType::ue4m3: return as<std::uint8_t>()[i];
    case ir::DType::e2m3: case ir::DType::e3m2: case ir::DType::e2m1:  // the code (unit-packed types are packed in GMEM: ir/types.hpp)
      return ir::mx::unit_get(ir::unit_bits(dtype), as<std::uint8_t>().data(), i);
    case ir::DType::e4m3: return ir::e4m3_to_f32(as<std::uint8_t>()[i]);
    case ir::DType::e5m2: return ir::e5m2_to_f32(as<std::uint8_t>()[i]);
    case ir::DType::pred: return as<std::uint8_t>()[i] != 0;
  }
  return 0;
}

std::int64_t first_difference(host_tensor const& a, host_tensor const& b) {
  if (a.dtype != b.dtype || a.shape != b.shape || a.bytes.size() != b.bytes.size())
    throw std::invalid_argument(fmt::format("comparing a {}[{}] tensor with a {}[{}] one", ir::dtype_name(a.dtype), fmt::join(a.shape, ", "),
                                            ir::dtype_name(b.dtype), fmt::join(b.shape, ", ")));
  // Bit patterns, not values (-0 and +0 are different results); a NaN is all ones in the
  // exponent and a non-zero mantissa, whatever its sign.
  auto first = [](auto const& x, auto const& y, auto nan) {
    for (std::size_t i = 0; i < x.size(); ++i)
      if (x[i] != y[i] && !(nan(x[i]) && nan(y[i]))) return static_cast<std::int64_t>(i);
    return std::int64_t{-1};
  };
  switch (a.dtype) {
    case ir::DType::f32: {
      std::vector<std::uint32_t> x(a.bytes.size() / 4), y(x.size());
      std::memcpy(x.data(), a.bytes.data(), a.bytes.size());
      std::memcpy(y.data(), b.bytes.data(), b.bytes.size());
      return first(x, y, [](std::uint32_t f) { return (f & 0x7fffffffu) > 0x7f800000u; });
    }
    case ir::DType::f16: return first(a.as<std::uint16_t>(), b.as<std::uint16_t>(), [](std::uint16_t h) { return (h & 0x7fffu) > 0x7c00u; });
    case ir::DType::bf16: return first(a.as<std::uint16_t>(), b.as<std::uint16_t>(), [](std::uint16_t h) { return (h & 0x7fffu) > 0x7f80u; });
    case ir::DType::e4m3: return first(a.as<std::uint8_t>(), b.as<std::uint8_t>(), [](std::uint8_t q) { return (q & 0x7fu) == 0x7fu; });
    case ir::DType::e5m2: return first(a.as<std::uint8_t>(), b.as<std::uint8_t>(), [](std::uint8_t q) { return (q & 0x7fu) > 0x7cu; });
    case ir::DType::e2m3: case ir::DType::e3m2: case ir::DType::e2m1:  // packed: element by element
      for (std::int64_t i = 0; i < a.elements(); ++i)
        if (a.get(i) != b.get(i)) return i;
      return -1;
    default: break;
  }
  const auto elem = static_cast<std::size_t>(ir::dtype_bits(a.dtype) / 8);
  for (std::size_t i = 0; i < a.bytes.size(); i += elem)
    if (std::memcmp(a.bytes.data() + i, b.bytes.data() + i, elem) != 0) return static_cast<std::int64_t>(i / elem);
  return -1;
}

namespace {
// Integer conversion as the GPU's cvt.rzi with wrap-around on store: truncate toward zero, keep
// the low bits.
template <class T>
T wrap(double v) {
  if (!std::isfinite(v)) return T{0};
  const auto t = static_cast<long long>(std::fmod(std::trunc(v), 18446744073709551616.0));
  return static_cast<T>(static_cast<std::make_unsigned_t<T>>(static_cast<unsigned long long>(t)));
}
}  // namespace

void host_tensor::set(std::int64_t i, double v) {
  switch (dtype) {
    case ir::DType::f32: as<float>()[i] = static_cast<float>(v); return;
    case ir::DType::f16: as<std::uint16_t>()[i] = f32_to_f16(static_cast<float>(v)); return;
    case ir::DType::bf16: as<std::uint16_t>()[i] = f32_to_bf16(static_cast<float>(v)); return;
    case ir::DType::i32: as<std::int32_t>()[i] = wrap<std::int32_t>(v); return;
    case ir::DType::u32: as<std::uint32_t>()[i] = wrap<std::uint32_t>(v); return;
    case ir::DType::i8: as<std::int8_t>()[i] = wrap<std::int8_t>(v); return;
    case ir::DType::u8: case ir::DType::e2m1x2: case ir::DType::ue4m3: as<std::uint8_t>()[i] = wrap<std::uint8_t>(v); return;
    case ir::DType::e2m3: case ir::DType::e3m2: case ir::DType::e2m1:  // the code's low 6 (4) bits
      ir::mx::unit_set(ir::unit_bits(dtype), as<std::uint8_t>().data(), i, wrap<std::uint8_t>(v));
      return;
    // Through f32 as on the GPU (cast<e4m3>() of an f32 tile): the double rounds to f32 first.
    case ir::DType::e4m3: as<std::uint8_t>()[i] = ir::f32_to_e4m3(static_cast<float>(v)); return;
    case ir::DType::e5m2: as<std::uint8_t>()[i] = ir::f32_to_e5m2(static_cast<float>(v)); return;
    case ir::DType::pred: as<std::uint8_t>()[i] = v != 0; return;
  }
}

std::uint16_t f32_to_f16(float f) {
  const auto x = std::bit_cast<std::uint32_t>(f);
  const std::uint32_t sign = (x >> 16) & 0x8000u;
  const std::uint32_t abs = x & 0x7fffffffu;
  if (abs >= 0x7f800000u) return static_cast<std::uint16_t>(sign | (abs > 0x7f800000u ? 0x7e00u : 0x7c00u));  // NaN / Inf
  if (abs >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);  // rounds to >= 65520: Inf
  if (abs < 0x38800000u) {  // subnormal half (or zero): shift the 24-bit significand into place, RNE
    if (abs < 0x33000000u) return static_cast<std::uint16_t>(sign);  // below half the smallest subnormal
    const std::uint32_t exp = abs >> 23;
    const std::uint32_t mant = (abs & 0x7fffffu) | 0x800000u;
    const std::uint32_t shift = 126 - exp;  // 14 + (113 - exp) - 1
    std::uint32_t h = mant >> shift;
    const std::uint32_t rem = mant & ((1u << shift) - 1);
    const std::uint32_t half = 1u << (shift - 1);
    if (rem > half || (rem == half && (h & 1u))) ++h;
    return static_cast<std::uint16_t>(sign | h);
  }
  std::uint32_t h = ((abs >> 13) - (112u << 10));
  const std::uint32_t rem = abs & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;
  return static_cast<std::uint16_t>(sign | h);
}

float f16_to_f32(std::uint16_t h) {
  const std::uint32_t sign = (h & 0x8000u) << 16;
  const std::uint32_t exp = (h >> 10) & 0x1fu;
  std::uint32_t mant = h & 0x3ffu;
  if (exp == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mant << 13));
  if (exp == 0) {
    if (mant == 0) return std::bit_cast<float>(sign);
    return (sign ? -1.0f : 1.0f) * std::ldexp(static_cast<float>(mant), -24);
  }
  return std::bit_cast<float>(sign | ((exp + 112u) << 23) | (mant << 13));
}

std::uint16_t f32_to_bf16(float f) {
  auto x = std::bit_cast<std::uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((x >> 16) | 0x40u);  // quiet NaN
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<std::uint16_t>(x >> 16);
}

float bf16_to_f32(std::uint16_t h) { return std::bit_cast<float>(static_cast<std::uint32_t>(h) << 16); }

void seed_segment_tables(ir::Kernel const& k, std::vector<host_tensor>& inputs, std::uint64_t seed) {
  if (std::none_of(k.params.begin(), k.params.end(), [](ir::Param const& p) { return p.segments >= 0; })) return;
  auto seeded = seeded_inputs(k, seed);
  for (std::size_t i = 0; i < k.params.size() && i < inputs.size(); ++i)
    if (k.params[i].segments >= 0) inputs[i] = std::move(seeded[i]);
}

void check_segment_tables(ir::Kernel const& k, std::vector<host_tensor> const& buffers) {
  for (std::size_t i = 0; i < k.params.size() && i < buffers.size(); ++i) {
    auto const& p = k.params[i];
    if (p.segments < 0) continue;
    auto const& t = buffers[i];
    auto at = [&](std::int64_t g) { return static_cast<std::int64_t>(t.get(g)); };
    const auto n = t.elements();
    auto bad = [&](std::string const& why) {
      std::vector<std::int64_t> head;
      for (std::int64_t g = 0; g < std::min<std::int64_t>(n, 12); ++g) head.push_back(at(g));
      throw std::invalid_argument(fmt::format("kernel '{}': segment table '{}' = [{}{}] {} (a segment table runs from 0 to the {} rows it "
                                              "covers, never decreasing)",
                                              k.name, p.name, fmt::join(head, ", "), n > 12 ? ", ..." : "", why, p.segments));
    };
    if (n < 1) bad("is empty");
    if (at(0) != 0) bad(fmt::format("starts at {}, not 0", at(0)));
    for (std::int64_t g = 1; g < n; ++g)
      if (at(g) < at(g - 1)) bad(fmt::format("decreases at {}: {}[{}] = {} < {}[{}] = {}", g, p.name, g, at(g), p.name, g - 1, at(g - 1)));
    if (at(n - 1) != p.segments) bad(fmt::format("ends at {}, not at the {} rows it covers", at(n - 1), p.segments));
  }
}

std::vector<host_tensor> seeded_inputs(ir::Kernel const& k, std::uint64_t seed) {
  // Seeded random inputs, never all zeros: floats in [-2, 2), integers in a small range.
  std::vector<host_tensor> out;
  std::uint64_t state = seed * 0x9e3779b97f4a7c15ull + 1;
  auto next = [&] {  // xorshift64: cheap, and the inputs of every seed ever printed stay the same
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  for (auto const& p : k.params) {
    auto t = host_tensor::zeros(p.dtype, p.shape);
    if (p.segments >= 0) {  // a segment table: random cuts of the rows, about one segment in four empty
      const auto groups = p.shape[0] - 1;
      std::vector<std::int64_t> cut(static_cast<std::size_t>(groups + 1), 0);
      cut.back() = p.segments;
      for (std::int64_t g = 1; g < groups; ++g) cut[static_cast<std::size_t>(g)] = static_cast<std::int64_t>(next() % static_cast<std::uint64_t>(p.segments + 1));
      std::sort(cut.begin() + 1, cut.end() - 1);
      for (std::int64_t g = 1; g < groups; ++g)
        if (next() % 4 == 0) cut[static_cast<std::size_t>(g)] = cut[static_cast<std::size_t>(g - 1)];
      for (std::int64_t g = 0; g <= groups; ++g) t.set(g, static_cast<double>(cut[static_cast<std::size_t>(g)]));
      out.push_back(std::move(t));
      continue;
    }
    // A workspace is no input: its slot stays zeros (launchers zero-fill their own copy anyway)
    // and draws nothing, so the other parameters' bits are those of the same kernel without it.
    for (std::int64_t i = 0; i < (p.workspace ? 0 : t.elements()); ++i) {
      const auto r = next();
      if (ir::dtype_is_float(p.dtype)) t.set(i, static_cast<double>(r >> 40) / static_cast<double>(1ull << 24) * 4.0 - 2.0);
      else if (ir::dtype_is_unit_packed(p.dtype)) t.set(i, static_cast<double>(r % (1u << ir::unit_bits(p.dtype))));  // any code (no NaN in FP6, FP4)
      else if (p.dtype == ir::DType::u32 || ir::dtype_is_byte_code(p.dtype)) t.set(i, static_cast<double>(r % 200));
      else t.set(i, static_cast<double>(static_cast<std::int64_t>(r % 201) - 100));
    }
    out.push_back(std::move(t));
  }
  return out;
}

ir::Kernel bind_to_buffers(ir::Kernel const& k, std::vector<host_tensor> const& buffers) {
  if (k.extents.empty()) return k;
  std::vector<std::vector<std::int64_t>> shapes;
  for (auto const& b : buffers) shapes.push_back(b.shape);
  return ir::bind_to(k, shapes);
}

}  // namespace stagecraft
