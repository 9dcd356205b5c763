// Reverse-mode differentiation of one traced scalar expression: given the cotangent of a map's
// result, the cotangent expression of each of its inputs. The map adjoint of the lazy graph
// (ad/adjoints.cpp) turns each of these into one Map node, so the backward pass of an
// elementwise chain is again an elementwise chain that fuses.
//
// Subgradient conventions (documented in docs/ad.md):
// - max(a, b) / min(a, b): where a == b the cotangent is split 0.5 / 0.5 (so max(x, x) has
//   derivative 1, as it should); relu written as max(x, 0) therefore has derivative 0.5 at 0,
//   relu written as select(x > 0, x, 0) has derivative 0 at 0.
// - abs'(0) = 0.
// - select(c, a, b) routes the cotangent to the branch chosen by c; c gets none.
// - pow(a, b): d/db is taken as 0 where a == 0.
// - comparisons, not/and/or, casts to bool or integers, integer arithmetic: no cotangent.
#pragma once

#include <vector>

#include "core/scalar_expr.hpp"

namespace hedra::ad {

// For each input number k < num_inputs, the cotangent of Input(k) (in Input(k)'s dtype) when
// `expr` has cotangent `cotangent` (an expression of expr's dtype, usually another Input), or
// nullptr where the derivative is zero (non-float input, not used, or a piecewise-constant
// dependence).
std::vector<ScalarExpr> scalar_vjp(const ScalarExpr& expr, const ScalarExpr& cotangent,
                                   int num_inputs);

} // namespace hedra::ad
