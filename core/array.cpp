// The Array handle and the leaves of the lazy graph: constants, host data, placeholders and
// index components. Leaves of host data and placeholders get a fresh identity each, so two
// arrays of equal data are different nodes; constants are interned by value.
#include "core/array.hpp"

#include "core/node_builders.hpp"

namespace hedra {

const NodePtr& Array::node() const {
    if (!node_)
        throw Error("empty hedra::Array handle: this Array was default-constructed and never "
                    "assigned an array");
    return node_;
}

std::optional<HostArray> Array::value() const {
    auto memo = node()->memo();
    if (!memo) return std::nullopt;
    return *memo;
}

std::string Array::describe() const {
    const NodePtr& n = node();
    return std::string(dtype_name(n->dtype)) + " " + n->shape.to_string() + " " +
           node_kind_name(n->kind) + " at " + location_string(n->loc);
}

Array constant(double value, DType dtype, SourceLocation loc) {
    auto n = detail::new_node(NodeKind::Constant, dtype, Shape(), {}, loc);
    n->expr = scalar_const(value, dtype);
    return Array(intern(std::move(n)));
}

Array full(const Shape& shape, double value, DType dtype, SourceLocation loc) {
    NodePtr c = constant(value, dtype, loc).node();
    return Array(detail::make_view(c, shape, AffineMap(shape.rank(), 0, {}, {}), loc));
}

Array zeros(const Shape& shape, DType dtype, SourceLocation loc) {
    return full(shape, 0.0, dtype, loc);
}

Array ones(const Shape& shape, DType dtype, SourceLocation loc) {
    return full(shape, 1.0, dtype, loc);
}

namespace detail {

Array make_array_leaf(HostArray data, const Shape& shape, SourceLocation loc) {
    if (data.size() != shape.size())
        throw Error("array: host data of shape " + Shape::of(data.sizes()).to_string() + " has " +
                    std::to_string(data.size()) + " elements but shape " + shape.to_string() +
                    " has " + std::to_string(shape.size()) + "; at " + location_string(loc));
    if (data.address() == nullptr && shape.size() > 0)
        throw Error("array: null host data for shape " + shape.to_string() + "; at " +
                    location_string(loc));
    if (data.sizes() != shape.sizes()) {
        // Same elements, row-major: share the buffer under the shape's sizes.
        auto keep = std::make_shared<HostArray>(data);
        data = HostArray(shape.sizes(), data.dtype(), keep, const_cast<void*>(keep->raw()));
    }
    auto n = new_node(NodeKind::Data, data.dtype(), shape, {}, loc);
    n->data = std::move(data);
    n->id = fresh_node_id();
    return Array(intern(std::move(n)));
}

} // namespace detail

Array array(const HostArray& data, const Shape& shape, SourceLocation loc) {
    return detail::make_array_leaf(data, shape, loc);
}

Array array(const HostArray& data, SourceLocation loc) {
    return detail::make_array_leaf(data, Shape::of(data.sizes()), loc);
}

Array placeholder(const Shape& shape, DType dtype, std::string name, SourceLocation loc) {
    auto n = detail::new_node(NodeKind::Placeholder, dtype, shape, {}, loc);
    n->id = fresh_node_id();
    n->name = std::move(name);
    return Array(intern(std::move(n)));
}

Array index_components(const Shape& shape, int axis, SourceLocation loc) {
    auto n = detail::new_node(NodeKind::Iota, DType::I64, shape, {}, loc);
    n->axis = detail::normalize_axis("index_components", axis, shape.rank(), shape, nullptr);
    return Array(intern(std::move(n)));
}

} // namespace hedra
