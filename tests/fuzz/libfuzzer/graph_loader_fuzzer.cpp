// libFuzzer target for the graph-file loader: any input must load as a valid graph (which the
// reference interpreter then evaluates, when small) or throw hedra::Error. Built with
// -DHEDRA_LIBFUZZER=ON by clang (see tests/fuzz/CMakeLists.txt); run for example as
//   build-fuzz/tests/fuzz/hedra-graph-fuzzer -max_total_time=600 corpus/
// Seed the corpus with saved graphs: `hedra-fuzz --save-graphs DIR` writes some.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "backends/reference/interpreter.hpp"
#include "core/graph_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace hedra;
    try {
        GraphFile g = load_graph(std::string_view(reinterpret_cast<const char*>(data), size),
                                 "libfuzzer input");
        if (!g.placeholders.empty()) return 0;
        std::int64_t elements = 0;
        for (const NodePtr& n : topological_order(g.outputs))
            elements += n->shape.size();
        if (elements <= 100000) backend::interpret(g.outputs, {}, {});
    } catch (const Error&) {
    }
    return 0;
}
