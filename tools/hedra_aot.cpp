// hedra-aot: compiles a graph file or a registered generator ahead of time into a header and a
// static library (aot/command_line.hpp, docs/aot.md). Executables of generators link this main.
#include "aot/command_line.hpp"

int main(int argc, char** argv) {
    return hedra::aot::run_aot_tool(argc, argv);
}
