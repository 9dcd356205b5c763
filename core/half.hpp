// The half storage formats bf16 and f16 on the host: conversions to and from f32 with the
// rounding every backend uses (core/f32_math.hpp: to nearest, ties to even).
#pragma once

#include <cstdint>

#include "core/dtype.hpp"

namespace hedra {

// `t` is DType::BF16 or DType::F16.
float half_to_f32(DType t, std::uint16_t bits);
std::uint16_t f32_to_half(DType t, float value);

} // namespace hedra
