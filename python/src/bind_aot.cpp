// hedra.aot: ahead-of-time libraries from Python, through the aot/ API hedra-aot itself calls
// (lower_aot, write_aot_library): a program given as outputs over placeholders becomes
// <name>.h, its sources and lib<name>.a, and on request lib<name>.so (the archive and libomp
// linked into a shared library, for ctypes or any FFI).
#include <filesystem>

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "aot/aot_library.hpp"
#include "hedra_python.hpp"
#include "python_types.hpp"

namespace hedra::python {

using namespace nb::literals;
namespace fs = std::filesystem;

namespace {

// One argument of the generated function, as the header documents it.
struct AotArgument {
    std::string name;
    DType dtype = DType::F32;
    std::vector<std::int64_t> sizes; // a symbolic axis holds its maximum
    std::string shape;               // "[batch<=64, 784]"
};

// What compile_library wrote, and the C function's arguments in order: the sizes, the inputs,
// the outputs, then the workspace and the thread count.
struct AotLibrary {
    std::string name;
    std::string target;
    std::vector<std::string> files;
    std::string header, static_library;
    std::optional<std::string> shared_library;
    std::vector<std::string> sizes; // the symbolic sizes' names (int64_t arguments)
    std::vector<AotArgument> inputs, outputs;
    std::size_t workspace_bytes = 0;
};

std::vector<AotArgument> arguments(const std::vector<aot::AotArray>& arrays) {
    std::vector<AotArgument> out;
    for (const aot::AotArray& a : arrays)
        out.push_back({a.name, a.dtype, a.sizes, a.shape});
    return out;
}

// Links lib<name>.so from the archive (its objects are position-independent) and libomp, with
// the compiler that built the archive, through Python's subprocess.
std::string link_shared(const AotLibrary& lib, const std::string& compiler) {
    const fs::path so = fs::path(lib.static_library).parent_path() / ("lib" + lib.name + ".so");
    nb::list argv;
    for (const std::string& a :
         {compiler.empty() ? std::string(HEDRA_PY_CLANG) : compiler, std::string("-shared"),
          std::string("-o"), so.string(), std::string("-Wl,--whole-archive"), lib.static_library,
          std::string("-Wl,--no-whole-archive"), std::string(HEDRA_PY_LIBOMP),
          "-Wl,-rpath," + fs::path(HEDRA_PY_LIBOMP).parent_path().string()})
        argv.append(nb::str(a.c_str()));
    nb::object r = nb::module_::import_("subprocess")
                       .attr("run")(argv, "capture_output"_a = true, "text"_a = true);
    if (nb::cast<int>(r.attr("returncode")) != 0) {
        std::string line;
        for (nb::handle a : argv)
            line += (line.empty() ? "" : " ") + nb::cast<std::string>(a);
        throw Error("hedra.aot.compile_library: linking the shared library failed:\n  " + line +
                    "\n" + nb::cast<std::string>(r.attr("stderr")));
    }
    return so.string();
}

AotLibrary compile_library(const std::string& name, ArraysLike outputs, ArraysLike inputs,
                           const std::string& directory,
                           const std::vector<std::string>& output_names, const std::string& target,
                           const std::string& cpp_namespace, bool build, bool shared,
                           const std::string& march, const std::string& compiler,
                           const std::string& archiver) {
    auto arrays = [](nb::handle h, const char* what) {
        return nb::isinstance<Array>(h) ? std::vector<Array>{nb::cast<Array>(h)}
                                        : to_arrays(h, what);
    };
    aot::AotRequest request;
    request.name = name;
    request.output_names = output_names;
    for (const Array& a : arrays(outputs, "aot.compile_library outputs"))
        request.outputs.push_back(a.node());
    for (const Array& a : arrays(inputs, "aot.compile_library inputs"))
        request.placeholders.push_back(a.node());
    if (shared && !build)
        throw Error("hedra.aot.compile_library: shared=True needs build=True (the shared "
                    "library is linked from lib" +
                    name + ".a)");
    aot::AotTarget aot_target;
    aot_target.name = target;
    aot::AotProgram program = aot::lower_aot(request, aot_target);
    if (shared && program.target != "openmp")
        throw Error("hedra.aot.compile_library: shared=True is for the openmp target; the " +
                    program.target + " target's archive needs the CUDA driver at link time");

    aot::HeaderOptions header;
    header.cpp_namespace = cpp_namespace;
    header.origin = "Python (hedra.aot.compile_library)";
    header.target = program.target;
    aot::LibraryOptions options;
    options.compiler = compiler;
    options.archiver = archiver;
    options.march = march;
    options.build = build;

    AotLibrary lib;
    lib.name = program.name;
    lib.target = program.target;
    for (const fs::path& f : aot::write_aot_library(program, directory, header, options))
        lib.files.push_back(f.string());
    lib.header = (fs::path(directory) / (program.name + ".h")).string();
    if (build) lib.static_library = (fs::path(directory) / ("lib" + program.name + ".a")).string();
    for (const aot::AotSize& s : program.sizes)
        lib.sizes.push_back(s.name);
    lib.inputs = arguments(program.inputs);
    lib.outputs = arguments(program.outputs);
    lib.workspace_bytes = program.workspace_bytes;
    if (shared) {
        lib.shared_library = link_shared(lib, compiler);
        lib.files.push_back(*lib.shared_library);
    }
    return lib;
}

} // namespace

void bind_aot(nb::module_& m) {
    nb::module_ a = m.def_submodule(
        "aot", "Ahead-of-time libraries (docs/aot.md): what hedra-aot writes, from Python.");
    nb::class_<AotArgument>(a, "Argument", "An array argument of the generated function.")
        .def_ro("name", &AotArgument::name)
        .def_ro("dtype", &AotArgument::dtype)
        .def_ro("sizes", &AotArgument::sizes, "Per axis; a symbolic axis holds its maximum.")
        .def_ro("shape", &AotArgument::shape, "As the header writes it: '[batch<=64, 784]'.")
        .def("__repr__", [](const AotArgument& x) {
            return "Argument(" + x.name + ": " + std::string(dtype_name(x.dtype)) + " " + x.shape +
                   ")";
        });
    nb::class_<AotLibrary>(a, "Library",
                           "What compile_library wrote. The C function <name>_c takes the "
                           "sizes (int64_t), the inputs, the outputs (caller-allocated), a "
                           "workspace (or NULL) and the thread count (0: all), and returns 0 "
                           "or an error code <name>_error_message describes.")
        .def_ro("name", &AotLibrary::name)
        .def_ro("target", &AotLibrary::target)
        .def_ro("files", &AotLibrary::files)
        .def_ro("header", &AotLibrary::header)
        .def_ro("static_library", &AotLibrary::static_library, "'' when build=False.")
        .def_ro("shared_library", &AotLibrary::shared_library, "None unless shared=True.")
        .def_ro("sizes", &AotLibrary::sizes, "The symbolic sizes' argument names, in order.")
        .def_ro("inputs", &AotLibrary::inputs)
        .def_ro("outputs", &AotLibrary::outputs)
        .def_ro("workspace_bytes", &AotLibrary::workspace_bytes);
    a.def("compile_library", &compile_library, "name"_a, "outputs"_a, "inputs"_a, "directory"_a,
          "output_names"_a = std::vector<std::string>{}, "target"_a = "openmp",
          "namespace"_a = "hedra_aot", "build"_a = true, "shared"_a = false, "march"_a = "native",
          "compiler"_a = "", "archiver"_a = "",
          "Writes an ahead-of-time library of the program `outputs` (an array or a list) over "
          "the placeholders `inputs` (in argument order) into `directory`: <name>.h, "
          "<name>.program.cpp, <name>.cpp and lib<name>.a (build=False: no archive); "
          "shared=True also links lib<name>.so for ctypes. As `hedra-aot --graph` would, with "
          "the JIT's clang and flags: the library computes what hd.compute does.");
}

} // namespace hedra::python
