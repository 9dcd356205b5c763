// Counter-based random numbers computed in the graph. Element i (the row-major position of an
// index in `shape`, 0-based) is the (i + 1)-th output of SplitMix64 (Steele, Lea and Flood,
// "Fast splittable pseudorandom number generators", 2014) started from `seed`:
// mix(seed + (i + 1)·0x9E3779B97F4A7C15). Nothing is stored: a kernel computes the numbers it
// needs, a gradient recomputes them, and `seed` (a rank-0 integer array, e.g. a placeholder)
// can change per call of a compiled program without recompiling. The integer arithmetic is
// i64 with wrapping products, the bits are those of the unsigned generator.
#pragma once

#include "core/array.hpp"
#include "core/source_location.hpp"

namespace hedra::nn {

// The 64 generator bits of every element of `shape`, as i64 (two's complement).
Array random_bits(const Shape& shape, const Array& seed,
                  SourceLocation loc = SourceLocation::current());

// Uniform numbers in [0, 1) of a float dtype: the top 24 (f32) or 53 (f64) bits of
// random_bits, times 2^−24 or 2^−53.
Array random_uniform(const Shape& shape, const Array& seed, DType dtype = DType::F32,
                     SourceLocation loc = SourceLocation::current());

namespace detail {
// Throws hedra::Error naming `op` unless seed is a rank-0 integer array.
void check_seed(const char* op, const Array& seed, SourceLocation loc);
// The top `bits` bits of random_bits (0 < bits < 64), a value in [0, 2^bits), as i64.
Array random_top_bits(const Shape& shape, const Array& seed, int bits, SourceLocation loc);
} // namespace detail

} // namespace hedra::nn
