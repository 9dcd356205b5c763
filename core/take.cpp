// take: a Gather node, src read along one axis at data-dependent positions (primitives.hpp).
// The axis of src must have a static size (the clamp bound every backend prints), the indices
// any integer dtype and any shape, symbolic extents included.
#include <cstdint>

#include "core/node_builders.hpp"
#include "core/primitives.hpp"

namespace hedra {
namespace {

// Host-data indices are known now: one outside the axis is the caller's mistake, not a
// value to clamp silently.
void check_data_indices(const Node& idx, std::int64_t n, const Node& src, int axis) {
    if (idx.kind != NodeKind::Data) return;
    for (std::int64_t i = 0; i < idx.data.size(); ++i) {
        double v = idx.data.flat(i);
        if (v < 0 || v >= static_cast<double>(n))
            throw Error("take: index " + std::to_string(static_cast<long long>(v)) + " (element " +
                        std::to_string(i) + " of the indices " + idx.shape.to_string() +
                        ") is outside axis " + std::to_string(axis) + " of size " +
                        std::to_string(n) + " of src " + src.shape.to_string() +
                        "; indices must lie in [0, " + std::to_string(n) + ")");
    }
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
    if (!is_integer(idx->dtype))
        throw Error("take: the indices have dtype " + std::string(dtype_name(idx->dtype)) +
                    " (shape " + idx->shape.to_string() +
                    "); they must be i32 or i64: convert them with cast; indices created at " +
                    detail::site(idx));
    const Range& along = s->shape[a];
    if (along.is_dynamic())
        throw Error("take: axis " + std::to_string(a) + " of src " + s->shape.to_string() +
                    " has a symbolic extent; the axis taken from needs a fixed size");
    if (along.size == 0)
        throw Error("take: axis " + std::to_string(a) + " of src " + s->shape.to_string() +
                    " is empty; there is nothing to take");
    check_data_indices(*idx, along.size, *s, a);
    std::vector<Range> out;
    for (int d = 0; d < a; ++d)
        out.push_back(s->shape[d]);
    for (const Range& r : idx->shape.ranges())
        out.push_back(r);
    for (int d = a + 1; d < s->shape.rank(); ++d)
        out.push_back(s->shape[d]);
    detail::check_result_rank("take", static_cast<int>(out.size()));
    auto n = detail::new_node(NodeKind::Gather, s->dtype, Shape(std::move(out)), {s, idx}, loc);
    n->axis = a;
    return Array(intern(std::move(n)));
}

} // namespace hedra
