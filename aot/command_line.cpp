// hedra-aot's flags and their handling (command_line.hpp).
#include "aot/command_line.hpp"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "aot/aot_library.hpp"
#include "aot/generator.hpp"
#include "core/error.hpp"
#include "core/graph_file.hpp"

namespace hedra::aot {
namespace {

struct Flags {
    std::string graph, generator, name, output_dir, target = "openmp", cuda_arch,
                                                    cpp_namespace = "hedra_aot";
    std::vector<std::string> params;
    bool list = false, no_library = false;
    int cuda_multiprocessors = 0;
    LibraryOptions library;
};

const char* kDescription =
    "hedra-aot: compiles a hedra program ahead of time into a header, its generated source and a\n"
    "static library (lib<name>.a) that needs no LLVM, clang, isl or hedra at run time. The\n"
    "program comes from a graph file (--graph) or, in an executable of generators linked with\n"
    "hedra::aot_main, from a generator registered with HEDRA_AOT_GENERATOR (--generator).\n"
    "Writes <name>.h, <name>.program.cpp (what the JIT would compile), <name>.cpp (the C\n"
    "function) and lib<name>.a into --output-dir. See docs/aot.md.\n";

std::map<std::string, std::string> parse_params(const std::vector<std::string>& items) {
    std::map<std::string, std::string> out;
    for (const std::string& item : items) {
        const std::size_t eq = item.find('=');
        if (eq == std::string::npos || eq == 0)
            throw Error("hedra-aot: --param '" + item + "' is not of the form key=value");
        out[item.substr(0, eq)] = item.substr(eq + 1);
    }
    return out;
}

std::string known_generators() {
    std::string s;
    for (const auto& [name, f] : generators())
        s += (s.empty() ? "" : ", ") + name;
    return s.empty() ? "none: this executable has no generators; use --graph" : s;
}

AotRequest from_generator(const Flags& f) {
    auto it = generators().find(f.generator);
    if (it == generators().end())
        throw Error("hedra-aot: no generator '" + f.generator + "' (known: " + known_generators() +
                    ")");
    Generated g;
    try {
        g = it->second(GeneratorParams(parse_params(f.params)));
    } catch (const std::exception& e) {
        throw Error("hedra-aot: the generator '" + f.generator + "' failed: " + e.what());
    }
    AotRequest r{f.name.empty() ? f.generator : f.name, {}, g.output_names, {}};
    for (const Array& a : g.outputs) {
        if (!a.valid())
            throw Error("hedra-aot: the generator '" + f.generator + "' returned an empty output");
        r.outputs.push_back(a.node());
    }
    for (const Array& a : g.inputs) {
        if (!a.valid())
            throw Error("hedra-aot: the generator '" + f.generator + "' returned an empty input");
        r.placeholders.push_back(a.node());
    }
    return r;
}

AotRequest from_graph(const Flags& f) {
    GraphFile g;
    try {
        g = load_graph_file(f.graph);
    } catch (const Error& e) {
        throw Error(std::string("hedra-aot: cannot load the graph file: ") + e.what());
    }
    std::string name = f.name.empty() ? std::filesystem::path(f.graph).stem().string() : f.name;
    return {name, g.outputs, {}, g.placeholders};
}

int build(const Flags& f) {
    if (f.list) {
        for (const auto& [name, function] : generators())
            std::printf("%s\n", name.c_str());
        return 0;
    }
    if (f.target != "openmp" && f.target != "cuda") {
        std::fprintf(stderr, "hedra-aot: unknown target '%s' (known: openmp, cuda)\n",
                     f.target.c_str());
        return 1;
    }
    if (f.graph.empty() == f.generator.empty()) {
        std::fprintf(stderr, "hedra-aot: give exactly one of --graph FILE and --generator NAME "
                             "(see hedra-aot --help)\n");
        return 2;
    }
    if (f.output_dir.empty()) {
        std::fprintf(stderr, "hedra-aot: --output-dir is required (see hedra-aot --help)\n");
        return 2;
    }
    if (!f.params.empty() && !f.graph.empty())
        throw Error("hedra-aot: --param applies to generators, not to graph files");
    AotRequest request = f.graph.empty() ? from_generator(f) : from_graph(f);
    AotProgram program =
        lower_aot(request, AotTarget{f.target, f.cuda_arch, f.cuda_multiprocessors});
    HeaderOptions header{f.cpp_namespace, f.graph.empty() ? "generator " + f.generator : f.graph,
                         f.target};
    LibraryOptions library = f.library;
    library.build = !f.no_library;
    for (const auto& path : write_aot_library(program, f.output_dir, header, library))
        std::printf("%s\n", path.string().c_str());
    return 0;
}

} // namespace

int run_aot_tool(int argc, char** argv) {
    Flags f;
    CLI::App app{kDescription, "hedra-aot"};
    app.add_option("--graph", f.graph, "a graph file (docs/graph_files.md) to compile");
    app.add_option("--generator", f.generator,
                   "a generator registered in this executable (HEDRA_AOT_GENERATOR) to compile");
    app.add_option("--param", f.params,
                   "key=value for the generator's GeneratorParams (repeatable)");
    app.add_flag("--list-generators", f.list, "print the registered generators' names and exit");
    app.add_option("--name", f.name,
                   "the function's name, a C identifier (default: the generator's name, or the "
                   "graph file's stem); also names the files and lib<name>.a");
    app.add_option("-o,--output-dir", f.output_dir, "the folder to write the files into");
    app.add_option("--target", f.target,
                   "the code generator: openmp (the default), or cuda (kernels compiled by NVRTC "
                   "and embedded, launched through the driver API; static sizes only)");
    app.add_option("--cuda-arch", f.cuda_arch,
                   "cuda: NVRTC's architecture, compute_XY (PTX, JIT-compiled by the driver on "
                   "any newer GPU) or sm_XY (a cubin for that GPU); default: $HEDRA_CUDA_ARCH, "
                   "else compute_90");
    app.add_option(
        "--cuda-multiprocessors", f.cuda_multiprocessors,
        "cuda: the GPU's multiprocessor count, which sizes grids and split "
        "reductions as the cuda backend does from its device (default: 132, an H100/H200)");
    app.add_option("--namespace", f.cpp_namespace,
                   "the C++ function's namespace (default: hedra_aot)");
    app.add_flag("--no-library", f.no_library,
                 "write the header and sources only, and compile nothing");
    app.add_option("--compiler", f.library.compiler,
                   "the C++ compiler for the library (default: the clang the JIT runs in "
                   "process; another one need not give the JIT's results bit for bit)");
    app.add_option("--archiver", f.library.archiver,
                   "the archiver (default: llvm-ar next to that clang)");
    app.add_option(
        "--march", f.library.march,
        "the CPU the library's code is for, as clang's -march (default: native, "
        "as the JIT; HEDRA_CPU_TARGET=avx2|avx512 sets the vector width it is written for)");
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        return app.exit(e) == 0 ? 0 : 2; // --help, or a usage error
    }
    try {
        return build(f);
    } catch (const Error& e) {
        const std::string what = e.what();
        std::fprintf(stderr, "%s%s\n",
                     what.rfind("hedra-aot", 0) == 0 ? "" : "hedra-aot: ", what.c_str());
        return 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "hedra-aot: %s\n", e.what());
        return 1;
    }
}

} // namespace hedra::aot
