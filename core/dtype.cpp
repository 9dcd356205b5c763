#include "core/dtype.hpp"

#include "core/error.hpp"

namespace hedra {

std::string_view dtype_name(DType t) {
    return dtype_info(t).name;
}

const char* dtype_cpp_name(DType t) {
    return dtype_info(t).cpp_name;
}

DType parse_dtype(std::string_view name) {
    std::string names;
    for (DType t : kAllDTypes) {
        if (dtype_name(t) == name) return t;
        names += (names.empty() ? "" : ", ") + std::string(dtype_name(t));
    }
    throw Error("unknown dtype '" + std::string(name) + "'; expected one of " + names);
}

} // namespace hedra
