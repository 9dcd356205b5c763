// Library functions built only from the primitives: operators, comparisons, matmul, transpose,
// sums and means, pad, flatten/unflatten, elementwise math.
#pragma once

#include <vector>

#include "core/primitives.hpp"
#include "core/source_location.hpp"

namespace hedra {

// Elementwise operators (broadcasting, promotion; literals are weak).
Array operator+(const Operand& a, const Operand& b);
Array operator-(const Operand& a, const Operand& b);
Array operator*(const Operand& a, const Operand& b);
Array operator/(const Operand& a, const Operand& b);
Array operator-(const Array& a);
Array operator<(const Operand& a, const Operand& b);
Array operator<=(const Operand& a, const Operand& b);
Array operator>(const Operand& a, const Operand& b);
Array operator>=(const Operand& a, const Operand& b);
Array operator==(const Operand& a, const Operand& b);
Array operator!=(const Operand& a, const Operand& b);
Array minimum(const Operand& a, const Operand& b);
Array maximum(const Operand& a, const Operand& b);
Array where(const Operand& cond, const Operand& a, const Operand& b);
Array exp(const Array& a);
Array log(const Array& a);
Array sqrt(const Array& a);
Array tanh(const Array& a);
Array sigmoid(const Array& a);
Array abs(const Array& a);
Array relu(const Array& a);
Array pow(const Operand& a, const Operand& b);
Array cast(const Array& a, DType to);

// Reductions over axes (empty = all axes; negative axes count from the end).
Array sum(const Array& a, std::vector<int> axes = {}, bool keepdims = false);
Array mean(const Array& a, std::vector<int> axes = {}, bool keepdims = false);
Array max(const Array& a, std::vector<int> axes = {}, bool keepdims = false);
Array min(const Array& a, std::vector<int> axes = {}, bool keepdims = false);

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
