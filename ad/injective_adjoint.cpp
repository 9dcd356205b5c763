// The adjoint of an injective window view as a fuse of strided pieces (see
// injective_adjoint.hpp).
#include "ad/injective_adjoint.hpp"

#include <algorithm>
#include <cstdlib>

#include "core/node_builders.hpp"
#include "core/primitives.hpp"

namespace hedra::ad {
namespace {

constexpr std::int64_t kMaxPieces = 16;

struct Term {
    int axis;
    std::int64_t coeff;
};

// The cotangent axes of row r (those with more than one element), primary (longest) first.
std::vector<Term> row_terms(const Access& acc, const std::vector<std::int64_t>& n, int r) {
    std::vector<Term> terms;
    for (int a = 0; a < acc.cols; ++a)
        if (n[a] > 1 && acc.at(r, a) != 0) terms.push_back({a, acc.at(r, a)});
    std::stable_sort(terms.begin(), terms.end(), [&](const Term& x, const Term& y) {
        return n[x.axis] > n[y.axis] ||
               (n[x.axis] == n[y.axis] && std::llabs(x.coeff) > std::llabs(y.coeff));
    });
    return terms;
}

// Whether Σ c_t k_t (0 <= k_t < n_t) takes distinct values: sorted by |c|, each |c| exceeds
// the span of the smaller terms.
bool distinct_sums(std::vector<Term> terms, const std::vector<std::int64_t>& n) {
    std::sort(terms.begin(), terms.end(), [](const Term& x, const Term& y) {
        return std::llabs(x.coeff) < std::llabs(y.coeff);
    });
    std::int64_t span = 0;
    for (const Term& t : terms) {
        if (std::llabs(t.coeff) <= span) return false;
        span += std::llabs(t.coeff) * (n[t.axis] - 1);
    }
    return true;
}

} // namespace

Array injective_scatter(const NodePtr& ybar, const Access& acc, const Shape& xshape,
                        SourceLocation loc) {
    const std::vector<std::int64_t> n = ybar->shape.sizes();
    const int m = acc.rows, R = acc.cols;
    std::vector<std::vector<Term>> rows;
    std::vector<bool> used(static_cast<std::size_t>(R), false);
    std::int64_t pieces = 1;
    bool extras = false;
    for (int r = 0; r < m; ++r) {
        rows.push_back(row_terms(acc, n, r));
        if (!distinct_sums(rows.back(), n)) return Array();
        for (std::size_t t = 0; t < rows.back().size(); ++t) {
            used[rows.back()[t].axis] = true;
            if (t == 0) continue;
            extras = true;
            pieces *= n[rows.back()[t].axis];
        }
    }
    if (!extras || pieces > kMaxPieces) return Array();
    // Broadcast axes (a matmul operand's: the other operand's free axis) add up before the
    // move; kept as size-1 axes, so that the access's columns stay where they are.
    std::vector<int> broadcast;
    for (int a = 0; a < R; ++a)
        if (n[a] > 1 && !used[a]) broadcast.push_back(a);
    const NodePtr moved =
        broadcast.empty() ? ybar : reduce(ReduceOp::Sum, Array(ybar), broadcast, true, loc).node();

    // Every combination of the extra axes' values is one piece: ȳ with those axes pinned,
    // placed along each row at a progression of stride |c_primary|.
    std::vector<Array> parts;
    std::vector<std::int64_t> pinned(static_cast<std::size_t>(R), 0);
    bool covers = true;
    for (int r = 0; r < m; ++r) {
        std::int64_t count = 1, lo = acc.b[r];
        for (const Term& t : rows[r]) {
            count *= n[t.axis];
            lo += std::min<std::int64_t>(0, t.coeff * (n[t.axis] - 1));
        }
        covers = covers && count == xshape[r].size && lo == 0;
    }
    for (std::int64_t p = 0; p < pieces; ++p) {
        std::int64_t code = p;
        for (int r = 0; r < m; ++r)
            for (std::size_t t = 1; t < rows[r].size(); ++t) {
                pinned[rows[r][t].axis] = code % n[rows[r][t].axis];
                code /= n[rows[r][t].axis];
            }
        std::vector<Range> ranges;
        std::vector<std::int64_t> matrix(static_cast<std::size_t>(R * m), 0), offset(R, 0);
        for (int a = 0; a < R; ++a)
            offset[a] = pinned[a];
        for (int r = 0; r < m; ++r) {
            std::int64_t first = acc.b[r];
            for (std::size_t t = 1; t < rows[r].size(); ++t)
                first += rows[r][t].coeff * pinned[rows[r][t].axis];
            const Range& x = xshape[r];
            if (rows[r].empty()) {
                ranges.emplace_back(x.index(first), 1, 1);
                continue;
            }
            const Term& o = rows[r][0];
            std::int64_t size = n[o.axis];
            matrix[static_cast<std::size_t>(o.axis * m + r)] = o.coeff > 0 ? 1 : -1;
            offset[o.axis] = o.coeff > 0 ? 0 : size - 1;
            if (o.coeff < 0) first += o.coeff * (size - 1);
            ranges.emplace_back(x.index(first), size > 1 ? x.step * std::llabs(o.coeff) : 1, size);
        }
        parts.emplace_back(
            detail::make_view(moved, Shape(ranges), AffineMap(m, R, matrix, offset), loc));
    }
    if (covers) return fuse(parts, loc);
    parts.insert(parts.begin(), zeros(xshape, ybar->dtype, loc));
    return overwrite(parts, loc);
}

} // namespace hedra::ad
