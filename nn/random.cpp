// SplitMix64 over a shape's flat positions, written with hedra's i64 operations: products wrap
// as the unsigned ones do, and a logical right shift is an arithmetic one masked to the bits
// that the unsigned shift keeps.
#include "nn/random.hpp"

#include <cstdint>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/library.hpp"
#include "core/primitives.hpp"
#include "nn/index_space.hpp"

namespace hedra::nn {

namespace {

constexpr std::int64_t kGamma = static_cast<std::int64_t>(0x9E3779B97F4A7C15ULL);
constexpr std::int64_t kMix1 = static_cast<std::int64_t>(0xBF58476D1CE4E5B9ULL);
constexpr std::int64_t kMix2 = static_cast<std::int64_t>(0x94D049BB133111EBULL);

Sym logical_shift_right(const Sym& z, int k) {
    return (z >> k) & static_cast<std::int64_t>((~0ULL) >> k);
}

Sym splitmix64(const Sym& seed, const Sym& position) {
    Sym z = seed + (position + 1) * kGamma;
    z = (z ^ logical_shift_right(z, 30)) * kMix1;
    z = (z ^ logical_shift_right(z, 27)) * kMix2;
    return z ^ logical_shift_right(z, 31);
}

// The row-major position of every index of the 0-based shape `s`, as i64.
Array flat_positions(const Shape& s, SourceLocation loc) {
    if (s.rank() == 0) return zeros(s, DType::I64, loc);
    Array position = index_components(s, s.rank() - 1, loc);
    std::int64_t stride = s[s.rank() - 1].size;
    for (int d = s.rank() - 2; d >= 0; --d) {
        position = position + index_components(s, d, loc) * stride;
        stride *= s[d].size;
    }
    return position;
}

// `a` (on a 0-based shape with `shape`'s sizes) moved onto `shape`'s ranges.
Array onto(const Array& a, const Shape& shape, SourceLocation loc) {
    return a.shape() == shape ? a : reshape(a, shape, loc);
}

} // namespace

Array random_bits(const Shape& shape, const Array& seed, SourceLocation loc) {
    detail::check_seed("random_bits", seed, loc);
    Array bits = lazy([](Sym s, Sym i) { return splitmix64(s, i); }, cast(seed, DType::I64, loc),
                      flat_positions(Shape::of(shape.sizes()), loc));
    return onto(bits, shape, loc);
}

namespace detail {

void check_seed(const char* op, const Array& seed, SourceLocation loc) {
    if (!seed.valid() || seed.rank() != 0 || !is_integer(seed.dtype()))
        throw Error(std::string(op) +
                    ": seed must be a rank-0 integer array (e.g. a placeholder of shape () and "
                    "dtype i64), got " +
                    (seed.valid() ? seed.describe() : std::string("an empty array")) + at(loc));
}

Array random_top_bits(const Shape& shape, const Array& seed, int bits, SourceLocation loc) {
    HEDRA_INTERNAL_CHECK(bits > 0 && bits < 64, "random_top_bits: bits out of (0, 64)");
    return lazy([bits](Sym z) { return logical_shift_right(z, 64 - bits); },
                random_bits(shape, seed, loc));
}

} // namespace detail

Array random_uniform(const Shape& shape, const Array& seed, DType dtype, SourceLocation loc) {
    if (!is_float(dtype))
        throw Error("random_uniform: dtype must be f32 or f64, got " +
                    std::string(dtype_name(dtype)) + detail::at(loc));
    const int bits = dtype == DType::F32 ? 24 : 53;
    const double scale = 1.0 / static_cast<double>(std::int64_t{1} << bits);
    return cast(detail::random_top_bits(shape, seed, bits, loc), dtype, loc) * scale;
}

} // namespace hedra::nn
