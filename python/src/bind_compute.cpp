// Evaluation from Python: compute() and compiled programs return read-only NumPy arrays over
// hedra's result buffers (no copy), and take NumPy or DLPack arrays without copying them. The
// GIL is released while a program runs. Backend choice and HEDRA_DUMP (read at every compile,
// so os.environ changes take effect) are the C++ library's.
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "core/dump.hpp"
#include "hedra_python.hpp"

namespace hedra::python {

using namespace nb::literals;

namespace {

ComputeOptions options_of(const std::string& backend, int num_threads,
                          std::vector<std::int64_t> tile_sizes) {
    ComputeOptions options;
    options.backend = backend;
    options.num_threads = num_threads;
    options.tile_sizes = std::move(tile_sizes);
    return options;
}

// A compiled program and whether it was given one output (then it returns one array).
struct PythonProgram {
    CompiledProgram program;
    bool single;
};

NumpyResults call(const PythonProgram& p, nb::args args) {
    if (args.size() != p.program.num_inputs())
        throw Error("compiled program: " + std::to_string(args.size()) + " inputs given, " +
                    std::to_string(p.program.num_inputs()) + " placeholders compiled");
    std::vector<HostArray> inputs;
    inputs.reserve(args.size());
    for (nb::handle h : args)
        inputs.push_back(to_host_array(h));
    std::vector<HostArray> out;
    {
        nb::gil_scoped_release release;
        out = p.program(inputs);
    }
    return to_numpy_results(out, p.single);
}

} // namespace

void bind_compute(nb::module_& m) {
    m.def(
        "compute",
        [](nb::args arrays, const std::string& backend, int num_threads,
           std::vector<std::int64_t> tile_sizes) {
            std::vector<Array> xs;
            bool single = arrays.size() == 1 && !nb::isinstance<nb::list>(arrays[0]) &&
                          !nb::isinstance<nb::tuple>(arrays[0]);
            if (arrays.size() == 1 && !single)
                xs = to_arrays(arrays[0], "compute");
            else
                xs = to_arrays(arrays, "compute");
            std::vector<HostArray> out;
            {
                nb::gil_scoped_release release;
                out = compute(xs, options_of(backend, num_threads, std::move(tile_sizes)));
            }
            return to_numpy_results(out, single);
        },
        "arrays"_a, "backend"_a = "", "num_threads"_a = 0,
        "tile_sizes"_a = std::vector<std::int64_t>{},
        nb::sig("def compute(*arrays: Array | typing.Sequence[Array], backend: str = '', "
                "num_threads: int = 0, tile_sizes: typing.Sequence[int] = []) -> numpy.ndarray | "
                "tuple[numpy.ndarray, ...]"),
        "Evaluates the arrays together (shared work once) and returns read-only NumPy arrays over "
        "hedra's results: one array for one argument, else a tuple.");

    nb::class_<PythonProgram>(m, "Program",
                              "A compiled program: call it with one array per placeholder.")
        .def("__call__", &call,
             nb::sig("def __call__(self, *inputs: numpy.typing.ArrayLike) -> numpy.ndarray | "
                     "tuple[numpy.ndarray, ...]"))
        .def_prop_ro("num_inputs", [](const PythonProgram& p) { return p.program.num_inputs(); })
        .def_prop_ro("num_outputs", [](const PythonProgram& p) { return p.program.num_outputs(); });
    m.def(
        "compile",
        [](ArraysLike outputs, ArraysLike placeholders, const std::string& backend, int num_threads,
           std::vector<std::int64_t> tile_sizes) {
            const bool single = nb::isinstance<Array>(outputs);
            std::vector<Array> outs = single ? std::vector<Array>{nb::cast<Array>(outputs)}
                                             : to_arrays(outputs, "compile");
            std::vector<Array> ins = nb::isinstance<Array>(placeholders)
                                         ? std::vector<Array>{nb::cast<Array>(placeholders)}
                                         : to_arrays(placeholders, "compile");
            nb::gil_scoped_release release;
            return PythonProgram{
                compile(outs, ins, options_of(backend, num_threads, std::move(tile_sizes))),
                single};
        },
        "outputs"_a, "placeholders"_a, "backend"_a = "", "num_threads"_a = 0,
        "tile_sizes"_a = std::vector<std::int64_t>{},
        nb::sig("def compile(outputs: Array | typing.Sequence[Array], placeholders: Array | "
                "typing.Sequence[Array], backend: str = '', num_threads: int = 0, tile_sizes: "
                "typing.Sequence[int] = []) -> Program"),
        "Compiles the outputs (an array or a list) as a function of the placeholders (in call "
        "order).");

    m.def("set_default_backend", &set_default_backend, "name"_a);
    m.def("default_backend", &default_backend_name);
    m.def("backend_names", &backend_names);
    m.def("dump_enabled", &dump::enabled,
          "Whether HEDRA_DUMP asks for dumps (read at every compile: set os.environ['HEDRA_DUMP'] "
          "to a folder, or '-' for standard error).");
}

} // namespace hedra::python
