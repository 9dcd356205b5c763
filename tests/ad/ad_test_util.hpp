// Helpers shared by the AD tests: seeded random arrays (uniform, reproducible), host dot
// products, and a doctest check that prints a GradientCheckResult when it fails.
#pragma once

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "ad/check.hpp"
#include "ad/grad.hpp"
#include "hedra.hpp"

namespace hedra::test {

inline HostArray random_host(const std::vector<std::int64_t>& sizes, std::uint64_t seed,
                             double lo = -1.0, double hi = 1.0) {
    std::mt19937_64 engine(seed);
    HostArray a(sizes, DType::F64);
    for (double& v : a.mutable_values<double>())
        v = lo + (hi - lo) * (static_cast<double>(engine() >> 11) * 0x1.0p-53);
    return a;
}

inline Array random_array(const Shape& shape, std::uint64_t seed, double lo = -1.0,
                          double hi = 1.0) {
    return array(random_host(shape.sizes(), seed, lo, hi), shape);
}

inline std::vector<double> values_of(const Array& a) {
    return compute(a).to_doubles();
}

#define HEDRA_CHECK_GRADIENT(result)                                                               \
    do {                                                                                           \
        auto hedra_r_ = (result);                                                                  \
        CHECK_MESSAGE(hedra_r_.ok, hedra_r_.to_string());                                          \
    } while (0)

// Tight tolerances for the dot-product identity in f64.
inline GradientCheckOptions exact(std::uint64_t seed = 1) {
    GradientCheckOptions o;
    o.rtol = 1e-10;
    o.atol = 1e-10;
    o.seed = seed;
    return o;
}

} // namespace hedra::test
