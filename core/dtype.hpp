// Element types and the promotion rule bool < i32 < i64 < bf16, f16 < f32 < f64 (a float operand
// wins; bf16 with f16 gives f32). bf16 and f16 are storage formats: a value of either is an f32
// rounded to it (to nearest, ties to even), every operation on them computes in f32 and rounds
// its result, reductions accumulate in f32 and round once (docs/api.md, "Half precision").
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string>
#include <string_view>

namespace hedra {

// The element types and their facts are listed once, in core/dtypes.def: a new type is one line
// there (at the end: the numbering is part of kernel cache keys).
enum class DType : std::uint8_t {
#define HEDRA_DTYPE(Id, ...) Id,
#include "core/dtypes.def"
};

// What arithmetic on a type is: Half is a storage format computed in f32.
enum class DTypeKind : std::uint8_t { Bool, Int, Float, Half };

// One row of core/dtypes.def.
struct DTypeInfo {
    std::string_view name;      // "f32", "i64", ...
    std::size_t size;           // bytes per element
    const char* cpp_name;       // the C++ element type: "float", "std::int64_t"
    const char* c_name;         // the C element type: "float", "int64_t"
    const char* kernel_value;   // the type generated kernels compute in: "int", "float"
    const char* kernel_storage; // the type generated kernels store: "unsigned char", "hd_bf16"
    DTypeKind kind;
    int promotion_rank;      // the position in the promotion order
    const char* safetensors; // the safetensors format's name: "F32", "I64", ...
};

// clang-format off
inline constexpr DTypeInfo kDTypeInfo[] = {
#define HEDRA_DTYPE(Id, name, storage, cpp, c, kvalue, kstorage, kind, rank, safetensors) \
    {name, sizeof(storage), cpp, c, kvalue, kstorage, DTypeKind::kind, rank, safetensors},
#include "core/dtypes.def"
};
inline constexpr DType kAllDTypes[] = {
#define HEDRA_DTYPE(Id, ...) DType::Id,
#include "core/dtypes.def"
};
// clang-format on
inline constexpr std::size_t kNumDTypes = std::size(kAllDTypes);

constexpr const DTypeInfo& dtype_info(DType t) {
    return kDTypeInfo[static_cast<std::size_t>(t)];
}

constexpr bool is_half(DType t) {
    return dtype_info(t).kind == DTypeKind::Half;
}
constexpr bool is_float(DType t) {
    return dtype_info(t).kind == DTypeKind::Float || is_half(t);
}
// The type arithmetic on `t` is computed in: f32 for the half formats, `t` otherwise.
constexpr DType compute_dtype(DType t) {
    return is_half(t) ? DType::F32 : t;
}
constexpr bool is_integer(DType t) {
    return dtype_info(t).kind == DTypeKind::Int;
}
constexpr std::size_t dtype_size(DType t) {
    return dtype_info(t).size;
}

// The position of `t` in the promotion order.
constexpr int promotion_rank(DType t) {
    return dtype_info(t).promotion_rank;
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
