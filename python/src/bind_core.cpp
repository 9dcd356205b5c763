// DType, Range, Shape and Array with its operators (NumPy's operator protocol: an operand hedra
// cannot take returns NotImplemented), and the leaves: array, placeholder, constants, ranges.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "hedra_python.hpp"

namespace hedra::python {

using namespace nb::literals;

namespace {

using BinaryOp = Array (*)(const Operand&, const Operand&);

// a OP b, or b OP a for the reflected operators.
template <BinaryOp Op, bool Reflected>
ArrayResult binary(const Array& a, ArrayLike b) {
    std::optional<Operand> other = to_operand(b);
    if (!other) return ArrayResult(nb::borrow(Py_NotImplemented));
    Operand self(a, python_location());
    return ArrayResult(nb::cast(Reflected ? Op(*other, self) : Op(self, *other)));
}

Array add(const Operand& a, const Operand& b) {
    return a + b;
}
Array sub(const Operand& a, const Operand& b) {
    return a - b;
}
Array mul(const Operand& a, const Operand& b) {
    return a * b;
}
Array div(const Operand& a, const Operand& b) {
    return a / b;
}
Array mod(const Operand& a, const Operand& b) {
    return a % b;
}
Array bit_and(const Operand& a, const Operand& b) {
    return a & b;
}
Array bit_or(const Operand& a, const Operand& b) {
    return a | b;
}
Array bit_xor(const Operand& a, const Operand& b) {
    return a ^ b;
}
Array shl(const Operand& a, const Operand& b) {
    return a << b;
}
Array shr(const Operand& a, const Operand& b) {
    return a >> b;
}
Array lt(const Operand& a, const Operand& b) {
    return a < b;
}
Array le(const Operand& a, const Operand& b) {
    return a <= b;
}
Array gt(const Operand& a, const Operand& b) {
    return a > b;
}
Array ge(const Operand& a, const Operand& b) {
    return a >= b;
}
Array eq(const Operand& a, const Operand& b) {
    return a == b;
}
Array ne(const Operand& a, const Operand& b) {
    return a != b;
}
Array power(const Operand& a, const Operand& b) {
    return pow(a, b);
}

void bind_dtype(nb::module_& m) {
    nb::enum_<DType> dtype(m, "DType", "An element type: bool, i32, i64, f32, f64, bf16 or f16.");
    for (DType t : kAllDTypes) // dtype names are literals: data() is null-terminated
        dtype.value(dtype_name(t).data(), t);
    dtype.def_prop_ro("itemsize", [](DType t) { return dtype_size(t); })
        .def("__str__", [](DType t) { return std::string(dtype_name(t)); });
    // The module names every type by its own name ("bool_": bool is Python's) and NumPy's.
    for (DType t : kAllDTypes)
        m.attr(t == DType::Bool ? "bool_" : dtype_name(t).data()) = t;
    for (auto [name, t] : {std::pair{"int32", DType::I32},
                           {"int64", DType::I64},
                           {"float32", DType::F32},
                           {"float64", DType::F64},
                           {"bfloat16", DType::BF16},
                           {"float16", DType::F16}})
        m.attr(name) = t;
}

void bind_shapes(nb::module_& m) {
    nb::class_<Range>(m, "Range", "The indices start, start + step, ... (size of them).")
        .def(nb::init<std::int64_t, std::int64_t, std::int64_t>(), "start"_a, "step"_a, "size"_a)
        .def_ro("start", &Range::start)
        .def_ro("step", &Range::step)
        .def_ro("size", &Range::size)
        .def_prop_ro("end", &Range::end)
        .def_prop_ro("is_dynamic", &Range::is_dynamic)
        .def("__len__", [](const Range& r) { return r.size; })
        .def("__contains__", [](const Range& r, std::int64_t i) { return r.contains(i); })
        .def("__eq__", [](const Range& a, const Range& b) { return a == b; })
        .def("__hash__",
             [](const Range& r) {
                 return nb::hash(nb::make_tuple(r.start, r.step, r.size, r.param));
             })
        .def("__repr__", [](const Range& r) { return "hd.Range(" + r.to_string() + ")"; })
        .def("__str__", &Range::to_string);
    m.def("range", nb::overload_cast<std::int64_t>(&range), "end"_a, "The indices [0, end).");
    m.def("range", nb::overload_cast<std::int64_t, std::int64_t, std::int64_t>(&range), "start"_a,
          "end"_a, "step"_a = 1, "The indices start, start + step, ... below end.");
    m.def("dynamic", &dynamic, "name"_a, "max"_a,
          "A symbolic extent [0, n), n bound when a compiled program is called (1 <= n <= max).");

    nb::class_<Shape>(m, "Shape", "A tuple of ranges; an int n stands for range(n).")
        .def(
            "__init__", [](Shape* s, ShapeLike ranges) { new (s) Shape(to_shape(ranges)); },
            "ranges"_a = nb::tuple())
        .def_static("of", &Shape::of, "sizes"_a, "Shape.of([3, 4]) == Shape([3, 4]).")
        .def_prop_ro("rank", &Shape::rank)
        .def_prop_ro("sizes", &Shape::sizes)
        .def_prop_ro("size", &Shape::size)
        .def_prop_ro("ranges", &Shape::ranges)
        .def("__len__", &Shape::rank)
        .def("__getitem__",
             [](const Shape& s, int axis) {
                 if (axis < 0) axis += s.rank();
                 if (axis < 0 || axis >= s.rank())
                     throw nb::index_error("hd.Shape: axis out of range");
                 return s[axis];
             })
        .def("__iter__", [](const Shape& s) { return nb::iter(nb::cast(s.ranges())); })
        .def("__contains__",
             [](const Shape& s, const std::vector<std::int64_t>& i) { return s.contains(i); })
        .def("__eq__", [](const Shape& a, ShapeLike b) { return a == to_shape(b); })
        .def("__repr__", [](const Shape& s) { return "hd.Shape" + s.to_string(); })
        .def("__str__", &Shape::to_string);
}

// a[key]: selection by hedra index (the array's own ranges, not positions from 0). An int picks
// that index and drops the axis; a slice start:stop:step keeps the indices of the axis it
// contains, at their places (hd.rebase renumbers from 0); `...` stands for the axes not named.
Array select_items(const Array& a, nb::handle key) {
    std::vector<nb::handle> items;
    if (nb::isinstance<nb::tuple>(key))
        for (nb::handle h : key)
            items.push_back(h);
    else
        items.push_back(key);
    const int rank = a.rank();
    int named = 0;
    for (nb::handle h : items)
        named += h.is(nb::ellipsis()) ? 0 : 1;
    if (named > rank)
        throw Error("a[...]: " + std::to_string(named) + " indices for an array of rank " +
                    std::to_string(rank) + " (" + a.describe() + ")");
    std::vector<Range> ranges = a.shape().ranges();
    std::vector<std::optional<std::int64_t>> pins(static_cast<std::size_t>(rank));
    int axis = 0;
    for (nb::handle h : items) {
        if (h.is(nb::ellipsis())) {
            axis += rank - named;
            continue;
        }
        Range& r = ranges[static_cast<std::size_t>(axis)];
        const std::string where = "a[...]: axis " + std::to_string(axis) + " " + r.to_string();
        if (nb::isinstance<nb::slice>(h)) {
            auto get = [&](const char* name, std::int64_t fallback) {
                nb::object v = h.attr(name);
                return v.is_none() ? fallback : nb::cast<std::int64_t>(v);
            };
            const std::int64_t step = get("step", 1);
            if (step < 1)
                throw Error(where + ": slice step " + std::to_string(step) +
                            " must be positive (reverse with hd.reshape and a Transform)");
            const std::int64_t start = get("start", r.start), stop = get("stop", r.end());
            r = intersect(r, range(start, std::max(start, stop), step));
        } else {
            const std::int64_t i = nb::cast<std::int64_t>(h);
            if (!r.contains(i))
                throw Error(where + " has no index " + std::to_string(i) +
                            " (hedra indices are the array's ranges, not positions from 0)");
            r = Range(i, 1, 1);
            pins[static_cast<std::size_t>(axis)] = i;
        }
        ++axis;
    }
    SourceLocation loc = python_location();
    Array out = ranges == a.shape().ranges() ? a : reshape(a, Shape(ranges), loc);
    std::vector<TransformAxis> kept;
    for (int k = 0; k < rank; ++k)
        if (!pins[static_cast<std::size_t>(k)]) kept.push_back(TransformAxis{k, 1, 0});
    if (static_cast<int>(kept.size()) == rank) return out;
    return reshape(out, Transform(rank, kept, pins), loc);
}

void bind_array_class(nb::module_& m) {
    auto cls = nb::class_<Array>(m, "Array",
                                 "A lazy array: a node of the graph that compute() evaluates.");
    cls.def_prop_ro("shape", &Array::shape)
        .def_prop_ro("dtype", &Array::dtype)
        .def_prop_ro("rank", &Array::rank)
        .def_prop_ro("ndim", &Array::rank)
        .def_prop_ro("size", &Array::size)
        .def("describe", &Array::describe)
        .def(
            "value",
            [](const Array& a) -> OptionalNumpyArray {
                auto v = a.value();
                return v ? OptionalNumpyArray(to_numpy(*v)) : OptionalNumpyArray(nb::none());
            },
            "The memoized result (a read-only NumPy array) if computed, else None.")
        .def(
            "__getitem__", [](const Array& a, IndexKey key) { return select_items(a, key); },
            "key"_a, "Selection by hedra index: an int drops the axis, a slice keeps its indices.")
        .def("__iter__",
             [](const Array& a) {
                 if (a.rank() == 0) throw nb::type_error("iteration over a rank-0 hd.Array");
                 nb::list rows;
                 const Range& r = a.shape()[0];
                 for (std::int64_t k = 0; k < r.size; ++k)
                     rows.append(nb::cast(select_items(a, nb::int_(r.index(k)))));
                 return nb::iter(rows);
             })
        .def("__repr__", [](const Array& a) { return "hd.Array(" + a.describe() + ")"; })
        .def("__len__",
             [](const Array& a) {
                 if (a.rank() == 0) throw nb::type_error("len() of a rank-0 hd.Array");
                 return a.shape()[0].size;
             })
        .def("__bool__",
             [](const Array&) -> bool {
                 throw nb::type_error("the truth value of a lazy hd.Array is not known before "
                                      "compute(); compute it, or use hd.where(cond, a, b)");
             })
        .def(
            "numpy", [](const Array& a) { return to_numpy(compute(a)); },
            "Computes the array (if not yet) and returns it as a read-only NumPy array.")
        .def(
            "__array__",
            [](const Array& a, OptionalDTypeLike dtype, OptionalBool copy) -> NumpyArray {
                NumpyArray r = to_numpy(compute(a));
                nb::module_ np = nb::module_::import_("numpy");
                if (!dtype.is_none() || (!copy.is_none() && nb::cast<bool>(copy)))
                    return NumpyArray(np.attr("array")(r, "dtype"_a = dtype, "copy"_a = true));
                return r;
            },
            "dtype"_a = nb::none(), "copy"_a = nb::none())
        .def("__dlpack__",
             [](const Array& a, nb::kwargs kwargs) {
                 return to_numpy(compute(a)).attr("__dlpack__")(**kwargs);
             })
        .def("__dlpack_device__", [](const Array&) { return DeviceTuple(nb::make_tuple(1, 0)); })
        .def(
            "astype",
            [](const Array& a, DTypeLike t) { return cast(a, to_dtype(t), python_location()); },
            "dtype"_a)
        .def_prop_ro("T", [](const Array& a) { return transpose(a, {}, python_location()); })
        .def(
            "sum",
            [](const Array& a, AxesLike axes, bool keepdims) {
                return sum(a, to_axes(axes), keepdims, python_location());
            },
            "axis"_a = nb::none(), "keepdims"_a = false)
        .def(
            "mean",
            [](const Array& a, AxesLike axes, bool keepdims) {
                return mean(a, to_axes(axes), keepdims, python_location());
            },
            "axis"_a = nb::none(), "keepdims"_a = false)
        .def(
            "max",
            [](const Array& a, AxesLike axes, bool keepdims) {
                return max(a, to_axes(axes), keepdims, python_location());
            },
            "axis"_a = nb::none(), "keepdims"_a = false)
        .def(
            "min",
            [](const Array& a, AxesLike axes, bool keepdims) {
                return min(a, to_axes(axes), keepdims, python_location());
            },
            "axis"_a = nb::none(), "keepdims"_a = false)
        .def("__neg__", [](const Array& a) { return -Operand(a, python_location()); })
        .def("__pos__", [](const Array& a) { return a; })
        .def("__abs__", [](const Array& a) { return abs(a, python_location()); })
        .def("__matmul__",
             [](const Array& a, ArrayLike b) {
                 return matmul(a, to_array(b, "matmul"), python_location());
             })
        .def("__rmatmul__", [](const Array& a, ArrayLike b) {
            return matmul(to_array(b, "matmul"), a, python_location());
        });
    cls.attr("__hash__") = nb::none(); // == builds an array, as in NumPy
    // ndarray OP hd.Array defers to Array.__rOP__ (a lazy array) instead of computing it.
    cls.attr("__array_ufunc__") = nb::none();
#define HEDRA_BINARY(name, rname, op)                                                              \
    cls.def(name, &binary<op, false>, nb::is_operator());                                          \
    if (rname[0]) cls.def(rname, &binary<op, true>, nb::is_operator());
    HEDRA_BINARY("__add__", "__radd__", add)
    HEDRA_BINARY("__sub__", "__rsub__", sub)
    HEDRA_BINARY("__mul__", "__rmul__", mul)
    HEDRA_BINARY("__truediv__", "__rtruediv__", div)
    HEDRA_BINARY("__mod__", "__rmod__", mod)
    HEDRA_BINARY("__and__", "__rand__", bit_and)
    HEDRA_BINARY("__or__", "__ror__", bit_or)
    HEDRA_BINARY("__xor__", "__rxor__", bit_xor)
    HEDRA_BINARY("__lshift__", "__rlshift__", shl)
    HEDRA_BINARY("__rshift__", "__rrshift__", shr)
    HEDRA_BINARY("__pow__", "__rpow__", power)
    HEDRA_BINARY("__lt__", "", lt)
    HEDRA_BINARY("__le__", "", le)
    HEDRA_BINARY("__gt__", "", gt)
    HEDRA_BINARY("__ge__", "", ge)
    HEDRA_BINARY("__eq__", "", eq)
    HEDRA_BINARY("__ne__", "", ne)
#undef HEDRA_BINARY
}

void bind_leaves(nb::module_& m) {
    m.def(
        "array",
        [](ArrayLike data, OptionalDTypeLike dtype, bool copy, OptionalShapeLike shape) {
            std::optional<DType> t;
            if (!dtype.is_none()) t = to_dtype(dtype);
            HostArray host = to_host_array(data, t, copy);
            if (shape.is_none()) return array(host, python_location());
            return array(host, to_shape(shape), python_location());
        },
        "data"_a, "dtype"_a = nb::none(), "copy"_a = false, "shape"_a = nb::none(),
        nb::sig("def array(data: numpy.typing.ArrayLike, dtype: DType | str | type | None = None, "
                "copy: bool = False, shape: Shape | typing.Sequence[int | Range] | None = None) "
                "-> Array"),
        "An array of host data. A C-contiguous NumPy (or DLPack) array of a hedra dtype is "
        "borrowed, not copied: keep it unchanged while hedra uses it, or pass copy=True. `shape` "
        "places the data on other ranges (a hd.Shape of the same sizes).");
    m.def(
        "placeholder",
        [](ShapeLike shape, OptionalDTypeLike dtype, const std::string& name) {
            return placeholder(to_shape(shape), dtype.is_none() ? DType::F32 : to_dtype(dtype),
                               name, python_location());
        },
        "shape"_a, "dtype"_a = nb::none(), "name"_a = "",
        nb::sig("def placeholder(shape: Shape | typing.Sequence[int | Range], dtype: DType | str | "
                "type | None = None, name: str = '') -> Array"),
        "An input of a compiled program.");
    m.def(
        "constant",
        [](double v, OptionalDTypeLike dtype) {
            return constant(v, dtype.is_none() ? DType::F32 : to_dtype(dtype), python_location());
        },
        "value"_a, "dtype"_a = nb::none());
    m.def(
        "full",
        [](ShapeLike shape, double v, OptionalDTypeLike dtype) {
            return full(to_shape(shape), v, dtype.is_none() ? DType::F32 : to_dtype(dtype),
                        python_location());
        },
        "shape"_a, "value"_a, "dtype"_a = nb::none());
    m.def(
        "zeros",
        [](ShapeLike shape, OptionalDTypeLike dtype) {
            return zeros(to_shape(shape), dtype.is_none() ? DType::F32 : to_dtype(dtype),
                         python_location());
        },
        "shape"_a, "dtype"_a = nb::none());
    m.def(
        "ones",
        [](ShapeLike shape, OptionalDTypeLike dtype) {
            return ones(to_shape(shape), dtype.is_none() ? DType::F32 : to_dtype(dtype),
                        python_location());
        },
        "shape"_a, "dtype"_a = nb::none());
    m.def(
        "index_components",
        [](ShapeLike shape, int axis) {
            return index_components(to_shape(shape), axis, python_location());
        },
        "shape"_a, "axis"_a, "The index along `axis` at every index of `shape` (i64).");
}

} // namespace

void bind_core(nb::module_& m) {
    bind_dtype(m);
    bind_shapes(m);
    bind_array_class(m);
    bind_leaves(m);
}

} // namespace hedra::python
