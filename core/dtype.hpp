// Element types and the promotion rule bool < i32 < i64 < f32 < f64 (a float operand wins).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace hedra {

enum class DType : std::uint8_t { Bool, I32, I64, F32, F64 };

constexpr bool is_float(DType t) { return t == DType::F32 || t == DType::F64; }
constexpr bool is_integer(DType t) { return t == DType::I32 || t == DType::I64; }
constexpr std::size_t dtype_size(DType t) {
    switch (t) {
    case DType::Bool: return 1;
    case DType::I32: return 4;
    case DType::I64: return 8;
    case DType::F32: return 4;
    case DType::F64: return 8;
    }
    return 0;
}

// The larger of the two in the order bool < i32 < i64 < f32 < f64.
constexpr DType promote(DType a, DType b) { return a > b ? a : b; }

std::string_view dtype_name(DType t);          // "f32", "i64", ...
const char* dtype_cpp_name(DType t);           // the C++ element type: "float", "std::int64_t"
DType parse_dtype(std::string_view name);      // throws hedra::Error for an unknown name

// The DType of a C++ element type, for typed host access.
template <class T>
constexpr DType dtype_of();
template <> constexpr DType dtype_of<bool>() { return DType::Bool; }
template <> constexpr DType dtype_of<std::int32_t>() { return DType::I32; }
template <> constexpr DType dtype_of<std::int64_t>() { return DType::I64; }
template <> constexpr DType dtype_of<float>() { return DType::F32; }
template <> constexpr DType dtype_of<double>() { return DType::F64; }

} // namespace hedra
