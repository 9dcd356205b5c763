// Adjoint rules for maps (symbolic derivative of the traced expression, one Map per input),
// reductions (sum: broadcast back; max/min: routed to the positions equal to the result, ties
// split evenly; prod: ȳ·y/x with zeros handled through a zero count), fuse and overwrite
// (ȳ restricted to each piece's visible part), and views (ad/view_adjoint.cpp).
#include "ad/adjoints.hpp"

#include "ad/grad.hpp"
#include "ad/scalar_derivative.hpp"
#include "ad/view_adjoint.hpp"
#include "core/collective.hpp"
#include "core/node_builders.hpp"
#include "core/primitives.hpp"
#include "core/scalar_dag.hpp"

namespace hedra::ad {
namespace {

ScalarExpr in(int k, DType t) {
    return scalar_input(k, t);
}
ScalarExpr num(double v, DType t) {
    return scalar_const(v, t);
}
ScalarExpr bin(ScalarOp op, ScalarExpr a, ScalarExpr b) {
    return scalar_binary(op, std::move(a), std::move(b));
}

NodePtr map_node(const ScalarExpr& e, const std::vector<NodePtr>& inputs, const Shape& shape,
                 SourceLocation loc) {
    return detail::make_map_node(e, inputs, shape, loc);
}

std::vector<Array> map_adjoint(const NodePtr& node, const Array& ybar,
                               const std::vector<bool>& wanted) {
    const int n = static_cast<int>(node->inputs.size());
    std::vector<ScalarExpr> exprs = scalar_vjp(node->expr, in(n, node->dtype), n);
    std::vector<NodePtr> operands = node->inputs;
    operands.push_back(ybar.node());
    // A sigmoid's or tanh's derivative is written with its own value (y(1 - y), 1 - y²): read
    // from the forward node instead of evaluated again, where the partition stores it (an
    // LSTM's gates) the backward takes no transcendental for it; where it inlines it, the value
    // is the same expression. Bit for bit the same either way.
    const ScalarOp root = node->expr->op;
    if (root == ScalarOp::Sigmoid || root == ScalarOp::Tanh) {
        bool uses = false;
        for (ScalarExpr& e : exprs)
            if (e)
                e = rewrite(e, [&](const ScalarExpr& x, std::vector<ScalarExpr> args) {
                    if (x == node->expr || structurally_equal(x, node->expr)) {
                        uses = true;
                        return in(n + 1, node->dtype);
                    }
                    return with_args(x, std::move(args));
                });
        if (uses) operands.push_back(node);
    }
    std::vector<Array> out(static_cast<std::size_t>(n));
    for (int k = 0; k < n; ++k)
        if (wanted[k] && exprs[k])
            out[k] = Array(map_node(exprs[k], operands, node->shape, node->loc));
    return out;
}

// `a` (shaped like the reduction's result) broadcast back over the reduction's input.
NodePtr spread(const NodePtr& reduce_node, const NodePtr& a) {
    const Shape& xs = reduce_node->inputs[0]->shape;
    const int rx = xs.rank(), ry = a->shape.rank();
    std::vector<std::int64_t> matrix(static_cast<std::size_t>(rx * ry), 0);
    const std::vector<int>& axes = reduce_node->axes;
    for (int d = 0, j = 0, row = 0; d < rx; ++d) {
        bool reduced = j < static_cast<int>(axes.size()) && axes[j] == d;
        if (reduced) ++j;
        if (!reduced) matrix[static_cast<std::size_t>(row * rx + d)] = 1;
        if (!reduced || reduce_node->keepdims) ++row;
    }
    return detail::make_view(a, xs,
                             AffineMap(rx, ry, std::move(matrix), std::vector<std::int64_t>(ry, 0)),
                             reduce_node->loc);
}

Array reduce_like(ReduceOp op, const NodePtr& reduce_node, const NodePtr& a) {
    return reduce(op, Array(a), reduce_node->axes, reduce_node->keepdims, reduce_node->loc);
}

// ȳ / (number of ties), routed to the positions of x equal to the result (max and min).
Array extremum_adjoint(const NodePtr& node, const NodePtr& x, const Array& ybar) {
    const DType t = x->dtype;
    const Shape& xs = x->shape;
    const auto loc = node->loc;
    NodePtr y = spread(node, node);
    NodePtr mask =
        map_node(scalar_select(bin(ScalarOp::Eq, in(0, t), in(1, t)), num(1, t), num(0, t)), {x, y},
                 xs, loc);
    NodePtr count = reduce_like(ReduceOp::Sum, node, mask).node();
    NodePtr share =
        map_node(bin(ScalarOp::Div, in(0, t), in(1, t)), {ybar.node(), count}, node->shape, loc);
    return Array(map_node(scalar_select(bin(ScalarOp::Eq, in(0, t), in(1, t)), in(2, t), num(0, t)),
                          {x, y, spread(node, share)}, xs, loc));
}

// Whether `e` always equals one of Input(a) and Input(b): a tree of selects over them.
bool selects_between(const ScalarExpr& e, std::int64_t a, std::int64_t b) {
    if (e->op == ScalarOp::Input) return e->ivalue == a || e->ivalue == b;
    if (e->op != ScalarOp::Select) return false;
    return selects_between(e->args[1], a, b) && selects_between(e->args[2], a, b);
}

// A component of a reduction of several values. An integer one (an index) has no cotangent; a
// float one whose combiner only ever selects its accumulator or its element (argmax's value)
// has max's: the elements equal to the result share it. Other combiners are not
// differentiable.
std::vector<Array> tuple_reduce_adjoint(const NodePtr& node, const Array& ybar) {
    const auto j = static_cast<std::size_t>(node->component);
    const auto k = static_cast<std::int64_t>(node->tuple_exprs.size());
    std::vector<Array> out(node->inputs.size());
    if (!is_float(node->dtype)) return out;
    if (!selects_between(node->tuple_exprs[j], static_cast<std::int64_t>(j),
                         k + static_cast<std::int64_t>(j)))
        throw Error("grad: component " + std::to_string(j) + " of the reduce_multiple_value " +
                    "created at " + location_string(node->loc) + " combines with " +
                    to_string(node->tuple_exprs[j]) +
                    ", which is not differentiable (only "
                    "components that select their accumulator or their element are); write "
                    "it with sum, prod, max or min");
    out[j] = extremum_adjoint(node, node->inputs[j], ybar);
    return out;
}

Array reduce_adjoint(const NodePtr& node, const Array& ybar) {
    const NodePtr& x = node->inputs[0];
    const DType t = x->dtype;
    const Shape& xs = x->shape;
    const auto loc = node->loc;
    switch (node->reduce_op) {
    case ReduceOp::Sum:
        return Array(spread(node, ybar.node()));
    case ReduceOp::Max:
    case ReduceOp::Min:
        return extremum_adjoint(node, x, ybar);
    case ReduceOp::Prod: {
        // Π_{j≠i} x_j: y/x_i without zeros; with one zero, the product of the others at the
        // zero and 0 elsewhere; with several zeros, 0.
        ScalarExpr is_zero = bin(ScalarOp::Eq, in(0, t), num(0, t));
        NodePtr zero_count =
            reduce_like(ReduceOp::Sum, node,
                        map_node(scalar_select(is_zero, num(1, t), num(0, t)), {x}, xs, loc))
                .node();
        NodePtr nonzero_prod =
            reduce_like(ReduceOp::Prod, node,
                        map_node(scalar_select(is_zero, num(1, t), in(0, t)), {x}, xs, loc))
                .node();
        NodePtr scaled = map_node(bin(ScalarOp::Mul, in(0, t), in(1, t)),
                                  {ybar.node(), nonzero_prod}, node->shape, loc);
        // in0 = x, in1 = ȳ·Π(nonzero), in2 = zero count
        ScalarExpr none = bin(ScalarOp::Eq, in(2, t), num(0, t));
        ScalarExpr one_here = bin(ScalarOp::And, bin(ScalarOp::Eq, in(2, t), num(1, t)), is_zero);
        ScalarExpr e = scalar_select(none, bin(ScalarOp::Div, in(1, t), in(0, t)),
                                     scalar_select(one_here, in(1, t), num(0, t)));
        return Array(map_node(e, {x, spread(node, scaled), spread(node, zero_count)}, xs, loc));
    }
    case ReduceOp::And:
    case ReduceOp::Or:
        return Array();
    case ReduceOp::Custom:
        break;
    }
    throw Error("grad: a reduction with a custom combiner " + to_string(node->expr) +
                " is not differentiable; write it with sum, prod, max or min; reduction of " +
                xs.to_string() + " created at " + location_string(loc));
}

// `a` read on `piece`, a subset of a's shape (as index sets).
Array restrict_to(const Array& a, const Shape& piece, SourceLocation loc) {
    const Shape& s = a.shape();
    if (s == piece) return a;
    const int r = s.rank();
    std::vector<std::int64_t> matrix(static_cast<std::size_t>(r * r), 0), offset(r, 0);
    for (int d = 0; d < r; ++d) {
        if (piece[d].size == 0) continue;
        offset[d] = (piece[d].start - s[d].start) / s[d].step;
        if (piece[d].size > 1)
            matrix[static_cast<std::size_t>(d * r + d)] = piece[d].step / s[d].step;
    }
    return Array(detail::make_view(a.node(), piece, AffineMap(r, r, matrix, offset), loc));
}

std::vector<Array> fuse_adjoint(const NodePtr& node, const Array& ybar,
                                const std::vector<bool>& wanted) {
    const auto& pieces = node->inputs;
    std::vector<Array> out(pieces.size());
    for (std::size_t p = 0; p < pieces.size(); ++p) {
        if (!wanted[p]) continue;
        const Shape& shape = pieces[p]->shape;
        std::vector<Array> parts{restrict_to(ybar, shape, node->loc)};
        bool hidden = false;
        for (std::size_t q = p + 1; node->overwrite && q < pieces.size() && !hidden; ++q) {
            Shape common = intersect(shape, pieces[q]->shape);
            if (common.empty()) continue;
            hidden = common == shape;
            parts.push_back(zeros(common, ybar.dtype(), node->loc));
        }
        if (hidden) continue;
        out[p] = parts.size() == 1 ? parts[0] : overwrite(parts, node->loc);
    }
    return out;
}

} // namespace

std::vector<Array> adjoint(const NodePtr& node, const Array& ybar,
                           const std::vector<bool>& wanted) {
    switch (node->kind) {
    case NodeKind::Constant:
    case NodeKind::Data:
    case NodeKind::Placeholder:
    case NodeKind::Iota:
        return {};
    case NodeKind::Map:
        if (is_stop_gradient(*node)) return std::vector<Array>(node->inputs.size());
        return map_adjoint(node, ybar, wanted);
    case NodeKind::View:
        return {view_adjoint(node, ybar)};
    case NodeKind::Reduce:
        if (!node->tuple_exprs.empty()) return tuple_reduce_adjoint(node, ybar);
        return {reduce_adjoint(node, ybar)};
    case NodeKind::Fuse:
        return fuse_adjoint(node, ybar, wanted);
    case NodeKind::Gather: // the rows' gradients added back in index order; none for indices
        if (!wanted.at(0)) return std::vector<Array>(2);
        return {scatter_add(ybar, Array(node->inputs[1]), node->axis, node->inputs[0]->shape,
                            node->loc),
                Array()};
    case NodeKind::Scatter:
        if (!wanted.at(0)) return std::vector<Array>(2);
        return {take(ybar, Array(node->inputs[1]), node->axis, node->loc), Array()};
    case NodeKind::Scan: // all components at once: grad.cpp calls scan_adjoint
    case NodeKind::ScanOutput:
        break;
    case NodeKind::Collective:
        switch (node->collective_op) {
        case CollectiveOp::Sum: // every rank's loss is the same: the cotangent passes through
            return {copy_to_group(ybar, node->group, node->loc)};
        case CollectiveOp::Copy:
            return {all_reduce(ybar, node->group, CollectiveOp::Sum, node->loc)};
        case CollectiveOp::Max:
            throw Error("grad: all_reduce max (of " + node->shape.to_string() + ", created at " +
                        detail::site(node) +
                        ") has no gradient here; wrap it in stop_gradient where it is a shift");
        }
        break;
    }
    internal_error("adjoint: unknown node kind");
}

} // namespace hedra::ad
