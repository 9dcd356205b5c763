// Internal to ad/: the adjoint of a view that reads each input element at most once, through
// windows that do not overlap (max pooling with stride == kernel: x[n, c, 2·oh + kh, 2·ow + kw]).
// The general gather (view_adjoint.cpp) places ȳ on a dilated, zero-padded grid and sums over
// the window axes: for 2x2 pooling of a 28x28 image that is a 29x29x2x2 temporary filled with
// zeros and a 4-term sum per element. When every input index has at most one preimage, x̄ is
// instead ȳ itself, moved: one piece per value of the window axes (kh, kw), each a strided view
// of ȳ placed on the progression 2·oh + kh, fused (or overwritten onto zeros where the windows
// leave input elements uncovered). The partitioner makes that one kernel of assignments.
// Broadcast axes of the view are summed first: attention's head view of a matmul operand,
// q[b, h, i, j, d] = qkv[b, i, h·D + d] (j from the other operand), moves Σ_j ȳ, the
// (B, heads, T, D) product gradient, instead of gathering a zero-padded (B, T, C, heads, T) one.
#pragma once

#include "ad/gather_plan.hpp"
#include "core/array.hpp"
#include "core/source_location.hpp"

namespace hedra::ad {

// x̄ for a separable access `acc` (see gather_plan.hpp) when it is injective over ȳ's box (its
// broadcast axes aside) with window (extra) axes and at most 16 pieces; an invalid Array
// otherwise.
Array injective_scatter(const NodePtr& ybar, const Access& acc, const Shape& xshape,
                        SourceLocation loc);

} // namespace hedra::ad
