// The reduce primitive: sum, prod, max, min, and, or, or a user's associative combiner over
// any set of axes. A Reduce node always has the dtype of its input: sum/prod of bool or i32
// and and/or of non-bool inputs first convert the input with a Map, so backends and AD never
// convert implicitly.
#include <algorithm>
#include <cmath>
#include <limits>

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

// An identity of dtype `t` from the caller's double. Integer dtypes saturate at their range:
// INT64_MAX has no double, and 2^63, the nearest, would convert to 0 (out of range).
ScalarExpr identity_const(double v, DType t, const char* op) {
    if (std::isnan(v) && !is_float(t))
        throw Error(std::string(op) + ": the identity of an " + std::string(dtype_name(t)) +
                    " array is NaN; give an integer");
    if (t == DType::I64 && v >= 9223372036854775807.0)
        return scalar_const_int(std::numeric_limits<std::int64_t>::max(), t);
    if (t == DType::I64 && v <= -9223372036854775808.0)
        return scalar_const_int(std::numeric_limits<std::int64_t>::min(), t);
    if (t == DType::I32) v = std::clamp(v, -2147483648.0, 2147483647.0);
    return scalar_const(v, t);
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
    auto node = make_reduce_node(op, in, ax, keepdims, loc);
    // Over axes of one element each (a contraction over one input feature): the element
    // itself, a view, not a loop of one term per result.
    bool single = true;
    for (int d : ax)
        single = single && n->shape[d].size == 1 && !n->shape[d].is_dynamic();
    if (!single) return Array(intern(std::move(node)));
    const int in_rank = n->shape.rank(), out_rank = node->shape.rank();
    std::vector<std::int64_t> m(static_cast<std::size_t>(in_rank * out_rank), 0);
    for (int d = 0, o = 0; d < in_rank; ++d) {
        const bool reduced = std::find(ax.begin(), ax.end(), d) != ax.end();
        if (!reduced) m[static_cast<std::size_t>(d * out_rank + o)] = 1;
        if (!reduced || keepdims) ++o;
    }
    return Array(
        detail::make_view(in, node->shape,
                          AffineMap(out_rank, in_rank, std::move(m),
                                    std::vector<std::int64_t>(static_cast<std::size_t>(in_rank))),
                          loc));
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
    ScalarExpr id = identity_const(identity, n->dtype, "reduce");
    if (ax.empty()) // rank 0: combine the identity with the one element
        return Array(make_map_node(substitute_inputs(combiner, {id, scalar_input(0, n->dtype)}),
                                   {n}, n->shape, loc));
    auto node = make_reduce_node(ReduceOp::Custom, n, std::move(ax), keepdims, loc);
    node->expr = combiner;
    node->identity = std::move(id);
    return Array(intern(std::move(node)));
}

std::vector<Array> make_multi_reduce(const std::vector<ScalarExpr>& combiners,
                                     const std::vector<double>& identities,
                                     const std::vector<Array>& arrays, std::vector<int> axes,
                                     bool keepdims, SourceLocation loc) {
    const std::size_t k = arrays.size();
    auto fail = [&](const std::string& why) { return Error("reduce_multiple_value: " + why); };
    if (k == 0) throw fail("needs at least one array");
    if (combiners.size() != k || identities.size() != k)
        throw fail("the combiner returns " + std::to_string(combiners.size()) + " values and " +
                   std::to_string(identities.size()) + " identities are given for " +
                   std::to_string(k) + " arrays; give one of each per array");
    const NodePtr& first = arrays[0].node();
    for (std::size_t i = 1; i < k; ++i)
        if (!(arrays[i].shape() == first->shape))
            throw fail("array " + std::to_string(i) + " has shape " +
                       arrays[i].shape().to_string() + " but array 0 has shape " +
                       first->shape.to_string() + "; the arrays must have one shape (broadcast " +
                       "them first); arrays created at " + site(first) + " and " +
                       site(arrays[i].node()));
    for (const ScalarExpr& c : combiners)
        if (scalar_num_inputs(c) > static_cast<int>(2 * k))
            throw fail("a combiner reads more than the 2 x " + std::to_string(k) + " values");
    if (k == 1)
        return {make_custom_reduce(scalar_cast(combiners[0], first->dtype), identities[0],
                                   arrays[0], std::move(axes), keepdims, loc)};
    std::vector<int> ax = normalize_axes("reduce_multiple_value", axes, first);
    std::vector<ScalarExpr> exprs, ids;
    for (std::size_t i = 0; i < k; ++i) {
        DType t = arrays[i].dtype();
        exprs.push_back(scalar_cast(combiners[i], t));
        ids.push_back(identity_const(identities[i], t, "reduce_multiple_value"));
    }
    std::vector<Array> out;
    if (ax.empty()) { // rank 0: combine the identities with the one element of each array
        std::vector<ScalarExpr> args = ids;
        std::vector<NodePtr> inputs;
        for (std::size_t i = 0; i < k; ++i) {
            args.push_back(scalar_input(static_cast<int>(i), arrays[i].dtype()));
            inputs.push_back(arrays[i].node());
        }
        for (std::size_t i = 0; i < k; ++i)
            out.emplace_back(
                make_map_node(substitute_inputs(exprs[i], args), inputs, first->shape, loc));
        return out;
    }
    for (std::size_t i = 0; i < k; ++i) {
        auto node = make_reduce_node(ReduceOp::Custom, arrays[i].node(), ax, keepdims, loc);
        node->dtype = arrays[i].dtype();
        node->inputs.clear();
        for (const Array& a : arrays)
            node->inputs.push_back(a.node());
        node->expr = exprs[i];
        node->identity = ids[i];
        node->tuple_exprs = exprs;
        node->tuple_identities = ids;
        node->component = static_cast<int>(i);
        out.emplace_back(intern(std::move(node)));
    }
    return out;
}

} // namespace detail
} // namespace hedra
