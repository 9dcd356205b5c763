// aot_files: what hedra-aot writes for a lowered program (aot_program.hpp): the header a
// consumer includes (a typed C++ function and its C ABI twin, the arguments' shapes documented),
// the wrapper that implements them over the generated entry, and the static library of both.
#pragma once

#include <string>

#include "aot/aot_program.hpp"

namespace hedra::aot {

struct HeaderOptions {
    std::string cpp_namespace = "hedra_aot"; // of the C++ function
    std::string origin;                      // what the program came from, for the banner
    std::string target = "openmp";
};

// "<name>.h": C declarations (<name>_c, <name>_workspace_bytes, <name>_error_message) and, in
// C++, the function <namespace>::<name>, which throws std::runtime_error where <name>_c fails.
std::string aot_header(const AotProgram& program, const HeaderOptions& options);

// "<name>.cpp": the C function: checks the sizes, lays out the workspace, binds the arguments
// to the entry's buffers, runs it and copies outputs that alias an input or another output.
std::string aot_wrapper(const AotProgram& program);

// The C type of an element of `t` ("float", "int64_t", "uint8_t" for bool).
const char* c_type(DType t);

// `bytes` as the elements of an unsigned char array initializer ("1,2,3,"), 24 to a line.
std::string c_bytes(const std::string& bytes);

} // namespace hedra::aot
