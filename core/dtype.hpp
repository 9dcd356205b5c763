// Element types and the promotion rule bool < i32 < i64 < bf16, f16 < f32 < f64 (a float operand
// wins; bf16 with f16 gives f32). bf16 and f16 are storage formats: a value of either is an f32
// rounded to it (to nearest, ties to even), every operation on them computes in f32 and rounds
// its result, reductions accumulate in f32 and round once (docs/api.md, "Half precision").
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace hedra {

// New types go at the end: the numbering is part of kernel cache keys.
enum class DType : std::uint8_t { Bool, I32, I64, F32, F64, BF16, F16 };

constexpr bool is_half(DType t) {
    return t == DType::BF16 || t == DType::F16;
}
constexpr bool is_float(DType t) {
    return t == DType::F32 || t == DType::F64 || is_half(t);
}
// The type arithmetic on `t` is computed in: f32 for the half formats, `t` otherwise.
constexpr DType compute_dtype(DType t) {
    return is_half(t) ? DType::F32 : t;
}
constexpr bool is_integer(DType t) {
    return t == DType::I32 || t == DType::I64;
}
constexpr std::size_t dtype_size(DType t) {
    switch (t) {
    case DType::Bool:
        return 1;
    case DType::I32:
        return 4;
    case DType::I64:
        return 8;
    case DType::F32:
        return 4;
    case DType::F64:
        return 8;
    case DType::BF16:
        return 2;
    case DType::F16:
        return 2;
    }
    return 0;
}

// The position of `t` in the promotion order.
constexpr int promotion_rank(DType t) {
    switch (t) {
    case DType::Bool:
        return 0;
    case DType::I32:
        return 1;
    case DType::I64:
        return 2;
    case DType::BF16:
        return 3;
    case DType::F16:
        return 3;
    case DType::F32:
        return 4;
    case DType::F64:
        return 5;
    }
    return 0;
}

// The larger of the two in the order bool < i32 < i64 < bf16, f16 < f32 < f64; bf16 with f16
// gives f32 (neither holds the other's values).
constexpr DType promote(DType a, DType b) {
    if (is_half(a) && is_half(b) && a != b) return DType::F32;
    return promotion_rank(a) >= promotion_rank(b) ? a : b;
}

std::string_view dtype_name(DType t);     // "f32", "i64", ...
const char* dtype_cpp_name(DType t);      // the C++ element type: "float", "std::int64_t"
                                          // (the half formats: "std::uint16_t", their bits)
DType parse_dtype(std::string_view name); // throws hedra::Error for an unknown name

// The DType of a C++ element type, for typed host access.
template <class T>
constexpr DType dtype_of();
template <>
constexpr DType dtype_of<bool>() {
    return DType::Bool;
}
template <>
constexpr DType dtype_of<std::int32_t>() {
    return DType::I32;
}
template <>
constexpr DType dtype_of<std::int64_t>() {
    return DType::I64;
}
template <>
constexpr DType dtype_of<float>() {
    return DType::F32;
}
template <>
constexpr DType dtype_of<double>() {
    return DType::F64;
}

} // namespace hedra
