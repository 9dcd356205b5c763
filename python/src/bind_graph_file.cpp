// Graph files (docs/graph_files.md): a lazy graph saved as JSON text, loaded back as arrays and
// placeholders, and read by hedra-dump, so a program built in Python can be dumped or replayed
// from the command line.
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "core/graph_file.hpp"
#include "hedra_python.hpp"

namespace hedra::python {

using namespace nb::literals;

namespace {

GraphTuple graph_tuple(const GraphFile& g) {
    return GraphTuple(
        nb::make_tuple(to_array_list(g.output_arrays()), to_array_list(g.placeholder_arrays())));
}

} // namespace

void bind_graph_file(nb::module_& m) {
    m.def(
        "save_graph",
        [](ArraySequence outputs, ArraySequence placeholders, bool embed_data) {
            return save_graph(to_arrays(outputs, "save_graph"),
                              to_arrays(placeholders, "save_graph"), GraphSaveOptions{embed_data});
        },
        "outputs"_a, "placeholders"_a = nb::list(), "embed_data"_a = true,
        "The graph of `outputs` as graph-file text (placeholders: the program's inputs in order).");
    m.def(
        "save_graph_file",
        [](const std::string& path, ArraySequence outputs, ArraySequence placeholders,
           bool embed_data) {
            save_graph_file(path, to_arrays(outputs, "save_graph_file"),
                            to_arrays(placeholders, "save_graph_file"),
                            GraphSaveOptions{embed_data});
        },
        "path"_a, "outputs"_a, "placeholders"_a = nb::list(), "embed_data"_a = true);
    m.def(
        "load_graph",
        [](const std::string& text, const std::string& source) {
            return graph_tuple(load_graph(text, source));
        },
        "text"_a, "source"_a = "<graph>", "(outputs, placeholders) of graph-file text.");
    m.def(
        "load_graph_file",
        [](const std::string& path) { return graph_tuple(load_graph_file(path)); }, "path"_a,
        "(outputs, placeholders) of a graph file.");
}

} // namespace hedra::python
