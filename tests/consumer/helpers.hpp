#pragma once
#include <span>

namespace my {
inline constexpr float alpha = 3.0f;
void reference_saxpy(std::span<const float> x, std::span<float> y);
}  // namespace my
