// aot_program: a program lowered ahead of time. The openmp backend's passes, options and
// printer give the same translation unit the JIT would compile; next to it, the description of
// the generated entry's buffers as a function's arguments (inputs, outputs, symbolic sizes), the
// workspace its temporaries need and the host data it embeds. hedra-aot writes a header, a
// wrapper and a static library from it (aot_files.hpp).
#pragma once

#include <array>
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

// One kernel launch of the cuda target, in order on the caller's stream.
struct AotLaunch {
    std::string function; // the module's extern "C" __global__ function
    std::array<unsigned, 3> grid{1, 1, 1}, block{1, 1, 1};
    // Per parameter: a buffer, or num_buffers + s for the scratch buffer s.
    std::vector<int> args;
};

struct AotProgram {
    std::string target = "openmp"; // or "cuda"
    std::string name;              // the function's name
    std::string entry;  // the generated entry's symbol: extern "C" void entry(void**, int)
    std::string source; // the generated translation unit
    std::vector<std::string> flags; // the clang flags the JIT compiles `source` with
    std::vector<AotSize> sizes;     // in the entry's parameter order
    std::vector<AotArray> inputs, outputs;
    std::size_t num_buffers = 0;
    // Per buffer: its offset in the workspace (64-byte aligned; cuda: 256), or -1.
    std::vector<std::int64_t> workspace_offset;
    std::size_t workspace_bytes = 0;
    // Host data the graph holds (weights saved in a graph file): buffer and bytes.
    struct Embedded {
        int buffer = -1;
        std::string bytes;
    };
    std::vector<Embedded> embedded;
    // cuda: the module's image (PTX text, or a cubin for an sm_XY architecture), its
    // architecture, the launches and the scratch buffers' workspace offsets.
    std::string image, architecture;
    bool cubin = false; // else PTX, ending in a NUL
    std::vector<AotLaunch> launches;
    std::vector<std::int64_t> scratch_offset;
};

// Which code the program becomes, and for what machine.
struct AotTarget {
    std::string name = "openmp"; // "openmp" or "cuda"
    // cuda: NVRTC's architecture ("compute_90": PTX, "sm_90": cubin; empty: $HEDRA_CUDA_ARCH,
    // else compute_90), and the multiprocessors grids are sized for (0: sched::GpuTarget's).
    std::string cuda_architecture;
    int cuda_multiprocessors = 0;
};

struct AotRequest {
    std::string name; // a C identifier
    std::vector<NodePtr> outputs;
    std::vector<std::string> output_names; // empty or one per output ("" for the default)
    std::vector<NodePtr> placeholders;     // the inputs, in argument order
};

// Lowers the request with the target backend's passes and options. Throws hedra::Error when
// the name is no C identifier, an input is not a placeholder, the outputs depend on a
// placeholder not given, a symbolic axis does not lead its array, the target is unknown, or
// (cuda) the program has symbolic sizes or hedra was built without the CUDA toolkit.
AotProgram lower_aot(const AotRequest& request, const AotTarget& target = {});

} // namespace hedra::aot
