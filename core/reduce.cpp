// The reduce primitive: sum, prod, max, min, and, or, or a user's associative combiner over
// any set of axes. A Reduce node always has the dtype of its input: sum/prod of bool or i32
// and and/or of non-bool inputs first convert the input with a Map, so backends and AD never
// convert implicitly.
#include "core/node_builders.hpp"
#include "core/primitives.hpp"

namespace hedra {
namespace {

DType reduce_dtype(ReduceOp op, DType in) {
    switch (op) {
    case ReduceOp::Sum:
    case ReduceOp::Prod:
        return (in == DType::Bool || in == DType::I32) ? DType::I64 : in;
    case ReduceOp::And:
    case ReduceOp::Or:
        return DType::Bool;
    default:
        return in;
    }
}

Shape reduced_shape(const Shape& in, const std::vector<int>& axes, bool keepdims) {
    std::vector<Range> out;
    for (int d = 0, j = 0; d < in.rank(); ++d) {
        bool reduced = j < static_cast<int>(axes.size()) && axes[j] == d;
        if (reduced) ++j;
        if (!reduced)
            out.push_back(in[d]);
        else if (keepdims)
            out.push_back(range(1));
    }
    return Shape(std::move(out));
}

std::shared_ptr<Node> make_reduce_node(ReduceOp op, const NodePtr& in, std::vector<int> axes,
                                       bool keepdims, SourceLocation loc) {
    auto n = detail::new_node(NodeKind::Reduce, in->dtype, reduced_shape(in->shape, axes, keepdims),
                              {in}, loc);
    n->reduce_op = op;
    n->axes = std::move(axes);
    n->keepdims = keepdims;
    return n;
}

} // namespace

Array reduce(ReduceOp op, const Array& a, std::vector<int> axes, bool keepdims,
             SourceLocation loc) {
    const NodePtr& n = a.node();
    if (op == ReduceOp::Custom)
        throw Error("reduce: ReduceOp::Custom needs a combiner; call reduce(f, identity, a, "
                    "axes); array created at " +
                    detail::site(n));
    std::vector<int> ax = detail::normalize_axes("reduce", axes, n);
    NodePtr in = detail::cast_node(n, reduce_dtype(op, n->dtype), loc);
    if (ax.empty()) return Array(in); // rank 0: the one element
    return Array(intern(make_reduce_node(op, in, std::move(ax), keepdims, loc)));
}

namespace detail {

Array make_custom_reduce(const ScalarExpr& combiner, double identity, const Array& a,
                         std::vector<int> axes, bool keepdims, SourceLocation loc) {
    const NodePtr& n = a.node();
    if (combiner->dtype != n->dtype)
        throw Error("reduce: the combiner returns " + std::string(dtype_name(combiner->dtype)) +
                    " but the array has dtype " + std::string(dtype_name(n->dtype)) +
                    "; cast inside the combiner; array created at " + site(n));
    std::vector<int> ax = normalize_axes("reduce", axes, n);
    ScalarExpr id = scalar_const(identity, n->dtype);
    if (ax.empty()) // rank 0: combine the identity with the one element
        return Array(make_map_node(substitute_inputs(combiner, {id, scalar_input(0, n->dtype)}),
                                   {n}, n->shape, loc));
    auto node = make_reduce_node(ReduceOp::Custom, n, std::move(ax), keepdims, loc);
    node->expr = combiner;
    node->identity = std::move(id);
    return Array(intern(std::move(node)));
}

} // namespace detail
} // namespace hedra
