// Deterministic values for the fuzzer's data leaves: a pure function of (seed, element), so that
// a printed reproducer can regenerate a large leaf with one call instead of a literal list.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fuzz/lib/fuzz_program.hpp"

namespace hedra::fuzz {

inline std::uint64_t splitmix64(std::uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

// n values of `kind`, as doubles (converted to the leaf dtype as a C++ cast would).
std::vector<double> leaf_values(std::int64_t n, DType dtype, ValueKind kind, std::uint64_t seed);

// The values converted to T (bool: x != 0).
template <class T>
std::vector<T> typed_values(const std::vector<double>& v) {
    std::vector<T> out;
    out.reserve(v.size());
    for (double x : v) {
        if constexpr (std::is_same_v<T, bool>)
            out.push_back(x != 0);
        else
            out.push_back(static_cast<T>(x));
    }
    return out;
}

// For reproducers: leaf<float>(n, seed, ValueKind::Uniform).
template <class T>
std::vector<T> leaf(std::int64_t n, std::uint64_t seed, ValueKind kind) {
    return typed_values<T>(leaf_values(n, dtype_of<T>(), kind, seed));
}

// The HostArray of a data op's values (explicit or from its seed) over its shape's sizes.
HostArray leaf_host_array(const Op& op);
std::vector<double> op_values(const Op& op);

// C++ spelling of a value of `dtype` ("0x1.8p+1", "-INFINITY", "INT64_MIN", "true").
std::string cpp_value(double v, DType dtype);
const char* cpp_type(DType t);            // "float", "std::int64_t", ...
const char* cpp_dtype(DType t);           // "DType::F32"
const char* value_kind_name(ValueKind k); // "ValueKind::Uniform"

} // namespace hedra::fuzz
