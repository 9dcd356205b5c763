// take and scatter_add: a Gather node, src read along one axis at data-dependent positions, and
// its adjoint, a Scatter node (primitives.hpp). The axis taken from must have a static size
// (the clamp bound every backend prints); the indices have any integer dtype and any shape,
// symbolic extents included.
#include <cstdint>

#include "core/node_builders.hpp"
#include "core/primitives.hpp"

namespace hedra {
namespace {

// Host-data indices are known now: one outside the axis is the caller's mistake, not a
// value to clamp silently. `what` names the array the axis belongs to.
void check_data_indices(const char* op, const Node& idx, std::int64_t n, int axis,
                        const std::string& what) {
    if (idx.kind != NodeKind::Data) return;
    for (std::int64_t i = 0; i < idx.data.size(); ++i) {
        double v = idx.data.flat(i);
        if (v < 0 || v >= static_cast<double>(n))
            throw Error(std::string(op) + ": index " + std::to_string(static_cast<long long>(v)) +
                        " (element " + std::to_string(i) + " of the indices " +
                        idx.shape.to_string() + ") is outside axis " + std::to_string(axis) +
                        " of size " + std::to_string(n) + " of " + what +
                        "; indices must lie in [0, " + std::to_string(n) + ")");
    }
}

// The shape take gives for src's `shape`: its axes before `axis`, the indices', then its own.
Shape taken_shape(const Shape& shape, const Shape& indices, int axis) {
    std::vector<Range> out;
    for (int d = 0; d < axis; ++d)
        out.push_back(shape[d]);
    for (const Range& r : indices.ranges())
        out.push_back(r);
    for (int d = axis + 1; d < shape.rank(); ++d)
        out.push_back(shape[d]);
    return Shape(std::move(out));
}

void check_indices_dtype(const char* op, const NodePtr& idx) {
    if (!is_integer(idx->dtype))
        throw Error(std::string(op) + ": the indices have dtype " +
                    std::string(dtype_name(idx->dtype)) + " (shape " + idx->shape.to_string() +
                    "); they must be i32 or i64: convert them with cast; indices created at " +
                    detail::site(idx));
}

} // namespace

Array take(const Array& src, const Array& indices, int axis, SourceLocation loc) {
    const NodePtr& s = src.node();
    const NodePtr& idx = indices.node();
    if (s->shape.rank() == 0)
        throw Error("take: src has rank 0 (shape ()); take selects along an axis of an array "
                    "of rank 1 or more; src created at " +
                    detail::site(s));
    int a = detail::normalize_axis("take", axis, s->shape.rank(), s->shape, s);
    check_indices_dtype("take", idx);
    const Range& along = s->shape[a];
    if (along.is_dynamic())
        throw Error("take: axis " + std::to_string(a) + " of src " + s->shape.to_string() +
                    " has a symbolic extent; the axis taken from needs a fixed size");
    if (along.size == 0)
        throw Error("take: axis " + std::to_string(a) + " of src " + s->shape.to_string() +
                    " is empty; there is nothing to take");
    check_data_indices("take", *idx, along.size, a, "src " + s->shape.to_string());
    detail::check_result_rank("take", s->shape.rank() - 1 + idx->shape.rank());
    auto n = detail::new_node(NodeKind::Gather, s->dtype, taken_shape(s->shape, idx->shape, a),
                              {s, idx}, loc);
    n->axis = a;
    return Array(intern(std::move(n)));
}

Array scatter_add(const Array& values, const Array& indices, int axis, const Shape& shape,
                  SourceLocation loc) {
    const NodePtr& v = values.node();
    const NodePtr& idx = indices.node();
    if (shape.rank() == 0)
        throw Error("scatter_add: the result shape is () (rank 0); scatter_add adds along an "
                    "axis of a result of rank 1 or more");
    int a = detail::normalize_axis("scatter_add", axis, shape.rank(), shape, nullptr);
    check_indices_dtype("scatter_add", idx);
    if (v->dtype == DType::Bool)
        throw Error("scatter_add: the values are bool (shape " + v->shape.to_string() +
                    "); sums need numbers: cast them to i32 or a float type first");
    const Range& along = shape[a];
    if (along.is_dynamic() || along.size == 0)
        throw Error("scatter_add: axis " + std::to_string(a) + " of the result shape " +
                    shape.to_string() + " must have a fixed, nonzero size");
    Shape expect = taken_shape(shape, idx->shape, a);
    if (!(v->shape == expect))
        throw Error("scatter_add: values of shape " + v->shape.to_string() + " with indices " +
                    idx->shape.to_string() + " along axis " + std::to_string(a) + " of a result " +
                    shape.to_string() + " must have shape " + expect.to_string() +
                    " (what take gives for that result and indices)");
    check_data_indices("scatter_add", *idx, along.size, a, "the result " + shape.to_string());
    auto n = detail::new_node(NodeKind::Scatter, v->dtype, shape, {v, idx}, loc);
    n->axis = a;
    return Array(intern(std::move(n)));
}

} // namespace hedra
