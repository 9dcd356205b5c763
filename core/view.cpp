// reshape (by Transform and by Shape), view and broadcast_to: every one becomes a View node
// whose access maps result counters to input counters (index = start + step * counter), so
// that any chain of them composes into one integer affine map. Each checks, when it is built,
// that it reads only indices inside its input.
#include <algorithm>

#include "core/node_builders.hpp"
#include "core/primitives.hpp"

namespace hedra {
namespace detail {

namespace {

// The counter of a result axis of size <= 1 is always 0, and an empty view reads nothing:
// zero what cannot matter, so that equal views have equal accesses.
AffineMap canonical_access(const AffineMap& m, const Shape& shape) {
    std::vector<std::int64_t> matrix = m.matrix(), offset = m.offsets();
    const int in = m.in_rank();
    for (int r = 0; r < m.out_rank(); ++r) {
        for (int c = 0; c < in; ++c)
            if (shape.empty() || shape[c].size <= 1) matrix[r * in + c] = 0;
        if (shape.empty()) offset[r] = 0;
    }
    return AffineMap(in, m.out_rank(), std::move(matrix), std::move(offset));
}

// The result shape with its symbolic axes: a symbolic axis of the source must be read whole,
// unshifted and in order by exactly one result axis, which becomes symbolic too (a transpose
// moves it, a broadcast adds axes around it). A result axis the caller made symbolic must read
// no static axis (a broadcast into a symbolic axis).
Shape symbolic_view_shape(const NodePtr& source, const Shape& shape, const AffineMap& map) {
    std::vector<Range> out = shape.ranges();
    const Shape& in = source->shape;
    auto fail = [&](const std::string& why) {
        return Error("view: " + why + " (a view of " + in.to_string() + " as " + shape.to_string() +
                     "; array created at " + site(source) +
                     "); symbolic axes may be moved or broadcast against, not sliced, "
                     "reversed, strided, indexed or resized");
    };
    for (int q = 0; q < in.rank(); ++q) {
        if (!in[q].is_dynamic()) {
            for (int o = 0; o < shape.rank(); ++o)
                if (shape[o].is_dynamic() && map.coeff(q, o) != 0)
                    throw fail("result axis " + std::to_string(o) + " is symbolic (" +
                               shape[o].to_string() + ") but reads the static axis " +
                               std::to_string(q));
            continue;
        }
        int whole = -1, readers = 0;
        for (int o = 0; o < shape.rank(); ++o) {
            if (map.coeff(q, o) == 0) continue;
            ++readers;
            if (map.coeff(q, o) == 1 && shape[o].size == in[q].size && shape[o].start == 0 &&
                shape[o].step == 1)
                whole = o;
        }
        if (whole < 0 || readers != 1 || map.offset(q) != 0)
            throw fail("axis " + std::to_string(q) + " (" + in[q].to_string() +
                       ") is symbolic and no result axis reads it whole");
        if (out[whole].is_dynamic() && out[whole].param != in[q].param)
            throw fail("result axis " + std::to_string(whole) + " is " + out[whole].to_string() +
                       " but reads " + in[q].to_string());
        out[whole] = in[q];
    }
    return Shape(std::move(out));
}

} // namespace

NodePtr make_view(const NodePtr& input, const Shape& requested, const AffineMap& access,
                  SourceLocation loc) {
    HEDRA_INTERNAL_CHECK(access.in_rank() == requested.rank() &&
                             access.out_rank() == input->shape.rank(),
                         "view access of the wrong rank");
    NodePtr source = input;
    AffineMap map = access;
    if (source->kind == NodeKind::View) {
        map = source->access.compose(map);
        source = source->inputs.at(0);
    }
    bool symbolic = false;
    for (const Range& r : source->shape.ranges())
        symbolic = symbolic || r.is_dynamic();
    for (const Range& r : requested.ranges())
        symbolic = symbolic || r.is_dynamic();
    const Shape shape = symbolic ? symbolic_view_shape(source, requested, map) : requested;
    map = canonical_access(map, shape);
    if (shape == source->shape && map == canonical_access(AffineMap::identity(shape.rank()), shape))
        return source;
    auto n = new_node(NodeKind::View, source->dtype, shape, {source}, loc);
    n->access = std::move(map);
    return intern(std::move(n));
}

NodePtr broadcast_node(const NodePtr& input, const Shape& shape, SourceLocation loc) {
    if (input->shape == shape) return input;
    int r = input->shape.rank(), lead = shape.rank() - r;
    HEDRA_INTERNAL_CHECK(lead >= 0, "broadcast to a lower rank");
    std::vector<std::int64_t> matrix(static_cast<std::size_t>(r * shape.rank()), 0);
    for (int i = 0; i < r; ++i)
        if (input->shape[i].size == shape[i + lead].size) matrix[i * shape.rank() + i + lead] = 1;
    return make_view(input, shape,
                     AffineMap(shape.rank(), r, std::move(matrix), std::vector<std::int64_t>(r)),
                     loc);
}

} // namespace detail

using detail::site;

Array reshape(const Array& a, const Transform& t, SourceLocation loc) {
    const NodePtr& n = a.node();
    const int r = n->shape.rank();
    if (t.input_rank() != r)
        throw Error("reshape: the transform " + t.to_string() + " takes indices of rank " +
                    std::to_string(t.input_rank()) + " but the array has shape " +
                    n->shape.to_string() + "; array created at " + site(n));
    Shape out;
    try {
        out = t.apply(n->shape);
    } catch (const Error& e) {
        throw Error("reshape: " + std::string(e.what()) + "; array created at " + site(n));
    }
    // Result counter k on output axis o reads input counter k (scale > 0) or size-1-k (< 0).
    const int R = out.rank();
    std::vector<std::int64_t> matrix(static_cast<std::size_t>(r * R), 0), offset(r, 0);
    for (int o = 0; o < R; ++o) {
        const TransformAxis& ax = t.outputs()[o];
        if (ax.input_axis < 0) continue;
        const int i = ax.input_axis;
        if (ax.scale > 0) {
            matrix[i * R + o] = 1;
        } else {
            matrix[i * R + o] = -1;
            offset[i] = std::max<std::int64_t>(n->shape[i].size - 1, 0);
        }
    }
    return Array(
        detail::make_view(n, out, AffineMap(R, r, std::move(matrix), std::move(offset)), loc));
}

Array reshape(const Array& a, const Shape& s, SourceLocation loc) {
    const NodePtr& n = a.node();
    const int r = n->shape.rank(), R = s.rank(), lead = R - r;
    auto fail = [&](const std::string& why) {
        return Error("reshape: cannot reshape " + n->shape.to_string() + " to " + s.to_string() +
                     ": " + why + "; array created at " + site(n));
    };
    if (lead < 0) {
        // Fewer target axes: the source's unit axes are dropped (each read at its one index,
        // counter 0), then the usual rule applies to the rest.
        std::vector<Range> kept;
        std::vector<std::int64_t> matrix, offset;
        for (int i = 0; i < r; ++i)
            if (n->shape[i].size != 1) kept.push_back(n->shape[i]);
        const int k = static_cast<int>(kept.size());
        if (k > R)
            throw fail("the target has fewer axes (" + std::to_string(R) +
                       ") than the source has " + "axes of size other than 1 (" +
                       std::to_string(k) + "); only unit axes can be dropped");
        for (int i = 0, j = 0; i < r; ++i) {
            for (int c = 0; c < k; ++c)
                matrix.push_back(n->shape[i].size != 1 && c == j ? 1 : 0);
            offset.push_back(0); // counters: a unit axis's only counter is 0
            if (n->shape[i].size != 1) ++j;
        }
        Array squeezed(detail::make_view(n, Shape(kept), AffineMap(k, r, matrix, offset), loc));
        return reshape(squeezed, s, loc);
    }
    std::vector<std::int64_t> matrix(static_cast<std::size_t>(r * R), 0), offset(r, 0);
    for (int i = 0; i < r; ++i) {
        const Range &src = n->shape[i], &dst = s[i + lead];
        std::int64_t& coeff = matrix[i * R + i + lead];
        if (src.size == dst.size) {
            coeff = 1; // move
        } else if (src.size == 1) {
            // broadcast: counter 0
        } else if (src.contains(dst)) {
            if (dst.size > 0) {
                offset[i] = (dst.start - src.start) / src.step;
                coeff = dst.step / src.step;
            }
        } else {
            throw fail("axis " + std::to_string(i) + " has range " + src.to_string() +
                       ", which neither has the size of " + dst.to_string() +
                       ", nor size 1, nor contains it");
        }
    }
    return Array(
        detail::make_view(n, s, AffineMap(R, r, std::move(matrix), std::move(offset)), loc));
}

Array view(const Array& a, const Shape& s, const AffineMap& m, SourceLocation loc) {
    const NodePtr& n = a.node();
    const int r = n->shape.rank(), R = s.rank();
    auto where = [&] { return "view: image of " + s.to_string() + " under " + m.to_string(); };
    if (m.in_rank() != R || m.out_rank() != r)
        throw Error(where() + ": the map takes rank " + std::to_string(m.in_rank()) + " to rank " +
                    std::to_string(m.out_rank()) + " but the view's shape has rank " +
                    std::to_string(R) + " and the array " + n->shape.to_string() + " has rank " +
                    std::to_string(r) + "; array created at " + site(n));
    std::vector<std::int64_t> matrix(static_cast<std::size_t>(r * R), 0), offset(r, 0);
    if (!s.empty()) {
        for (int i = 0; i < r; ++i) {
            // Row i in counter space: base + sum_o inc_o * k_o.
            const Range& src = n->shape[i];
            std::int64_t base = m.offset(i), lo = 0, hi = 0;
            bool on_lattice = true;
            std::vector<std::int64_t> inc(R, 0);
            for (int o = 0; o < R; ++o) {
                base += m.coeff(i, o) * s[o].start;
                if (s[o].size > 1) inc[o] = m.coeff(i, o) * s[o].step;
                lo += std::min<std::int64_t>(0, inc[o] * (s[o].size - 1));
                hi += std::max<std::int64_t>(0, inc[o] * (s[o].size - 1));
                on_lattice = on_lattice && inc[o] % src.step == 0;
            }
            on_lattice = on_lattice && (base - src.start) % src.step == 0;
            if (src.empty() || base + lo < src.start || base + hi > src.last() || !on_lattice)
                throw Error(where() + " is not inside " + n->shape.to_string() + ": axis " +
                            std::to_string(i) + " takes values in [" + std::to_string(base + lo) +
                            "," + std::to_string(base + hi) + "]" +
                            (on_lattice ? "" : " off the lattice") + " but has range " +
                            src.to_string() + "; array created at " + site(n));
            offset[i] = (base - src.start) / src.step;
            for (int o = 0; o < R; ++o)
                matrix[i * R + o] = inc[o] / src.step;
        }
    }
    return Array(
        detail::make_view(n, s, AffineMap(R, r, std::move(matrix), std::move(offset)), loc));
}

Array broadcast_to(const Array& a, const Shape& s, SourceLocation loc) {
    const NodePtr& n = a.node();
    const int r = n->shape.rank(), lead = s.rank() - r;
    auto fail = [&](const std::string& why) {
        return Error("broadcast_to: cannot broadcast " + n->shape.to_string() + " to " +
                     s.to_string() + ": " + why + "; array created at " + site(n));
    };
    if (lead < 0) throw fail("the target has fewer axes");
    for (int i = 0; i < r; ++i)
        if (n->shape[i].size != 1 && !(n->shape[i] == s[i + lead]))
            throw fail("axis " + std::to_string(i + lead) + " has ranges " +
                       n->shape[i].to_string() + " and " + s[i + lead].to_string());
    return Array(detail::broadcast_node(n, s, loc));
}

} // namespace hedra
