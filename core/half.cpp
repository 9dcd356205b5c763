// Host conversions of the half formats (see half.hpp).
#include "core/half.hpp"

namespace hedra {
namespace f32math {
#include "core/f32_math.hpp" // NOLINT: the conversions the generated code uses
} // namespace f32math

float half_to_f32(DType t, std::uint16_t bits) {
    return t == DType::BF16 ? f32math::hd_bf16_to_f32(bits) : f32math::hd_f16_to_f32(bits);
}

std::uint16_t f32_to_half(DType t, float value) {
    return t == DType::BF16 ? f32math::hd_f32_to_bf16(value) : f32math::hd_f32_to_f16(value);
}

} // namespace hedra
