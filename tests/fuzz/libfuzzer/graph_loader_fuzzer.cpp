// libFuzzer target for the graph-file loader: any input must load as a valid graph (which the
// reference interpreter then evaluates, when small) or throw hedra::Error; a graph that loads
// must save to a file that loads back and saves to the same bytes. Built with
// -DHEDRA_LIBFUZZER=ON by clang (see tests/fuzz/CMakeLists.txt); run for example as
//   build-fuzz/tests/fuzz/hedra-graph-fuzzer -max_total_time=600 corpus/
// Seed the corpus with saved graphs: `hedra-fuzz --save-graphs DIR` writes some.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "backends/reference/interpreter.hpp"
#include "core/graph_file.hpp"

namespace {

// A graph that loaded must save to a file that loads back (same ids: the same nodes) and saves
// to the same bytes.
void check_round_trip(const hedra::GraphFile& g) {
    using namespace hedra;
    std::string saved = save_graph(g.outputs), again;
    try {
        GraphLoadOptions same_ids;
        same_ids.keep_ids = true;
        again = save_graph(load_graph(saved, "saved input", same_ids).outputs);
    } catch (const Error& e) {
        again = std::string("hedra::Error: ") + e.what();
    }
    if (again == saved) return;
    std::fprintf(stderr, "graph file round trip differs:\n%s\n---\n%s\n", saved.c_str(),
                 again.c_str());
    std::abort();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace hedra;
    try {
        GraphFile g = load_graph(std::string_view(reinterpret_cast<const char*>(data), size),
                                 "libfuzzer input");
        check_round_trip(g);
        if (!g.placeholders.empty()) return 0;
        std::int64_t elements = 0;
        for (const NodePtr& n : topological_order(g.outputs))
            elements += n->shape.size();
        if (elements <= 100000) backend::interpret(g.outputs, {}, {});
    } catch (const Error&) {
    }
    return 0;
}
