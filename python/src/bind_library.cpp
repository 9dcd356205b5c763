// The index-space primitives (reshape, view, fuse, overwrite, stack) with their Transform and
// AffineMap, and the library functions of core/library.hpp (reductions, matmul, pad, ...).
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "hedra_python.hpp"

namespace hedra::python {

using namespace nb::literals;

namespace {

void bind_maps(nb::module_& m) {
    nb::class_<TransformAxis>(m, "TransformAxis",
                              "Output axis = scale * input[input_axis] + offset (input_axis -1: "
                              "the constant offset).")
        .def(nb::init<>())
        .def(
            "__init__",
            [](TransformAxis* t, int input_axis, std::int64_t scale, std::int64_t offset) {
                new (t) TransformAxis{input_axis, scale, offset};
            },
            "input_axis"_a, "scale"_a = 1, "offset"_a = 0)
        .def_rw("input_axis", &TransformAxis::input_axis)
        .def_rw("scale", &TransformAxis::scale)
        .def_rw("offset", &TransformAxis::offset);
    nb::class_<Transform>(m, "Transform", "A per-axis invertible affine index map.")
        .def(nb::init<int, std::vector<TransformAxis>, std::vector<std::optional<std::int64_t>>>(),
             "input_rank"_a, "outputs"_a,
             "input_pins"_a = std::vector<std::optional<std::int64_t>>{})
        .def_static("identity", &Transform::identity, "rank"_a)
        .def_static("permutation", &Transform::permutation, "perm"_a)
        .def_static("shift", &Transform::shift, "offsets"_a)
        .def_static("scaling", &Transform::scaling, "scales"_a)
        .def_prop_ro("input_rank", &Transform::input_rank)
        .def_prop_ro("output_rank", &Transform::output_rank)
        .def("inverse", &Transform::inverse)
        .def("compose", &Transform::compose, "inner"_a)
        .def("__call__",
             nb::overload_cast<const std::vector<std::int64_t>&>(&Transform::apply, nb::const_))
        .def("__repr__", &Transform::to_string);
    nb::class_<AffineMap>(m, "AffineMap", "out = M * in + b (M row-major, out_rank x in_rank).")
        .def(nb::init<int, int, std::vector<std::int64_t>, std::vector<std::int64_t>>(),
             "in_rank"_a, "out_rank"_a, "matrix"_a, "offset"_a)
        .def_static("identity", &AffineMap::identity, "rank"_a)
        .def_static("projection", &AffineMap::projection, "in_rank"_a, "axes"_a)
        .def("__call__", &AffineMap::apply)
        .def("__repr__", &AffineMap::to_string);
}

void bind_primitives(nb::module_& m) {
    m.def(
        "reshape",
        [](ArrayLike a, ReshapeTarget to) {
            Array x = to_array(a, "reshape");
            if (nb::isinstance<Transform>(to))
                return reshape(x, nb::cast<Transform>(to), python_location());
            return reshape(x, to_shape(to), python_location());
        },
        "a"_a, "to"_a,
        "With a Shape: per axis (aligned from the right) move, broadcast or select; with a "
        "Transform t: result[t(i)] = a[i]. Moves no data.");
    m.def(
        "view",
        [](ArrayLike a, ShapeLike shape, const AffineMap& map) {
            return view(to_array(a, "view"), to_shape(shape), map, python_location());
        },
        "a"_a, "shape"_a, "map"_a, "result[j] = a[map(j)] for j in shape.");
    m.def(
        "broadcast_to",
        [](ArrayLike a, ShapeLike shape) {
            return broadcast_to(to_array(a, "broadcast_to"), to_shape(shape), python_location());
        },
        "a"_a, "shape"_a);
    m.def(
        "fuse",
        [](ArraySequence pieces) { return fuse(to_arrays(pieces, "fuse"), python_location()); },
        "pieces"_a, "Disjoint pieces whose union is a shape.");
    m.def(
        "overwrite",
        [](ArraySequence pieces) {
            return overwrite(to_arrays(pieces, "overwrite"), python_location());
        },
        "pieces"_a, "Overlapping pieces, the rightmost winning.");
    m.def(
        "stack",
        [](ArraySequence arrays, int axis) {
            return stack(axis, to_arrays(arrays, "stack"), python_location());
        },
        "arrays"_a, "axis"_a = 0, "Arrays of one shape stacked along a new axis.");
    m.def(
        "scan",
        [](nb::callable f, ArraySequence init, ArraySequence xs, int axis, bool reverse,
           std::int64_t length, std::int64_t checkpoint) {
            ScanOptions o;
            o.reverse = reverse;
            o.length = length;
            o.checkpoint = checkpoint;
            ScanResult r = scan(
                [&](const std::vector<Array>& c, const std::vector<Array>& x) {
                    nb::object out = f(to_array_list(c), to_array_list(x));
                    if (!nb::isinstance<nb::tuple>(out) || nb::len(out) != 2)
                        throw Error("scan: the step returned " +
                                    std::string(nb::str(nb::type_name(out.type())).c_str()) +
                                    "; it returns a pair (carries, ys), each a sequence of "
                                    "arrays");
                    return ScanStep{to_arrays(out[0], "scan"), to_arrays(out[1], "scan")};
                },
                to_arrays(init, "scan"), to_arrays(xs, "scan"), axis, o, python_location());
            return nb::make_tuple(to_array_list(r.carries), to_array_list(r.ys),
                                  to_array_list(r.states));
        },
        "f"_a, "init"_a, "xs"_a, "axis"_a = 0, "reverse"_a = false, "length"_a = -1,
        "checkpoint"_a = 0,
        "A loop carrying a state (docs/api.md): f(carries, x_slices) returns (new carries, ys), "
        "traced once; returns (final carries, ys stacked along `axis`, each carry entering "
        "every step). Compiled as one sequential loop; differentiable (a reverse scan). "
        "`length` gives the steps without scanned arrays; `checkpoint` k stores the carries "
        "every k steps for the gradient.");
}

using Reduction = Array (*)(const Array&, std::vector<int>, bool, SourceLocation);

template <Reduction R>
Array reduction(ArrayLike a, AxesLike axes, bool keepdims) {
    return R(to_array(a, "reduction"), to_axes(axes), keepdims, python_location());
}

void bind_functions(nb::module_& m) {
    m.def("sum", &reduction<static_cast<Reduction>(&sum)>, "a"_a, "axis"_a = nb::none(),
          "keepdims"_a = false);
    m.def("mean", &reduction<static_cast<Reduction>(&mean)>, "a"_a, "axis"_a = nb::none(),
          "keepdims"_a = false);
    m.def("max", &reduction<static_cast<Reduction>(&max)>, "a"_a, "axis"_a = nb::none(),
          "keepdims"_a = false);
    m.def("min", &reduction<static_cast<Reduction>(&min)>, "a"_a, "axis"_a = nb::none(),
          "keepdims"_a = false);
    m.def(
        "argmax",
        [](ArrayLike a, int axis, bool keepdims) {
            return argmax(to_array(a, "argmax"), axis, keepdims, python_location());
        },
        "a"_a, "axis"_a, "keepdims"_a = false);
    m.def(
        "argmin",
        [](ArrayLike a, int axis, bool keepdims) {
            return argmin(to_array(a, "argmin"), axis, keepdims, python_location());
        },
        "a"_a, "axis"_a, "keepdims"_a = false);
    m.def(
        "take",
        [](ArrayLike a, ArrayLike indices, int axis) {
            return take(to_array(a, "take"), to_array(indices, "take"), axis, python_location());
        },
        "a"_a, "indices"_a, "axis"_a = 0,
        "Elements of `a` chosen along `axis` by integer `indices` (numpy.take): the result has "
        "a's axes before `axis`, then the indices', then a's after it. Host-data indices are "
        "checked; computed ones outside the axis are clamped. Its gradient adds the rows back "
        "in index order (scatter_add), the same bits every run.");
    m.def(
        "scatter_add",
        [](ArrayLike values, ArrayLike indices, int axis, ShapeLike shape) {
            return scatter_add(to_array(values, "scatter_add"), to_array(indices, "scatter_add"),
                               axis, to_shape(shape), python_location());
        },
        "values"_a, "indices"_a, "axis"_a, "shape"_a,
        "take's adjoint: zeros of `shape` with values added at the rows `indices` names along "
        "`axis`, in index order.");
    m.def(
        "element_count",
        [](ArrayLike a, AxesLike axes) {
            return element_count(to_array(a, "element_count"), to_axes(axes), python_location());
        },
        "a"_a, "axis"_a = nb::none());
    m.def(
        "transpose",
        [](ArrayLike a, AxesLike perm) {
            return transpose(to_array(a, "transpose"), to_axes(perm), python_location());
        },
        "a"_a, "perm"_a = nb::none());
    m.def(
        "matmul",
        [](ArrayLike a, ArrayLike b) {
            return matmul(to_array(a, "matmul"), to_array(b, "matmul"), python_location());
        },
        "a"_a, "b"_a);
    m.def(
        "pad",
        [](ArrayLike a, const std::vector<std::pair<std::int64_t, std::int64_t>>& pairs,
           double value) { return pad(to_array(a, "pad"), pairs, value, python_location()); },
        "a"_a, "pad_width"_a, "value"_a = 0.0);
    m.def(
        "flatten",
        [](ArrayLike a, int first, int last) {
            return flatten(to_array(a, "flatten"), first, last, python_location());
        },
        "a"_a, "first"_a = 0, "last"_a = -1);
    m.def(
        "unflatten",
        [](ArrayLike a, int axis, const std::vector<std::int64_t>& sizes) {
            return unflatten(to_array(a, "unflatten"), axis, sizes, python_location());
        },
        "a"_a, "axis"_a, "sizes"_a);
    m.def(
        "rebase", [](ArrayLike a) { return rebase(to_array(a, "rebase"), python_location()); },
        "a"_a);
}

} // namespace

void bind_library(nb::module_& m) {
    bind_maps(m);
    bind_primitives(m);
    bind_functions(m);
}

} // namespace hedra::python
