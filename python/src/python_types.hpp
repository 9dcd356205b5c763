// Parameter and return types that name what a binding takes or gives. Each is a Python object
// passed through as nb::handle (arguments) or nb::object (results) is, with the conversion left
// to convert.cpp, but it carries a type text (Name, read by nanobind's caster for Python object
// types), so that docstrings and the stubs stubgen writes say
// "hedra._hedra.Array | numpy.typing.ArrayLike" instead of "object".
#pragma once

#include <nanobind/nanobind.h>

namespace hedra::python {

// Any Python object, passed on as it came, named for signatures by Tag::name.
template <class Tag>
struct TypedHandle : nanobind::handle {
    static constexpr auto Name = Tag::name; // read by nanobind's caster of Python objects
    static bool check_(nanobind::handle) { return true; } // the binding converts or raises
    TypedHandle() = default;
    TypedHandle(nanobind::handle h) : nanobind::handle(h) {} // NOLINT: as nb::handle converts
    TypedHandle(nanobind::handle h, nanobind::detail::borrow_t) : nanobind::handle(h) {}
    TypedHandle(nanobind::handle h, nanobind::detail::steal_t) : nanobind::handle(h) {}
};

// A Python callable (checked as nb::callable is), named with its parameters and result.
template <class Tag>
struct TypedCallable : nanobind::callable {
    static constexpr auto Name = Tag::name;
    static bool check_(nanobind::handle h) { return PyCallable_Check(h.ptr()); }
    TypedCallable() = default;
    TypedCallable(nanobind::handle h, nanobind::detail::borrow_t)
        : nanobind::callable(h, nanobind::detail::borrow_t{}) {}
    TypedCallable(nanobind::handle h, nanobind::detail::steal_t)
        : nanobind::callable(h, nanobind::detail::steal_t{}) {}
};

// A result object (a NumPy array, a list of them, ...) named for signatures.
template <class Tag>
struct TypedObject : nanobind::object {
    static constexpr auto Name = Tag::name;
    static bool check_(nanobind::handle) { return true; }
    TypedObject() = default;
    explicit TypedObject(nanobind::object o) : nanobind::object(std::move(o)) {}
    TypedObject(nanobind::handle h, nanobind::detail::borrow_t)
        : nanobind::object(h, nanobind::detail::borrow_t{}) {}
    TypedObject(nanobind::handle h, nanobind::detail::steal_t)
        : nanobind::object(h, nanobind::detail::steal_t{}) {}
};

} // namespace hedra::python

// Declares hedra::python::Name, a Base (above) whose signature text is `text`.
#define HEDRA_PY_TYPED(Base, Name, text)                                                           \
    namespace hedra::python {                                                                      \
    struct Name##Tag {                                                                             \
        static constexpr auto name = nanobind::detail::const_name(text);                           \
    };                                                                                             \
    using Name = Base<Name##Tag>;                                                                  \
    }

HEDRA_PY_TYPED(TypedHandle, ArrayLike, "hedra._hedra.Array | numpy.typing.ArrayLike")
HEDRA_PY_TYPED(TypedHandle, ArraySequence,
               "collections.abc.Sequence[hedra._hedra.Array | numpy.typing.ArrayLike]")
HEDRA_PY_TYPED(TypedHandle, ArraysLike,
               "hedra._hedra.Array | collections.abc.Sequence[hedra._hedra.Array | "
               "numpy.typing.ArrayLike]")
HEDRA_PY_TYPED(TypedHandle, ShapeLike,
               "hedra._hedra.Shape | collections.abc.Sequence[int | hedra._hedra.Range]")
HEDRA_PY_TYPED(TypedHandle, DTypeLike, "hedra._hedra.DType | str | type | numpy.dtype")
HEDRA_PY_TYPED(TypedHandle, AxesLike, "int | collections.abc.Sequence[int]")
HEDRA_PY_TYPED(TypedHandle, SymOperand, "hedra._hedra.Sym | bool | int | float")
HEDRA_PY_TYPED(TypedHandle, SymOrArrayLike,
               "hedra._hedra.Sym | hedra._hedra.Array | numpy.typing.ArrayLike")
HEDRA_PY_TYPED(TypedHandle, ReduceOpLike,
               "str | collections.abc.Callable[[hedra._hedra.Sym, hedra._hedra.Sym], "
               "hedra._hedra.Sym | float]")
HEDRA_PY_TYPED(TypedHandle, Number, "float")
HEDRA_PY_TYPED(TypedHandle, Flag, "bool")
HEDRA_PY_TYPED(TypedHandle, IndexKey,
               "int | slice | types.EllipsisType | tuple[int | slice | types.EllipsisType, ...]")
HEDRA_PY_TYPED(TypedHandle, ReshapeTarget,
               "hedra._hedra.Shape | hedra._hedra.Transform | collections.abc.Sequence[int | "
               "hedra._hedra.Range]")
HEDRA_PY_TYPED(TypedCallable, LossCallable,
               "collections.abc.Callable[[list[hedra._hedra.Array], list[hedra._hedra.Array]], "
               "hedra._hedra.Array | tuple[hedra._hedra.Array, "
               "collections.abc.Sequence[hedra._hedra.Array]]]")
HEDRA_PY_TYPED(TypedCallable, ForwardCallable,
               "collections.abc.Callable[[list[hedra._hedra.Array], hedra._hedra.Array], "
               "hedra._hedra.Array]")
HEDRA_PY_TYPED(TypedCallable, ArrayFunctionCallable,
               "collections.abc.Callable[..., hedra._hedra.Array]")
HEDRA_PY_TYPED(TypedCallable, CombinerCallable,
               "collections.abc.Callable[[tuple[hedra._hedra.Sym, ...], tuple[hedra._hedra.Sym, "
               "...]], collections.abc.Sequence[hedra._hedra.Sym | float]]")
HEDRA_PY_TYPED(TypedObject, ArrayResult, "hedra._hedra.Array")
HEDRA_PY_TYPED(TypedObject, ArrayTuple, "tuple[hedra._hedra.Array, ...]")
HEDRA_PY_TYPED(TypedObject, GraphTuple, "tuple[list[hedra._hedra.Array], list[hedra._hedra.Array]]")
HEDRA_PY_TYPED(TypedObject, ClippedTuple, "tuple[list[hedra._hedra.Array], float]")
HEDRA_PY_TYPED(TypedObject, DeviceTuple, "tuple[int, int]")
HEDRA_PY_TYPED(TypedObject, GptParameterList, "list[tuple[str, list[int], bool]]")
HEDRA_PY_TYPED(TypedObject, SymResult, "hedra._hedra.Sym")
HEDRA_PY_TYPED(TypedObject, SymOrArray, "hedra._hedra.Sym | hedra._hedra.Array")
HEDRA_PY_TYPED(TypedObject, ArrayOrList, "hedra._hedra.Array | list[hedra._hedra.Array]")
HEDRA_PY_TYPED(TypedObject, OptionalNumpyArray, "numpy.typing.NDArray[typing.Any] | None")
HEDRA_PY_TYPED(TypedObject, NumpyArray, "numpy.typing.NDArray[typing.Any]")
HEDRA_PY_TYPED(TypedObject, NumpyResults,
               "numpy.typing.NDArray[typing.Any] | tuple[numpy.typing.NDArray[typing.Any], ...]")
HEDRA_PY_TYPED(TypedObject, NumpyArrayList, "list[numpy.typing.NDArray[typing.Any]]")
HEDRA_PY_TYPED(TypedObject, ArrayList, "list[hedra._hedra.Array]")
HEDRA_PY_TYPED(TypedObject, CheckpointTuple,
               "tuple[dict[str, numpy.typing.NDArray[typing.Any]], dict[str, str]]")

// Arguments that may also be None: the argument's None default (or nb::arg(...).none()) makes
// nanobind add "| None" to the type text.
namespace hedra::python {
using OptionalArrayLike = ArrayLike;
using OptionalShapeLike = ShapeLike;
using OptionalDTypeLike = DTypeLike;
using OptionalFloat = Number;
using OptionalBool = Flag;
} // namespace hedra::python
