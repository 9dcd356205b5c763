// Deterministic leaf values and their C++ spelling (see fuzz_data.hpp).
#include "fuzz/lib/fuzz_data.hpp"

#include <cmath>
#include <cstdio>
#include <limits>

namespace hedra::fuzz {

namespace {

double unit(std::uint64_t bits) { // [0, 1)
    return static_cast<double>(bits >> 11) * 0x1.0p-53;
}

double special(std::uint64_t r) {
    constexpr double inf = std::numeric_limits<double>::infinity();
    const double table[] = {0.0, -0.0, inf, -inf, std::nan(""), 1e30, -1e-30, 65504.0, -3.0, 0.5};
    return table[r % (sizeof table / sizeof table[0])];
}

double wide_int(std::uint64_t r, DType dtype) {
    const double i32[] = {2147483647.0, -2147483648.0, 2147483646.0, -2147483647.0, 65536.0,
                          -65537.0,     1 << 30,       46341.0,      -46341.0,      7.0};
    const double i64[] = {9007199254740991.0,    -9223372036854775808.0,
                          4611686018427387904.0, -4611686018427387904.0,
                          4294967296.0,          3037000500.0,
                          -3037000499.0,         2147483647.0,
                          -2147483648.0,         9.0};
    if (dtype == DType::I64) return i64[r % 10];
    return i32[r % 10];
}

} // namespace

std::vector<double> leaf_values(std::int64_t n, DType dtype, ValueKind kind, std::uint64_t seed) {
    std::vector<double> out;
    out.reserve(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) {
        std::uint64_t r = splitmix64(seed * 0x100000001b3ull + static_cast<std::uint64_t>(i));
        double v = 0;
        switch (kind) {
        case ValueKind::Dyadic:
            v = static_cast<double>(static_cast<int>(r % 17) - 8) / 4.0;
            break;
        case ValueKind::Uniform:
            v = 4.0 * unit(r) - 2.0;
            break;
        case ValueKind::Special:
            v = (r % 8 == 0) ? special(r >> 8) : 4.0 * unit(r) - 2.0;
            break;
        case ValueKind::SmallInt:
            v = static_cast<double>(static_cast<int>(r % 13) - 6);
            break;
        case ValueKind::WideInt:
            v = (r % 3 == 0) ? wide_int(r >> 8, dtype)
                             : static_cast<double>(static_cast<int>(r % 13) - 6);
            break;
        case ValueKind::Bool:
            v = static_cast<double>(r & 1);
            break;
        }
        if (dtype == DType::Bool) v = v != 0 ? 1.0 : 0.0;
        if (dtype == DType::F32) v = static_cast<double>(static_cast<float>(v));
        out.push_back(v);
    }
    return out;
}

std::vector<double> op_values(const Op& op) {
    if (!op.values.empty() || op.shape.size() == 0) return op.values;
    return leaf_values(op.shape.size(), op.dtype, op.values_kind, op.seed);
}

HostArray leaf_host_array(const Op& op) {
    std::vector<double> v = op_values(op);
    HostArray h(op.shape.sizes(), op.dtype);
    for (std::size_t i = 0; i < v.size(); ++i)
        h.set_flat(static_cast<std::int64_t>(i), v[i]);
    return h;
}

std::string cpp_value(double v, DType dtype) {
    if (dtype == DType::Bool) return v != 0 ? "true" : "false";
    if (is_integer(dtype)) {
        if (dtype == DType::I64 && v <= -9223372036854775808.0) return "INT64_MIN";
        if (dtype == DType::I32 && v <= -2147483648.0) return "INT32_MIN";
        char buf[40];
        std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(v));
        return buf;
    }
    if (std::isnan(v)) return "NAN";
    if (std::isinf(v)) return v < 0 ? "-INFINITY" : "INFINITY";
    if (v == 0) return std::signbit(v) ? "-0.0" : "0.0";
    char buf[64];
    if (v == std::trunc(v) && std::fabs(v) < 1e15)
        std::snprintf(buf, sizeof buf, "%.1f", v);
    else
        std::snprintf(buf, sizeof buf, "%a", v);
    return buf;
}

const char* cpp_type(DType t) {
    return dtype_cpp_name(t);
}

const char* cpp_dtype(DType t) {
    switch (t) {
    case DType::Bool:
        return "DType::Bool";
    case DType::I32:
        return "DType::I32";
    case DType::I64:
        return "DType::I64";
    case DType::F32:
        return "DType::F32";
    case DType::F64:
        return "DType::F64";
    case DType::BF16:
        return "DType::BF16";
    case DType::F16:
        return "DType::F16";
    }
    return "?";
}

const char* value_kind_name(ValueKind k) {
    switch (k) {
    case ValueKind::Dyadic:
        return "fuzz::ValueKind::Dyadic";
    case ValueKind::Uniform:
        return "fuzz::ValueKind::Uniform";
    case ValueKind::Special:
        return "fuzz::ValueKind::Special";
    case ValueKind::SmallInt:
        return "fuzz::ValueKind::SmallInt";
    case ValueKind::WideInt:
        return "fuzz::ValueKind::WideInt";
    case ValueKind::Bool:
        return "fuzz::ValueKind::Bool";
    }
    return "?";
}

} // namespace hedra::fuzz
