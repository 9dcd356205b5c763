// Single elements of a HostArray as tagged ScalarValues (load, store, dtype conversion), and
// row-major iteration over counter boxes: the few low-level pieces the reference interpreter
// is built from, kept apart so that interpreter.cpp reads as one loop per primitive.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "core/error.hpp"
#include "core/half.hpp"
#include "core/host_array.hpp"
#include "core/scalar_expr.hpp"

namespace hedra::backend::element {

using Counters = std::vector<std::int64_t>;

inline ScalarValue int_value(std::int64_t i, DType t) {
    ScalarValue v;
    v.dtype = t;
    v.i = i;
    return v;
}

inline ScalarValue float_value(double f, DType t) {
    ScalarValue v;
    v.dtype = t;
    v.f = t == DType::F64 ? f : ScalarValue::of(f, t).f; // f32 and the half formats round
    return v;
}

// Converts as a C++ cast would (integers wrap, bool is x != 0).
inline ScalarValue convert(const ScalarValue& v, DType to) {
    if (v.dtype == to) return v;
    bool from_float = is_float(v.dtype);
    switch (to) {
    case DType::Bool:
        return int_value(from_float ? v.f != 0.0 : v.i != 0, to);
    case DType::I32:
        return int_value(
            from_float ? static_cast<std::int32_t>(v.f) : static_cast<std::int32_t>(v.i), to);
    case DType::I64:
        return int_value(from_float ? static_cast<std::int64_t>(v.f) : v.i, to);
    case DType::F32:
        return float_value(from_float ? static_cast<float>(v.f) : static_cast<float>(v.i), to);
    case DType::F64:
        return float_value(from_float ? v.f : static_cast<double>(v.i), to);
    case DType::BF16:
    case DType::F16: // through f32, as the kernels convert
        return float_value(from_float ? static_cast<float>(v.f) : static_cast<float>(v.i), to);
    }
    internal_error("convert: unknown dtype");
}

inline ScalarValue load(const HostArray& a, std::int64_t i) {
    const void* p = a.raw();
    switch (a.dtype()) {
    case DType::Bool:
        return int_value(static_cast<const unsigned char*>(p)[i] != 0, DType::Bool);
    case DType::I32:
        return int_value(static_cast<const std::int32_t*>(p)[i], DType::I32);
    case DType::I64:
        return int_value(static_cast<const std::int64_t*>(p)[i], DType::I64);
    case DType::F32:
        return float_value(static_cast<const float*>(p)[i], DType::F32);
    case DType::F64:
        return float_value(static_cast<const double*>(p)[i], DType::F64);
    case DType::BF16:
    case DType::F16:
        return float_value(half_to_f32(a.dtype(), static_cast<const std::uint16_t*>(p)[i]),
                           a.dtype());
    }
    internal_error("load: unknown dtype");
}

inline void store(HostArray& a, std::int64_t i, const ScalarValue& value) {
    ScalarValue v = convert(value, a.dtype());
    void* p = a.raw_mutable();
    switch (a.dtype()) {
    case DType::Bool:
        static_cast<bool*>(p)[i] = v.i != 0;
        return;
    case DType::I32:
        static_cast<std::int32_t*>(p)[i] = static_cast<std::int32_t>(v.i);
        return;
    case DType::I64:
        static_cast<std::int64_t*>(p)[i] = v.i;
        return;
    case DType::F32:
        static_cast<float*>(p)[i] = static_cast<float>(v.f);
        return;
    case DType::F64:
        static_cast<double*>(p)[i] = v.f;
        return;
    case DType::BF16:
    case DType::F16:
        static_cast<std::uint16_t*>(p)[i] = f32_to_half(a.dtype(), static_cast<float>(v.f));
        return;
    }
    internal_error("store: unknown dtype");
}

inline HostArray deep_copy(const HostArray& a) {
    HostArray out(a.sizes(), a.dtype());
    if (a.bytes() > 0) std::memcpy(out.raw_mutable(), a.raw(), a.bytes());
    return out;
}

inline std::int64_t flat_index(const std::vector<std::int64_t>& sizes, const Counters& k) {
    HEDRA_INTERNAL_CHECK(k.size() == sizes.size(), "interpreter: counter rank mismatch");
    std::int64_t flat = 0;
    for (std::size_t d = 0; d < sizes.size(); ++d) {
        HEDRA_INTERNAL_CHECK(k[d] >= 0 && k[d] < sizes[d], "interpreter: counter out of range");
        flat = flat * sizes[d] + k[d];
    }
    return flat;
}

// Calls f(counters, flat) for every element of a box of `sizes`, in row-major order.
template <class F>
void for_each_counter(const std::vector<std::int64_t>& sizes, F&& f) {
    std::int64_t total = 1;
    for (auto s : sizes)
        total *= s;
    Counters k(sizes.size(), 0);
    for (std::int64_t i = 0; i < total; ++i) {
        f(static_cast<const Counters&>(k), i);
        for (int d = static_cast<int>(sizes.size()) - 1; d >= 0; --d) {
            if (++k[d] < sizes[d]) break;
            k[d] = 0;
        }
    }
}

} // namespace hedra::backend::element
