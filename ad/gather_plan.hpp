// Internal to ad/: the factorized gather that is the adjoint of a View (view_adjoint.cpp), as a
// plan shared with its variant that pushes the gather through a map (gather_through_map.cpp).
#pragma once

#include <vector>

#include "core/node.hpp"
#include "core/source_location.hpp"

namespace hedra::ad {

// A counter-space access: input axis r reads Σ_a at(r, a)·k_a + b[r].
struct Access {
    int rows = 0;
    int cols = 0;
    std::vector<std::int64_t> coeff; // rows x cols, row-major
    std::vector<std::int64_t> b;
    std::int64_t& at(int r, int a) { return coeff[static_cast<std::size_t>(r * cols + a)]; }
    std::int64_t at(int r, int a) const { return coeff[static_cast<std::size_t>(r * cols + a)]; }
};

// For a separable access (each column with more than one element used by at most one row):
//   T = ȳ placed at (b_r + c_o·k_o, k_summed)      tshape, t_access: T counters -> ȳ counters
//   P = overwrite(zeros(pshape), T)
//   V = P read at (i − Σ c_e k_e, k_summed)         vshape, v_access: V counters -> P counters
//   x̄ = Σ over V's axes from rank() on
struct GatherPlan {
    struct Row {
        int primary = -1;            // the cotangent axis placed along this input axis, or -1
        std::vector<int> extras;     // the other cotangent axes of this row (summed)
        std::int64_t lo = 0, hi = 0; // P's range along this axis
    };
    std::vector<std::int64_t> n; // the cotangent's sizes
    std::vector<Row> rows;       // one per input axis
    std::vector<int> summed;     // extras in row order, then broadcast axes
    Shape tshape, pshape, vshape;
    AffineMap t_access, v_access;

    int rank() const { return static_cast<int>(rows.size()); }
    // The position in T, P and V of summed cotangent axis `axis`.
    int summed_position(int axis) const;
};

GatherPlan plan_gather(const Access& acc, const std::vector<std::int64_t>& n, const Shape& xshape);

// V of the plan built as a map over gathered operands when `ybar` is a Map whose value is zero
// wherever its inputs that depend on the placed axes are zero: only those inputs are dilated
// and zero-padded (a convolution's output gradient, not its product with the weights). Returns
// nullptr where that does not apply.
NodePtr gather_through_map(const NodePtr& ybar, const GatherPlan& plan, SourceLocation loc);

} // namespace hedra::ad
