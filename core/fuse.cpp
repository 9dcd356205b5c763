// fuse, overwrite and stack: one array from pieces. fuse needs pairwise-disjoint pieces that
// tile their hull exactly (checked by a sweep along the axis that separates the pieces best and
// by counting); overwrite lets the rightmost piece win and needs the union to be the hull
// (checked by subtracting pieces from the hull as strided boxes).
#include <algorithm>
#include <numeric>
#include <optional>

#include "core/node_builders.hpp"
#include "core/primitives.hpp"

namespace hedra {
namespace {

using detail::site;

// a \ b as disjoint ranges.
std::vector<Range> range_difference(const Range& a, const Range& b) {
    Range c = intersect(a, b);
    if (c.empty()) return {a};
    std::vector<Range> out;
    auto add = [&](std::int64_t start, std::int64_t step, std::int64_t size) {
        if (size > 0) out.emplace_back(start, step, size);
    };
    add(a.start, a.step, (c.start - a.start) / a.step);
    add(c.last() + a.step, a.step, (a.last() - c.last()) / a.step);
    if (c.size > 1)
        for (std::int64_t t = a.step; t < c.step; t += a.step)
            add(c.start + t, c.step, c.size - 1);
    return out;
}

// a \ b as disjoint boxes.
std::vector<Shape> shape_difference(const Shape& a, const Shape& b) {
    Shape common = intersect(a, b);
    if (common.empty()) return {a};
    std::vector<Shape> out;
    std::vector<Range> box = a.ranges();
    for (int d = 0; d < a.rank(); ++d) {
        for (const Range& r : range_difference(a[d], b[d])) {
            std::vector<Range> piece = box;
            piece[d] = r;
            out.emplace_back(std::move(piece));
        }
        box[d] = common[d];
    }
    return out;
}

// hull \ (union of pieces) as boxes, or nullopt if that takes more than `cap` boxes.
std::optional<std::vector<Shape>> uncovered(const Shape& hull, const std::vector<NodePtr>& pieces,
                                            std::size_t cap) {
    std::vector<Shape> left{hull};
    for (const NodePtr& p : pieces) {
        std::vector<Shape> next;
        for (const Shape& box : left)
            for (Shape& rest : shape_difference(box, p->shape))
                next.push_back(std::move(rest));
        if (next.size() > cap) return std::nullopt;
        left = std::move(next);
        if (left.empty()) break;
    }
    return left;
}

std::string shapes_string(const std::vector<NodePtr>& pieces) {
    std::string s;
    for (std::size_t i = 0; i < pieces.size() && i < 8; ++i)
        s += (i ? ", " : "") + pieces[i]->shape.to_string();
    return pieces.size() > 8 ? s + ", ..." : s;
}

std::string sites_string(const std::vector<NodePtr>& pieces) {
    std::string s;
    for (std::size_t i = 0; i < pieces.size() && i < 8; ++i)
        s += (i ? ", " : "") + site(pieces[i]);
    return pieces.size() > 8 ? s + ", ..." : s;
}

// Same rank and dtype; returns the nodes.
std::vector<NodePtr> check_pieces(const std::string& op, const std::vector<Array>& pieces) {
    if (pieces.empty()) throw Error(op + ": no pieces given");
    std::vector<NodePtr> nodes;
    for (const Array& p : pieces)
        nodes.push_back(p.node());
    for (std::size_t i = 1; i < nodes.size(); ++i) {
        const NodePtr &a = nodes[0], &b = nodes[i];
        if (b->shape.rank() != a->shape.rank())
            throw Error(op + ": piece " + std::to_string(i) + " has shape " + b->shape.to_string() +
                        " of rank " + std::to_string(b->shape.rank()) + " but piece 0 has shape " +
                        a->shape.to_string() + " of rank " + std::to_string(a->shape.rank()) +
                        "; piece 0 created at " + site(a) + ", piece " + std::to_string(i) +
                        " at " + site(b));
        if (b->dtype != a->dtype)
            throw Error(op + ": piece " + std::to_string(i) + " has dtype " +
                        std::string(dtype_name(b->dtype)) + " but piece 0 has dtype " +
                        std::string(dtype_name(a->dtype)) + "; cast first; piece 0 created at " +
                        site(a) + ", piece " + std::to_string(i) + " at " + site(b));
        // A symbolic axis is whole in every piece: pieces are placed along static axes only.
        for (int d = 0; d < a->shape.rank(); ++d)
            if ((a->shape[d].is_dynamic() || b->shape[d].is_dynamic()) &&
                a->shape[d] != b->shape[d])
                throw Error(op + ": axis " + std::to_string(d) + " is symbolic in " +
                            a->shape.to_string() + " or " + b->shape.to_string() +
                            " (pieces 0 and " + std::to_string(i) +
                            "); pieces may only be placed along static axes, and a symbolic axis "
                            "must be the same in every piece; piece 0 created at " +
                            site(a) + ", piece " + std::to_string(i) + " at " + site(b));
    }
    return nodes;
}

Shape hull_of(const std::vector<NodePtr>& pieces) {
    std::vector<Range> ranges = pieces.at(0)->shape.ranges();
    for (const NodePtr& p : pieces)
        for (int d = 0; d < static_cast<int>(ranges.size()); ++d)
            ranges[d] = hull(ranges[d], p->shape[d]);
    return Shape(std::move(ranges));
}

// Throws if two pieces overlap. Sweeps along the axis on which the pieces' starts differ most.
void check_disjoint(const std::string& op, const std::vector<NodePtr>& pieces) {
    const int rank = pieces.at(0)->shape.rank();
    int axis = -1;
    std::size_t best = 0;
    for (int d = 0; d < rank; ++d) {
        std::vector<std::int64_t> starts;
        for (const NodePtr& p : pieces)
            starts.push_back(p->shape[d].start);
        std::sort(starts.begin(), starts.end());
        auto distinct =
            static_cast<std::size_t>(std::unique(starts.begin(), starts.end()) - starts.begin());
        if (distinct > best) best = distinct, axis = d;
    }
    auto lo = [&](std::size_t i) { return axis < 0 ? 0 : pieces[i]->shape[axis].start; };
    auto hi = [&](std::size_t i) { return axis < 0 ? 0 : pieces[i]->shape[axis].last(); };
    std::vector<std::size_t> order(pieces.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t x, std::size_t y) { return lo(x) < lo(y); });
    for (std::size_t a = 0; a < order.size(); ++a) {
        for (std::size_t b = a + 1; b < order.size() && lo(order[b]) <= hi(order[a]); ++b) {
            std::size_t i = std::min(order[a], order[b]), j = std::max(order[a], order[b]);
            Shape common = intersect(pieces[i]->shape, pieces[j]->shape);
            if (!common.empty())
                throw Error(op + ": pieces " + std::to_string(i) + " " +
                            pieces[i]->shape.to_string() + " and " + std::to_string(j) + " " +
                            pieces[j]->shape.to_string() + " overlap in " + common.to_string() +
                            "; use overwrite to let the later piece win; piece " +
                            std::to_string(i) + " created at " + site(pieces[i]) + ", piece " +
                            std::to_string(j) + " at " + site(pieces[j]));
        }
    }
}

Error gap_error(const std::string& op, const std::vector<NodePtr>& pieces, const Shape& hull,
                const std::string& counts) {
    std::string example;
    if (auto left = uncovered(hull, pieces, 4096); left && !left->empty()) {
        std::vector<std::int64_t> index;
        for (const Range& r : left->front().ranges())
            index.push_back(r.start);
        example = "; e.g. index " + detail::list_string(index) + " is in no piece";
    }
    return Error(op + ": pieces leave a gap: " + shapes_string(pieces) +
                 " do not cover their hull " + hull.to_string() + counts + example +
                 "; pieces created at " + sites_string(pieces));
}

std::vector<NodePtr> non_empty(const std::vector<NodePtr>& nodes) {
    std::vector<NodePtr> out;
    for (const NodePtr& n : nodes)
        if (!n->shape.empty()) out.push_back(n);
    return out;
}

} // namespace

namespace detail {

NodePtr make_fuse_node(std::vector<NodePtr> pieces, const Shape& shape, bool overwrite,
                       SourceLocation loc) {
    HEDRA_INTERNAL_CHECK(!pieces.empty(), "fuse of no pieces");
    if (pieces.size() == 1 && pieces[0]->shape == shape) return pieces[0];
    DType dtype = pieces[0]->dtype;
    auto n = new_node(NodeKind::Fuse, dtype, shape, std::move(pieces), loc);
    n->overwrite = overwrite;
    return intern(std::move(n));
}

} // namespace detail

Array fuse(const std::vector<Array>& pieces, SourceLocation loc) {
    std::vector<NodePtr> all = check_pieces("fuse", pieces);
    std::vector<NodePtr> nodes = non_empty(all);
    if (nodes.empty()) return Array(all[0]);
    Shape hull = hull_of(nodes);
    check_disjoint("fuse", nodes);
    std::int64_t total = 0;
    for (const NodePtr& n : nodes)
        total += n->shape.size();
    if (total != hull.size())
        throw gap_error("fuse", nodes, hull,
                        " (" + std::to_string(total) + " of its " + std::to_string(hull.size()) +
                            " indices)");
    return Array(detail::make_fuse_node(std::move(nodes), hull, false, loc));
}

Array overwrite(const std::vector<Array>& pieces, SourceLocation loc) {
    std::vector<NodePtr> all = check_pieces("overwrite", pieces);
    std::vector<NodePtr> nodes = non_empty(all);
    if (nodes.empty()) return Array(all[0]);
    Shape hull = hull_of(nodes);
    auto left = uncovered(hull, nodes, 1 << 16);
    if (!left)
        throw Error("overwrite: the union of " + std::to_string(nodes.size()) + " pieces " +
                    shapes_string(nodes) + " is too fragmented to check; pieces created at " +
                    sites_string(nodes));
    if (!left->empty()) throw gap_error("overwrite", nodes, hull, "");
    // Drop pieces hidden under one later piece.
    std::vector<NodePtr> visible;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        bool hidden = false;
        for (std::size_t j = i + 1; j < nodes.size() && !hidden; ++j)
            hidden = nodes[j]->shape.contains(nodes[i]->shape);
        if (!hidden) visible.push_back(nodes[i]);
    }
    return Array(detail::make_fuse_node(std::move(visible), hull, true, loc));
}

Array stack(int axis, const std::vector<Array>& arrays, SourceLocation loc) {
    if (arrays.empty()) throw Error("stack: no arrays given");
    std::vector<NodePtr> nodes;
    for (const Array& a : arrays)
        nodes.push_back(a.node());
    const Shape& shape = nodes[0]->shape;
    for (std::size_t i = 1; i < nodes.size(); ++i) {
        if (!(nodes[i]->shape == shape))
            throw Error("stack: arrays 0 and " + std::to_string(i) + " have different shapes " +
                        shape.to_string() + " and " + nodes[i]->shape.to_string() +
                        "; array 0 created at " + site(nodes[0]) + ", array " + std::to_string(i) +
                        " at " + site(nodes[i]));
        if (nodes[i]->dtype != nodes[0]->dtype)
            throw Error("stack: arrays 0 and " + std::to_string(i) + " have different dtypes " +
                        std::string(dtype_name(nodes[0]->dtype)) + " and " +
                        std::string(dtype_name(nodes[i]->dtype)) + "; array 0 created at " +
                        site(nodes[0]) + ", array " + std::to_string(i) + " at " + site(nodes[i]));
    }
    const int r = shape.rank();
    detail::check_result_rank("stack", r + 1);
    const int at = detail::normalize_axis("stack", axis, r + 1, shape, nodes[0]);
    std::vector<NodePtr> pieces;
    for (std::size_t k = 0; k < nodes.size(); ++k) {
        std::vector<TransformAxis> outputs;
        for (int o = 0; o <= r; ++o) {
            if (o == at)
                outputs.push_back({-1, 1, static_cast<std::int64_t>(k)});
            else
                outputs.push_back({o < at ? o : o - 1, 1, 0});
        }
        pieces.push_back(reshape(arrays[k], Transform(r, std::move(outputs)), loc).node());
    }
    std::vector<Range> ranges = shape.ranges();
    ranges.insert(ranges.begin() + at, range(static_cast<std::int64_t>(nodes.size())));
    Shape result(std::move(ranges));
    if (result.empty())
        return view(arrays[0], result,
                    AffineMap(r + 1, r, std::vector<std::int64_t>(r * (r + 1)),
                              std::vector<std::int64_t>(r)),
                    loc);
    return Array(detail::make_fuse_node(std::move(pieces), result, false, loc));
}

} // namespace hedra
