// Tracing: hd.lazy calls the Python function once on symbolic scalars (hd.Sym), whose operators
// build hedra's scalar expressions, and maps the traced expression over the operands. The math
// functions, where and maximum/minimum take arrays or Syms, so one function serves both.
// A Sym has no truth value: Python's `if`, `and`, `or` and `max` would branch on a value that
// does not exist yet, so bool(sym) raises and points to hd.where.
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "hedra_python.hpp"

namespace hedra::python {

using namespace nb::literals;

namespace {

std::optional<Sym> to_sym(nb::handle h) {
    if (nb::isinstance<Sym>(h)) return nb::cast<Sym>(h);
    if (nb::isinstance<nb::bool_>(h)) return Sym(nb::cast<bool>(h));
    if (nb::isinstance<nb::int_>(h)) return Sym(nb::cast<std::int64_t>(h));
    if (nb::isinstance<nb::float_>(h)) return Sym(nb::cast<double>(h));
    // A NumPy scalar (np.float32(2)) is a literal like the Python number it holds.
    if (nb::hasattr(h, "item") && nb::hasattr(h, "dtype") && nb::hasattr(h, "ndim") &&
        nb::cast<int>(h.attr("ndim")) == 0) {
        nb::object value = h.attr("item")();
        if (!nb::hasattr(value, "item")) return to_sym(value);
    }
    return std::nullopt;
}

Sym require_sym(nb::handle h, const char* op) {
    if (auto s = to_sym(h)) return *s;
    throw nb::type_error((std::string(op) +
                          ": inside a traced function, expected a hd.Sym or a "
                          "number, got " +
                          nb::cast<std::string>(nb::str(h.type())))
                             .c_str());
}

bool any_sym(std::initializer_list<nb::handle> hs) {
    for (nb::handle h : hs)
        if (nb::isinstance<Sym>(h)) return true;
    return false;
}

template <ScalarOp Op, bool Reflected>
SymResult sym_op(const Sym& a, SymOperand b) {
    std::optional<Sym> other = to_sym(b);
    if (!other) return SymResult(nb::borrow(Py_NotImplemented));
    return SymResult(nb::cast(Reflected ? sym_binary(Op, *other, a) : sym_binary(Op, a, *other)));
}

std::vector<ScalarExpr> traced_results(nb::handle r, const char* op) {
    std::vector<ScalarExpr> out;
    if (nb::isinstance<nb::tuple>(r) || nb::isinstance<nb::list>(r)) {
        for (nb::handle item : r)
            out.push_back(require_sym(item, op).expr());
    } else {
        out.push_back(require_sym(r, op).expr());
    }
    return out;
}

void bind_sym(nb::module_& m) {
    auto cls = nb::class_<Sym>(m, "Sym",
                               "A symbolic scalar: what a function given to hd.lazy is traced on.");
    cls.def_prop_ro("dtype", &Sym::dtype)
        .def("__repr__",
             [](const Sym& s) { return "hd.Sym(" + std::string(dtype_name(s.dtype())) + ")"; })
        .def("__bool__",
             [](const Sym&) -> bool {
                 throw nb::type_error(
                     "a hd.Sym has no truth value: the function given to hd.lazy is traced once on "
                     "symbolic scalars, so Python's if/and/or/not and builtin max/min cannot "
                     "branch on "
                     "it; use hd.where(cond, a, b), hd.maximum or hd.minimum");
             })
        .def("__neg__", [](const Sym& a) { return -a; })
        .def("__pos__", [](const Sym& a) { return a; })
        .def("__abs__", [](const Sym& a) { return abs(a); })
        .def("__invert__", [](const Sym& a) { return !a; })
        .def(
            "astype", [](const Sym& a, DTypeLike t) { return cast(a, to_dtype(t)); }, "dtype"_a);
    cls.attr("__hash__") = nb::none();
    cls.attr("__array_ufunc__") = nb::none(); // np.float32(2) * sym defers to Sym.__rmul__
#define HEDRA_SYM(name, rname, op)                                                                 \
    cls.def(name, &sym_op<ScalarOp::op, false>, nb::is_operator());                                \
    if (rname[0]) cls.def(rname, &sym_op<ScalarOp::op, true>, nb::is_operator());
    HEDRA_SYM("__add__", "__radd__", Add)
    HEDRA_SYM("__sub__", "__rsub__", Sub)
    HEDRA_SYM("__mul__", "__rmul__", Mul)
    HEDRA_SYM("__truediv__", "__rtruediv__", Div)
    HEDRA_SYM("__mod__", "__rmod__", Mod)
    HEDRA_SYM("__and__", "__rand__", BitAnd)
    HEDRA_SYM("__or__", "__ror__", BitOr)
    HEDRA_SYM("__xor__", "__rxor__", BitXor)
    HEDRA_SYM("__lshift__", "__rlshift__", Shl)
    HEDRA_SYM("__rshift__", "__rrshift__", Shr)
    HEDRA_SYM("__pow__", "__rpow__", Pow)
    HEDRA_SYM("__lt__", "", Lt)
    HEDRA_SYM("__le__", "", Le)
    HEDRA_SYM("__gt__", "", Gt)
    HEDRA_SYM("__ge__", "", Ge)
    HEDRA_SYM("__eq__", "", Eq)
    HEDRA_SYM("__ne__", "", Ne)
#undef HEDRA_SYM
}

void bind_lazy(nb::module_& m) {
    m.def(
        "lazy",
        [](nb::callable f, nb::args operands) -> nb::object {
            SourceLocation loc = python_location();
            if (operands.size() == 0) throw Error("lazy: give at least one operand");
            std::vector<Operand> ops;
            for (nb::handle h : operands)
                ops.push_back(require_operand(h, "lazy"));
            nb::list syms;
            for (const Sym& s : detail::trace_arguments(ops))
                syms.append(nb::cast(s));
            nb::object r = f(*nb::tuple(syms));
            auto arrays = detail::make_map(traced_results(r, "lazy"), ops, "lazy", loc);
            if (!nb::isinstance<nb::tuple>(r) && !nb::isinstance<nb::list>(r))
                return nb::cast(arrays[0]);
            return nb::tuple(nb::cast(arrays));
        },
        "f"_a, "operands"_a,
        nb::sig("def lazy(f: typing.Callable[..., Sym | float | tuple[Sym | float, ...]], "
                "*operands: Array | numpy.typing.ArrayLike | float) -> Array | tuple[Array, ...]"),
        "f traced once on symbolic scalars (hd.Sym) and mapped over the broadcast operands "
        "(arrays, "
        "array-likes or numbers). f returns a Sym or a number, or a tuple of them (then a tuple of "
        "arrays is returned).");

    m.def(
        "reduce",
        [](ReduceOpLike op, ArrayLike a, AxesLike axes, bool keepdims, OptionalFloat identity) {
            SourceLocation loc = python_location();
            Array x = to_array(a, "reduce");
            if (nb::isinstance<nb::str>(op)) {
                const std::string name = nb::cast<std::string>(op);
                const std::pair<const char*, ReduceOp> ops[] = {
                    {"sum", ReduceOp::Sum}, {"prod", ReduceOp::Prod}, {"max", ReduceOp::Max},
                    {"min", ReduceOp::Min}, {"and", ReduceOp::And},   {"or", ReduceOp::Or}};
                for (auto [n, r] : ops)
                    if (name == n) return reduce(r, x, to_axes(axes), keepdims, loc);
                throw Error("reduce: unknown operation '" + name +
                            "'; use sum, prod, max, min, and, "
                            "or, or a function f(acc, x) with identity=");
            }
            if (identity.is_none())
                throw Error("reduce: a combiner function needs identity= (its neutral value)");
            Sym acc(scalar_input(0, x.dtype())), el(scalar_input(1, x.dtype()));
            auto out =
                traced_results(nb::borrow<nb::callable>(op)(nb::cast(acc), nb::cast(el)), "reduce");
            if (out.size() != 1) throw Error("reduce: the combiner must return one value");
            return detail::make_custom_reduce(out[0], nb::cast<double>(identity), x, to_axes(axes),
                                              keepdims, loc);
        },
        "op"_a, "a"_a, "axis"_a = nb::none(), "keepdims"_a = false, "identity"_a = nb::none(),
        "Reduce over axes (None: all) by 'sum', 'prod', 'max', 'min', 'and', 'or', or an "
        "associative combiner f(acc, x) traced on Syms, with its identity.");

    m.def(
        "reduce_multiple_value",
        [](CombinerCallable f, const std::vector<double>& identities, ArraySequence arrays,
           AxesLike axes, bool keepdims) {
            SourceLocation loc = python_location();
            std::vector<Array> xs = to_arrays(arrays, "reduce_multiple_value");
            const int k = static_cast<int>(xs.size());
            nb::list acc, el;
            for (int i = 0; i < k; ++i) {
                const DType t = xs[static_cast<std::size_t>(i)].dtype();
                acc.append(nb::cast(Sym(scalar_input(i, t))));
                el.append(nb::cast(Sym(scalar_input(k + i, t))));
            }
            auto combiners =
                traced_results(f(nb::tuple(acc), nb::tuple(el)), "reduce_multiple_value");
            return ArrayTuple(nb::tuple(nb::cast(detail::make_multi_reduce(
                combiners, identities, xs, to_axes(axes), keepdims, loc))));
        },
        "f"_a, "identities"_a, "arrays"_a, "axis"_a = nb::none(), "keepdims"_a = false,
        "Arrays of one shape reduced together: f(acc, x) gets two tuples of Syms (the "
        "accumulators, one element of each array) and returns the new accumulators; one array per "
        "component, e.g. an argmax as (value, index).");
}

using UnaryArray = Array (*)(const Array&, SourceLocation);
using UnarySym = Sym (*)(const Sym&);

template <UnaryArray A, UnarySym S>
SymOrArray unary(SymOrArrayLike x) {
    if (auto s = to_sym(x); s && nb::isinstance<Sym>(x)) return SymOrArray(nb::cast(S(*s)));
    return SymOrArray(nb::cast(A(to_array(x, "math function"), python_location())));
}

Sym sym_relu(const Sym& a) {
    return max(a, 0.0);
}

void bind_math(nb::module_& m) {
#define HEDRA_UNARY(name)                                                                          \
    m.def(#name,                                                                                   \
          &unary<static_cast<UnaryArray>(&hedra::name), static_cast<UnarySym>(&hedra::name)>,      \
          "x"_a, "Elementwise " #name " of an array, or of a Sym inside a traced function.");
    HEDRA_UNARY(exp)
    HEDRA_UNARY(log)
    HEDRA_UNARY(sqrt)
    HEDRA_UNARY(tanh)
    HEDRA_UNARY(sigmoid)
    HEDRA_UNARY(sin)
    HEDRA_UNARY(cos)
    HEDRA_UNARY(erf)
    HEDRA_UNARY(log1p)
    HEDRA_UNARY(expm1)
    HEDRA_UNARY(floor)
    HEDRA_UNARY(ceil)
    HEDRA_UNARY(round)
    HEDRA_UNARY(abs)
#undef HEDRA_UNARY
    m.def("relu", &unary<static_cast<UnaryArray>(&hedra::relu), &sym_relu>, "x"_a, "max(x, 0).");

    m.def(
        "maximum",
        [](SymOrArrayLike a, SymOrArrayLike b) -> SymOrArray {
            if (any_sym({a, b}))
                return SymOrArray(
                    nb::cast(max(require_sym(a, "maximum"), require_sym(b, "maximum"))));
            return SymOrArray(
                nb::cast(maximum(require_operand(a, "maximum"), require_operand(b, "maximum"))));
        },
        "a"_a, "b"_a);
    m.def(
        "minimum",
        [](SymOrArrayLike a, SymOrArrayLike b) -> SymOrArray {
            if (any_sym({a, b}))
                return SymOrArray(
                    nb::cast(min(require_sym(a, "minimum"), require_sym(b, "minimum"))));
            return SymOrArray(
                nb::cast(minimum(require_operand(a, "minimum"), require_operand(b, "minimum"))));
        },
        "a"_a, "b"_a);
    m.def(
        "pow",
        [](SymOrArrayLike a, SymOrArrayLike b) -> SymOrArray {
            if (any_sym({a, b}))
                return SymOrArray(nb::cast(pow(require_sym(a, "pow"), require_sym(b, "pow"))));
            return SymOrArray(nb::cast(pow(require_operand(a, "pow"), require_operand(b, "pow"))));
        },
        "a"_a, "b"_a);
    auto where_fn = [](SymOrArrayLike c, SymOrArrayLike a, SymOrArrayLike b) -> SymOrArray {
        if (any_sym({c, a, b}))
            return SymOrArray(nb::cast(
                select(require_sym(c, "where"), require_sym(a, "where"), require_sym(b, "where"))));
        return SymOrArray(nb::cast(where(require_operand(c, "where"), require_operand(a, "where"),
                                         require_operand(b, "where"))));
    };
    m.def("where", where_fn, "cond"_a, "a"_a, "b"_a,
          "a where cond is true, else b: arrays (broadcast) or Syms inside a traced function.");
    m.def("select", where_fn, "cond"_a, "a"_a, "b"_a, "hd.where's C++ name.");
    m.def(
        "cast",
        [](SymOrArrayLike x, DTypeLike t) -> SymOrArray {
            if (nb::isinstance<Sym>(x))
                return SymOrArray(nb::cast(cast(nb::cast<Sym>(x), to_dtype(t))));
            return SymOrArray(nb::cast(cast(to_array(x, "cast"), to_dtype(t), python_location())));
        },
        "x"_a, "dtype"_a);
}

} // namespace

void bind_trace(nb::module_& m) {
    bind_sym(m);
    bind_lazy(m);
    bind_math(m);
}

} // namespace hedra::python
