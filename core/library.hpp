// Library functions built only from the primitives: operators, comparisons, matmul, transpose,
// sums and means, pad, flatten/unflatten, elementwise math.
#pragma once

#include <vector>

#include "core/primitives.hpp"
#include "core/source_location.hpp"

namespace hedra {

// Every function records its caller's source location (binary operators: where their first
// operand was converted), which errors name as "created at".
// Elementwise operators (broadcasting, promotion; literals are weak).
Array operator+(const Operand& a, const Operand& b);
Array operator-(const Operand& a, const Operand& b);
Array operator*(const Operand& a, const Operand& b);
Array operator/(const Operand& a, const Operand& b);
// Remainder with the dividend's sign (C's %, fmod for floats; x % 0 == x for integers).
Array operator%(const Operand& a, const Operand& b);
// Bitwise operations of integers (bools: logical); shifts of integers, >> arithmetic.
Array operator&(const Operand& a, const Operand& b);
Array operator|(const Operand& a, const Operand& b);
Array operator^(const Operand& a, const Operand& b);
Array operator<<(const Operand& a, const Operand& b);
Array operator>>(const Operand& a, const Operand& b);
Array operator-(const Operand& a); // an array operand
Array operator<(const Operand& a, const Operand& b);
Array operator<=(const Operand& a, const Operand& b);
Array operator>(const Operand& a, const Operand& b);
Array operator>=(const Operand& a, const Operand& b);
Array operator==(const Operand& a, const Operand& b);
Array operator!=(const Operand& a, const Operand& b);
Array minimum(const Operand& a, const Operand& b);
Array maximum(const Operand& a, const Operand& b);
Array where(const Operand& cond, const Operand& a, const Operand& b);
Array exp(const Array& a, SourceLocation loc = SourceLocation::current());
Array log(const Array& a, SourceLocation loc = SourceLocation::current());
Array sqrt(const Array& a, SourceLocation loc = SourceLocation::current());
Array tanh(const Array& a, SourceLocation loc = SourceLocation::current());
Array sigmoid(const Array& a, SourceLocation loc = SourceLocation::current());
Array sin(const Array& a, SourceLocation loc = SourceLocation::current());
Array cos(const Array& a, SourceLocation loc = SourceLocation::current());
Array erf(const Array& a, SourceLocation loc = SourceLocation::current());
Array log1p(const Array& a, SourceLocation loc = SourceLocation::current());
Array expm1(const Array& a, SourceLocation loc = SourceLocation::current());
Array floor(const Array& a, SourceLocation loc = SourceLocation::current());
Array ceil(const Array& a, SourceLocation loc = SourceLocation::current());
// Half to even, as NumPy and PyTorch.
Array round(const Array& a, SourceLocation loc = SourceLocation::current());
Array abs(const Array& a, SourceLocation loc = SourceLocation::current());
Array relu(const Array& a, SourceLocation loc = SourceLocation::current());
Array pow(const Operand& a, const Operand& b);
Array cast(const Array& a, DType to, SourceLocation loc = SourceLocation::current());

// Reductions over axes (empty = all axes; negative axes count from the end).
Array sum(const Array& a, std::vector<int> axes = {}, bool keepdims = false,
          SourceLocation loc = SourceLocation::current());
Array mean(const Array& a, std::vector<int> axes = {}, bool keepdims = false,
           SourceLocation loc = SourceLocation::current());
// The number of elements of `a` along `axes` (empty: all) as a rank-0 f32 array: a constant,
// or, where an axis is symbolic (`dynamic`), computed when the program runs.
Array element_count(const Array& a, std::vector<int> axes = {},
                    SourceLocation loc = SourceLocation::current());
Array max(const Array& a, std::vector<int> axes = {}, bool keepdims = false,
          SourceLocation loc = SourceLocation::current());
Array min(const Array& a, std::vector<int> axes = {}, bool keepdims = false,
          SourceLocation loc = SourceLocation::current());

// The index (as index_components gives it: 0-based for 0-based axes) of the first largest /
// smallest element along `axis`, as i64, NumPy's argmax/argmin: ties give the lowest index, and
// a NaN counts as the largest and the smallest (the first NaN wins). An empty axis is an error.
// Two passes: the extremum, then the lowest index that attains it.
Array argmax(const Array& a, int axis, bool keepdims = false,
             SourceLocation loc = SourceLocation::current());
Array argmin(const Array& a, int axis, bool keepdims = false,
             SourceLocation loc = SourceLocation::current());

// Reverse (or permute) axes; `perm` empty reverses all.
Array transpose(const Array& a, std::vector<int> perm = {},
                SourceLocation loc = SourceLocation::current());
// (..., m, k) x (..., k, n) -> (..., m, n); batch axes broadcast; rank-1 operands as in NumPy.
// A view of each operand, a map and a sum: no materialized broadcast product.
Array matmul(const Array& a, const Array& b, SourceLocation loc = SourceLocation::current());
// Pad each axis by (before, after) elements of `value` (pairs.size() == rank).
Array pad(const Array& a, const std::vector<std::pair<std::int64_t, std::int64_t>>& pairs,
          double value = 0.0, SourceLocation loc = SourceLocation::current());
// Row-major merge of axes [first, last] into one (introduces div/mod in accesses), and its
// inverse. Requires 0-based step-1 ranges on those axes.
Array flatten(const Array& a, int first = 0, int last = -1,
              SourceLocation loc = SourceLocation::current());
Array unflatten(const Array& a, int axis, const std::vector<std::int64_t>& sizes,
                SourceLocation loc = SourceLocation::current());
// A 0-based step-1 copy of the shape (moves the index space, not data).
Array rebase(const Array& a, SourceLocation loc = SourceLocation::current());

} // namespace hedra
