#include "core/dtype.hpp"

#include "core/error.hpp"

namespace hedra {

std::string_view dtype_name(DType t) {
    switch (t) {
    case DType::Bool:
        return "bool";
    case DType::I32:
        return "i32";
    case DType::I64:
        return "i64";
    case DType::F32:
        return "f32";
    case DType::F64:
        return "f64";
    case DType::BF16:
        return "bf16";
    case DType::F16:
        return "f16";
    }
    return "?";
}

const char* dtype_cpp_name(DType t) {
    switch (t) {
    case DType::Bool:
        return "bool";
    case DType::I32:
        return "std::int32_t";
    case DType::I64:
        return "std::int64_t";
    case DType::F32:
        return "float";
    case DType::F64:
        return "double";
    case DType::BF16:
    case DType::F16:
        return "std::uint16_t";
    }
    return "void";
}

DType parse_dtype(std::string_view name) {
    for (DType t :
         {DType::Bool, DType::I32, DType::I64, DType::F32, DType::F64, DType::BF16, DType::F16})
        if (dtype_name(t) == name) return t;
    throw Error("unknown dtype '" + std::string(name) +
                "'; expected one of bool, i32, i64, f32, f64, bf16, f16");
}

} // namespace hedra
