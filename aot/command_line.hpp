// command_line: hedra-aot's command line (`hedra-aot --help`), shared by the tool and by every
// executable of generators (generator.hpp), whose main it is too.
#pragma once

namespace hedra::aot {

// Parses the flags, builds the program (a graph file or a registered generator), writes the
// library and returns the exit status: 0, 1 for bad input (a message on stderr), 2 for usage.
int run_aot_tool(int argc, char** argv);

} // namespace hedra::aot
