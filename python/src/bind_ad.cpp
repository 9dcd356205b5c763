// Reverse-mode AD from Python: grad, vjp and stop_gradient return lazy arrays (computed with the
// forward pass), and check_gradient compares a Python function's gradient with central
// differences.
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "hedra_python.hpp"

namespace hedra::python {

using namespace nb::literals;

void bind_ad(nb::module_& m) {
    m.def(
        "grad",
        [](ArrayLike loss, ArraysLike params) -> ArrayOrList {
            SourceLocation loc = python_location();
            Array l = to_array(loss, "grad");
            if (nb::isinstance<Array>(params))
                return ArrayOrList(nb::cast(grad(l, nb::cast<Array>(params), loc)));
            return ArrayOrList(nb::cast(grad(l, to_arrays(params, "grad"), loc)));
        },
        "loss"_a, "params"_a,
        "The gradient of the rank-0 float array `loss` with respect to an array (an array is "
        "returned) or a list of arrays (a list).");
    m.def(
        "vjp",
        [](ArraySequence outputs, ArraySequence cotangents, ArraySequence inputs) {
            return vjp(to_arrays(outputs, "vjp"), to_arrays(cotangents, "vjp"),
                       to_arrays(inputs, "vjp"), python_location());
        },
        "outputs"_a, "cotangents"_a, "inputs"_a,
        "The cotangents (one per output) pulled back to each input.");
    m.def(
        "stop_gradient",
        [](ArrayLike a) { return stop_gradient(to_array(a, "stop_gradient"), python_location()); },
        "a"_a, "The value of a, through which no gradient flows.");

    nb::class_<GradientCheckResult>(m, "GradientCheckResult")
        .def_ro("analytic", &GradientCheckResult::analytic)
        .def_ro("numeric", &GradientCheckResult::numeric)
        .def_ro("error", &GradientCheckResult::error)
        .def_ro("ok", &GradientCheckResult::ok)
        .def("__bool__", [](const GradientCheckResult& r) { return r.ok; })
        .def("__repr__", &GradientCheckResult::to_string);
    m.def(
        "check_gradient",
        [](ArrayFunctionCallable f, ArraySequence at, double step, double rtol, double atol,
           std::uint64_t seed) {
            GradientCheckOptions options;
            options.step = step;
            options.rtol = rtol;
            options.atol = atol;
            options.seed = seed;
            ArrayFunction fn = [f](const std::vector<Array>& xs) {
                nb::list args;
                for (const Array& x : xs)
                    args.append(nb::cast(x));
                return to_array(call_python(f, *nb::tuple(args)), "check_gradient");
            };
            return check_gradient(fn, to_arrays(at, "check_gradient"), options);
        },
        "f"_a, "at"_a, "step"_a = 1e-5, "rtol"_a = 1e-6, "atol"_a = 1e-10, "seed"_a = 1,
        "Checks f's gradient at `at` (a list of arrays, converted to f64) against central "
        "differences along a random direction.");
}

} // namespace hedra::python
