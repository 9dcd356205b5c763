// Array: the user's handle on a lazy array (a node of the lazy graph). Cheap to copy.
// Nothing is computed until compute(); afterwards the array is backed by its result.
#pragma once

#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "core/node.hpp"
#include "core/source_location.hpp"
#include "core/sym.hpp"

namespace hedra {

class Array {
public:
    Array() = default; // an empty handle; using it throws hedra::Error
    explicit Array(NodePtr node) : node_(std::move(node)) {}

    bool valid() const { return node_ != nullptr; }
    const NodePtr& node() const; // throws on an empty handle
    const Shape& shape() const { return node()->shape; }
    DType dtype() const { return node()->dtype; }
    int rank() const { return shape().rank(); }
    std::int64_t size() const { return shape().size(); }
    // The memoized result, if this array (or an equal one) has been computed.
    std::optional<HostArray> value() const;
    // "f32 (3,4) map at model.cpp:12"
    std::string describe() const;

private:
    NodePtr node_;
};

// An argument of lazy() and of the operators: an array, or a C++ scalar literal (weak dtype).
class Operand {
public:
    // The default argument records where the user wrote the operation (an operator call).
    Operand(const Array& a, SourceLocation loc = SourceLocation::current())
        : array_(a), loc_(loc) {}
    template <class T>
        requires std::is_arithmetic_v<T>
    Operand(T literal, SourceLocation loc = SourceLocation::current())
        : literal_(Sym(literal)), loc_(loc) {}
    const SourceLocation& loc() const { return loc_; }

    bool is_array() const { return !literal_.has_value(); }
    const Array& array() const { return array_; }
    const Sym& literal() const { return *literal_; }

private:
    Array array_;
    std::optional<Sym> literal_;
    SourceLocation loc_;
};

// ---- leaves -------------------------------------------------------------------------------
enum class Ownership { Copy, Borrow };

// A rank-0 constant of the given dtype (strong: it takes part in promotion).
Array constant(double value, DType dtype = DType::F32,
               SourceLocation loc = SourceLocation::current());
// `value` broadcast to `shape`.
Array full(const Shape& shape, double value, DType dtype = DType::F32,
           SourceLocation loc = SourceLocation::current());
Array zeros(const Shape& shape, DType dtype = DType::F32,
            SourceLocation loc = SourceLocation::current());
Array ones(const Shape& shape, DType dtype = DType::F32,
           SourceLocation loc = SourceLocation::current());

// Host data laid out row-major over `shape` (data.size() must equal shape.size()).
// The data is copied; with Ownership::Borrow from a HostArray it is shared, not copied.
template <class T>
Array array(const std::vector<T>& data, const Shape& shape,
            SourceLocation loc = SourceLocation::current());
Array array(const HostArray& data, const Shape& shape,
            SourceLocation loc = SourceLocation::current());
Array array(const HostArray& data, SourceLocation loc = SourceLocation::current());
// Borrowed memory: the caller keeps `data` alive and unchanged while the array is in use.
template <class T>
Array array(const T* data, const Shape& shape, Ownership ownership,
            SourceLocation loc = SourceLocation::current());

// An input of a compiled program (see compile()).
Array placeholder(const Shape& shape, DType dtype = DType::F32, std::string name = "",
                  SourceLocation loc = SourceLocation::current());

// The index value along `axis` at every index of `shape` (dtype i64).
Array index_components(const Shape& shape, int axis,
                       SourceLocation loc = SourceLocation::current());

namespace detail {
Array make_array_leaf(HostArray data, const Shape& shape, SourceLocation loc);
}

template <class T>
Array array(const std::vector<T>& data, const Shape& shape, SourceLocation loc) {
    // Flat here; make_array_leaf checks the element count against the shape.
    return detail::make_array_leaf(
        HostArray::from(std::vector<T>(data), {static_cast<std::int64_t>(data.size())}), shape,
        loc);
}

template <class T>
Array array(const T* data, const Shape& shape, Ownership ownership, SourceLocation loc) {
    if (ownership == Ownership::Copy)
        return array(std::vector<T>(data, data + shape.size()), shape, loc);
    return detail::make_array_leaf(
        HostArray(shape.sizes(), dtype_of<T>(), nullptr, const_cast<T*>(data)), shape, loc);
}

} // namespace hedra
