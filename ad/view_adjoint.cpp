// The adjoint of a View as a gather. The view's access maps result counters k to input
// counters i = A k + b. Then x̄[i] = Σ { ȳ[k] : A k + b = i }.
//
// When every column of A (result axis) with more than one element has at most one nonzero,
// the preimage factorizes per input axis r, with S_r the result axes used by row r:
//   - S_r empty: input axis r is pinned at b_r;
//   - S_r = {o}: i_r = c·k_o + b_r, a strided embedding;
//   - S_r = {o} ∪ E_r (windows, i = s·o + k + b): with o the primary axis,
//     x̄ gathers P[i_r − Σ_{e∈E_r} c_e·k_e] and sums over the k_e,
// and result axes used by no row (broadcast axes Z) are summed. The construction is:
//   T = ȳ placed at (b_r + c_o·k_o, k_E, k_Z)              (one View: dilation, reversal, pins)
//   P = overwrite(zeros(hull), T)                        (only where T does not fill its hull)
//   x̄ = Σ_{k_E, k_Z} P[i − Σ c_e k_e, k_E, k_Z]           (one View, one Reduce)
// so a strided convolution's input gradient is one gather through a View over the dilated,
// zero-padded output gradient, with no shifted copies and no scatter. A view that reads each
// input element at most once (pooling windows that do not overlap, attention's heads) skips
// the gather: ȳ, summed over the broadcast axes, is moved into place piece by piece
// (injective_adjoint.hpp). When ȳ is a map (ȳ_out · w for a convolution),
// gather_through_map.cpp pads only the operands that need it.
// A column with several nonzeros (a diagonal k -> (k, k), a shear (k0, k1) -> (k0 + k1, k0),
// or the gather's own view (i, k) -> (i - k, k) when a gradient is differentiated again) is
// first made separable by integer row operations with ±1 pivots: a unimodular U such that
// U·A is separable; the gather then runs over the hull of U·box and a final View reads it at
// U·i. Only when no ±1 pivot exists is ȳ broadcast along a copy of the shared axis per extra
// use and masked to copy == original (index_components); that costs the size of the copies
// and is refused above kMaxDecoupledElements.
#include "ad/view_adjoint.hpp"

#include <algorithm>
#include <cstdlib>

#include "ad/gather_plan.hpp"
#include "ad/injective_adjoint.hpp"
#include "core/library.hpp"
#include "core/node_builders.hpp"
#include "core/primitives.hpp"

namespace hedra::ad {
namespace {

constexpr std::int64_t kMaxDecoupledElements = std::int64_t{1} << 24;

} // namespace

int GatherPlan::summed_position(int axis) const {
    auto it = std::find(summed.begin(), summed.end(), axis);
    HEDRA_INTERNAL_CHECK(it != summed.end(), "gather plan: axis is not summed");
    return rank() + static_cast<int>(it - summed.begin());
}

// A symbolic axis of the input is read whole by one result axis (views keep it so): its row of
// the plan runs over it as it is; a symbolic result axis the input does not read is summed
// over as it is.
static void keep_symbolic_axes(GatherPlan& plan, const Shape& yshape, const Shape& xshape) {
    std::vector<Range> t = plan.tshape.ranges(), p = plan.pshape.ranges(), v = plan.vshape.ranges();
    const std::size_t m = plan.rows.size();
    for (std::size_t r = 0; r < m && r < t.size(); ++r)
        if (xshape[static_cast<int>(r)].is_dynamic()) t[r] = p[r] = xshape[static_cast<int>(r)];
    for (std::size_t s = 0; s < plan.summed.size(); ++s)
        if (const Range& y = yshape[plan.summed[s]]; y.is_dynamic())
            t[m + s] = p[m + s] = v[m + s] = y;
    plan.tshape = Shape(std::move(t));
    plan.pshape = Shape(std::move(p));
    plan.vshape = Shape(std::move(v));
}

GatherPlan plan_gather(const Access& acc, const std::vector<std::int64_t>& n, const Shape& xshape) {
    GatherPlan plan;
    plan.n = n;
    const int m = acc.rows, R = acc.cols;
    plan.rows.resize(static_cast<std::size_t>(m));
    std::vector<bool> used(static_cast<std::size_t>(R), false);
    for (int r = 0; r < m; ++r) {
        GatherPlan::Row& row = plan.rows[r];
        for (int a = 0; a < R; ++a) {
            if (acc.at(r, a) == 0 || n[a] <= 1) continue;
            used[a] = true;
            if (row.primary < 0) {
                row.primary = a;
                continue;
            }
            // The primary axis is the longest one (ties: the larger stride), so that the
            // summation runs over the short (kernel) axes.
            const int p = row.primary;
            bool better =
                n[a] > n[p] || (n[a] == n[p] && std::abs(acc.at(r, a)) > std::abs(acc.at(r, p)));
            row.extras.push_back(better ? p : a);
            if (better) row.primary = a;
        }
        std::sort(row.extras.begin(), row.extras.end());
        row.lo = 0;
        row.hi = xshape[r].size - 1;
        for (int e : row.extras) {
            std::int64_t span = acc.at(r, e) * (n[e] - 1);
            row.lo -= std::max<std::int64_t>(0, span);
            row.hi -= std::min<std::int64_t>(0, span);
        }
    }
    for (const GatherPlan::Row& row : plan.rows)
        plan.summed.insert(plan.summed.end(), row.extras.begin(), row.extras.end());
    for (int a = 0; a < R; ++a)
        if (n[a] > 1 && !used[a]) plan.summed.push_back(a);

    // T: ȳ placed at input counters along the rows, summed axes after them.
    const int TR = m + static_cast<int>(plan.summed.size());
    std::vector<Range> tranges, pranges, vranges = xshape.ranges();
    std::vector<std::int64_t> tmap(static_cast<std::size_t>(R * TR), 0), toff(R, 0);
    for (int r = 0; r < m; ++r) {
        const GatherPlan::Row& row = plan.rows[r];
        pranges.emplace_back(row.lo, 1, row.hi - row.lo + 1);
        if (row.primary < 0) {
            tranges.emplace_back(acc.b[r], 1, 1);
            continue;
        }
        const int o = row.primary;
        const std::int64_t c = acc.at(r, o);
        if (c > 0) {
            tranges.emplace_back(acc.b[r], c, n[o]);
            tmap[static_cast<std::size_t>(o * TR + r)] = 1;
        } else {
            tranges.emplace_back(acc.b[r] + c * (n[o] - 1), -c, n[o]);
            tmap[static_cast<std::size_t>(o * TR + r)] = -1;
            toff[o] = n[o] - 1;
        }
    }
    for (std::size_t s = 0; s < plan.summed.size(); ++s) {
        const int a = plan.summed[s], pos = m + static_cast<int>(s);
        tranges.emplace_back(0, 1, n[a]);
        pranges.emplace_back(0, 1, n[a]);
        vranges.emplace_back(0, 1, n[a]);
        tmap[static_cast<std::size_t>(a * TR + pos)] = 1;
    }
    plan.tshape = Shape(tranges);
    plan.pshape = Shape(pranges);
    plan.vshape = Shape(vranges);
    plan.t_access = AffineMap(TR, R, tmap, toff);

    // V: P read at (i - Σ c_e k_e, k_summed), in P's counters.
    std::vector<std::int64_t> vmap(static_cast<std::size_t>(TR * TR), 0), voff(TR, 0);
    for (int pos = 0; pos < TR; ++pos)
        vmap[static_cast<std::size_t>(pos * TR + pos)] = 1;
    for (int r = 0; r < m; ++r) {
        voff[r] = -plan.rows[r].lo;
        for (int e : plan.rows[r].extras)
            vmap[static_cast<std::size_t>(r * TR + plan.summed_position(e))] = -acc.at(r, e);
    }
    plan.v_access = AffineMap(TR, TR, vmap, voff);
    return plan;
}

namespace {

Access access_of(const AffineMap& m) {
    Access acc;
    acc.rows = m.out_rank();
    acc.cols = m.in_rank();
    acc.coeff = m.matrix();
    acc.b = m.offsets();
    return acc;
}

std::vector<int> rows_using(const Access& acc, int a) {
    std::vector<int> rows;
    for (int r = 0; r < acc.rows; ++r)
        if (acc.at(r, a) != 0) rows.push_back(r);
    return rows;
}

bool separable(const Access& acc, const std::vector<std::int64_t>& n) {
    for (int a = 0; a < acc.cols; ++a)
        if (n[a] > 1 && rows_using(acc, a).size() > 1) return false;
    return true;
}

// Row operations with ±1 pivots until every shared column is used by one row. Returns U
// (rows x rows, row-major) with acc := (U·A, U·b), or an empty vector if that fails.
std::vector<std::int64_t> eliminate(Access& acc, const std::vector<std::int64_t>& n) {
    const int m = acc.rows;
    std::vector<std::int64_t> u(static_cast<std::size_t>(m * m), 0);
    for (int r = 0; r < m; ++r)
        u[static_cast<std::size_t>(r * m + r)] = 1;
    auto weight = [&](int r) {
        int w = 0;
        for (int a = 0; a < acc.cols; ++a)
            w += n[a] > 1 && acc.at(r, a) != 0;
        return w;
    };
    for (int step = 0; step < 4 * m * acc.cols + 4; ++step) {
        int column = -1;
        for (int a = 0; a < acc.cols && column < 0; ++a)
            if (n[a] > 1 && rows_using(acc, a).size() > 1) column = a;
        if (column < 0) return u;
        int pivot = -1;
        for (int r : rows_using(acc, column))
            if (std::abs(acc.at(r, column)) == 1 && (pivot < 0 || weight(r) < weight(pivot)))
                pivot = r;
        if (pivot < 0) return {};
        for (int r : rows_using(acc, column)) {
            if (r == pivot) continue;
            const std::int64_t f = acc.at(r, column) * acc.at(pivot, column);
            for (int a = 0; a < acc.cols; ++a)
                acc.at(r, a) -= f * acc.at(pivot, a);
            acc.b[r] -= f * acc.b[pivot];
            for (int j = 0; j < m; ++j)
                u[static_cast<std::size_t>(r * m + j)] -=
                    f * u[static_cast<std::size_t>(pivot * m + j)];
        }
    }
    return {};
}

// ȳ (0-based) with one masked copy axis per extra use of a column used by several rows.
NodePtr decouple(const NodePtr& ybar, Access& acc, const NodePtr& view) {
    const std::vector<std::int64_t> n = ybar->shape.sizes();
    struct Copy {
        int column, row;
    };
    std::vector<Copy> copies;
    for (int a = 0; a < acc.cols; ++a) {
        if (n[a] <= 1) continue;
        std::vector<int> rows = rows_using(acc, a);
        for (std::size_t j = 1; j < rows.size(); ++j)
            copies.push_back({a, rows[j]});
    }
    if (copies.empty()) return ybar;

    std::vector<std::int64_t> sizes = n;
    for (const Copy& c : copies)
        sizes.push_back(n[c.column]);
    const int R = acc.cols, R2 = static_cast<int>(sizes.size());
    Shape shape2 = Shape::of(sizes);
    if (R2 > kMaxRank || shape2.size() > kMaxDecoupledElements)
        throw Error("grad: the view " + view->access.to_string() + " of shape " +
                    view->shape.to_string() +
                    " reads one input axis through several result axes (a diagonal); its "
                    "gradient needs a mask of " +
                    std::to_string(shape2.size()) + " elements, above the limit of " +
                    std::to_string(kMaxDecoupledElements) +
                    " (or rank above the maximum); view created at " + location_string(view->loc));

    std::vector<std::int64_t> proj(static_cast<std::size_t>(R * R2), 0);
    for (int a = 0; a < R; ++a)
        proj[static_cast<std::size_t>(a * R2 + a)] = 1;
    std::vector<NodePtr> inputs{detail::make_view(
        ybar, shape2, AffineMap(R2, R, std::move(proj), std::vector<std::int64_t>(R)), view->loc)};
    auto iota = [&](int axis) {
        inputs.push_back(index_components(shape2, axis, view->loc).node());
        return scalar_input(static_cast<int>(inputs.size()) - 1, DType::I64);
    };
    ScalarExpr cond;
    Access acc2;
    acc2.rows = acc.rows;
    acc2.cols = R2;
    acc2.b = acc.b;
    acc2.coeff.assign(static_cast<std::size_t>(acc.rows * R2), 0);
    for (int r = 0; r < acc.rows; ++r)
        for (int a = 0; a < R; ++a)
            acc2.at(r, a) = acc.at(r, a);
    for (std::size_t q = 0; q < copies.size(); ++q) {
        const int axis = R + static_cast<int>(q);
        const Copy& c = copies[q];
        ScalarExpr eq = scalar_binary(ScalarOp::Eq, iota(c.column), iota(axis));
        cond = cond ? scalar_binary(ScalarOp::And, cond, eq) : eq;
        acc2.at(c.row, axis) = acc.at(c.row, c.column);
        acc2.at(c.row, c.column) = 0;
    }
    const DType dt = ybar->dtype;
    ScalarExpr expr = scalar_select(cond, scalar_input(0, dt), scalar_const(0.0, dt));
    acc = std::move(acc2);
    return detail::make_map_node(expr, inputs, shape2, view->loc);
}

// The gather, for an access in which every column with more than one element has at most one
// nonzero. `xshape` is the shape of the view's input.
Array gather(const NodePtr& ybar, const Access& acc, const Shape& xshape, SourceLocation loc) {
    if (Array moved = injective_scatter(ybar, acc, xshape, loc); moved.valid()) return moved;
    GatherPlan plan = plan_gather(acc, ybar->shape.sizes(), xshape);
    keep_symbolic_axes(plan, ybar->shape, xshape);
    NodePtr v;
    // Through the map only where the gather sums (a window): a slice's cotangent is computed
    // on the slice and padded once (total() in grad.cpp then joins the slices of one array).
    if (!(plan.tshape == plan.pshape) && !plan.summed.empty())
        v = gather_through_map(ybar, plan, loc);
    if (!v) {
        NodePtr t = detail::make_view(ybar, plan.tshape, plan.t_access, loc);
        NodePtr p = t;
        if (!(plan.tshape == plan.pshape))
            p = overwrite({zeros(plan.pshape, ybar->dtype, loc), Array(t)}, loc).node();
        v = detail::make_view(p, plan.vshape, plan.v_access, loc);
    }
    if (plan.summed.empty()) return Array(v);
    std::vector<int> axes;
    for (int pos = plan.rank(); pos < plan.vshape.rank(); ++pos)
        axes.push_back(pos);
    return reduce(ReduceOp::Sum, Array(v), axes, false, loc);
}

} // namespace

// An unflatten (input axis a read as two, t = k·s + j, covering the axis) is undone by
// flatten: ȳ moved back row block by row block, where the general gather would treat j as a
// window and sum k terms per element over a padded grid. Invalid when the view is not one.
Array unflatten_adjoint(const NodePtr& view, const Array& ybar) {
    const AffineMap& m = view->access;
    const NodePtr& x = view->inputs.at(0);
    const int in = x->shape.rank();
    if (m.out_rank() != in || m.in_rank() != in + 1) return {};
    for (int a = 0; a < in; ++a) {
        bool ok = true;
        for (int r = 0; r < in && ok; ++r) {
            ok = m.offset(r) == 0;
            for (int c = 0; c <= in && ok; ++c) {
                std::int64_t want = 0;
                if (r < a) want = c == r ? 1 : 0;
                if (r > a) want = c == r + 1 ? 1 : 0;
                if (r == a) want = c == a ? view->shape[a + 1].size : c == a + 1 ? 1 : 0;
                ok = m.coeff(r, c) == want;
            }
        }
        if (!ok || view->shape[a].size * view->shape[a + 1].size != x->shape[a].size) continue;
        for (int d : {a, a + 1})
            if (view->shape[d].start != 0 || view->shape[d].step != 1) ok = false;
        if (!ok) continue;
        Array back = flatten(ybar, a, a + 1, view->loc);
        if (back.shape() == x->shape) return back;
    }
    return {};
}

Array view_adjoint(const NodePtr& view, const Array& ybar) {
    const NodePtr& x = view->inputs.at(0);
    const DType dt = ybar.dtype();
    if (view->shape.empty() || x->shape.empty()) return zeros(x->shape, dt, view->loc);
    if (Array moved = unflatten_adjoint(view, ybar); moved.valid()) return moved;
    const Access original = access_of(view->access);
    const std::vector<std::int64_t> n = view->shape.sizes();
    if (separable(original, n)) return gather(ybar.node(), original, x->shape, view->loc);

    Access acc = original;
    std::vector<std::int64_t> u = eliminate(acc, n);
    if (!u.empty()) {
        // Gather over the hull of U·box (shifted to 0), then read it at U·i.
        const int m = acc.rows;
        std::vector<std::int64_t> hull_sizes, offset(m, 0);
        for (int j = 0; j < m; ++j) {
            std::int64_t lo = 0, hi = 0;
            for (int r = 0; r < m; ++r) {
                std::int64_t span = u[static_cast<std::size_t>(j * m + r)] * (x->shape[r].size - 1);
                lo += std::min<std::int64_t>(0, span);
                hi += std::max<std::int64_t>(0, span);
            }
            acc.b[j] -= lo;
            offset[j] = -lo;
            hull_sizes.push_back(hi - lo + 1);
        }
        Array wide = gather(ybar.node(), acc, Shape::of(hull_sizes), view->loc);
        return Array(
            detail::make_view(wide.node(), x->shape, AffineMap(m, m, u, offset), view->loc));
    }
    acc = original;
    NodePtr y = decouple(ybar.node(), acc, view);
    return gather(y, acc, x->shape, view->loc);
}

} // namespace hedra::ad
