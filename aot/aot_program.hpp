// aot_program: a program lowered ahead of time. The openmp backend's passes, options and
// printer give the same translation unit the JIT would compile; next to it, the description of
// the generated entry's buffers as a function's arguments (inputs, outputs, symbolic sizes), the
// workspace its temporaries need and the host data it embeds. hedra-aot writes a header, a
// wrapper and a static library from it (aot_files.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/dtype.hpp"
#include "core/node.hpp"

namespace hedra::aot {

// A symbolic extent (`dynamic(name, max)`): an integer argument 1 <= value <= max.
struct AotSize {
    std::string name; // a C identifier
    std::int64_t max = 0;
};

// One array argument: dense, row-major, 0-based, its symbolic axes at the call's values.
struct AotArray {
    std::string name; // a C identifier
    DType dtype = DType::F32;
    std::vector<std::int64_t> sizes; // per axis; a symbolic axis holds its maximum
    std::vector<int> size_args;      // per axis: the AotSize it takes, or -1
    std::string shape;               // as the graph says it: "[batch<=64, 784]"
    int buffer = -1;                 // the generated entry's buffer
};

struct AotProgram {
    std::string name;   // the function's name
    std::string entry;  // the generated entry's symbol: extern "C" void entry(void**, int)
    std::string source; // the generated translation unit
    std::vector<std::string> flags; // the clang flags the JIT compiles `source` with
    std::vector<AotSize> sizes;     // in the entry's parameter order
    std::vector<AotArray> inputs, outputs;
    std::size_t num_buffers = 0;
    // Per buffer: its offset in the workspace (64-byte aligned), or -1.
    std::vector<std::int64_t> workspace_offset;
    std::size_t workspace_bytes = 0;
    // Host data the graph holds (weights saved in a graph file): buffer and bytes.
    struct Embedded {
        int buffer = -1;
        std::string bytes;
    };
    std::vector<Embedded> embedded;
};

struct AotRequest {
    std::string name; // a C identifier
    std::vector<NodePtr> outputs;
    std::vector<std::string> output_names; // empty or one per output ("" for the default)
    std::vector<NodePtr> placeholders;     // the inputs, in argument order
};

// Lowers the request with the openmp backend's passes and options. Throws hedra::Error when
// the name is no C identifier, an input is not a placeholder, the outputs depend on a
// placeholder not given, or a symbolic axis does not lead its array.
AotProgram lower_aot(const AotRequest& request);

} // namespace hedra::aot
