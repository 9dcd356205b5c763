// aot_library: hedra-aot's output on disk. The generated program is compiled by the JIT's own
// clang with the JIT's flags (openmp_compile_flags), so that the library computes what the JIT
// computes, bit for bit; the wrapper by the same clang; both archived into lib<name>.a.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "aot/aot_files.hpp"
#include "aot/aot_program.hpp"

namespace hedra::aot {

struct LibraryOptions {
    std::string compiler;         // empty: the clang the JIT runs in process (same version)
    std::string archiver;         // empty: that clang's llvm-ar
    std::string march = "native"; // -march of the program (the JIT's: native)
    bool build = true;            // false: write the header and sources only
};

// The files written, in order: <name>.h, <name>.program.cpp, <name>.cpp and lib<name>.a.
// Throws hedra::Error naming the file or the command (with its output) that failed.
std::vector<std::filesystem::path> write_aot_library(const AotProgram& program,
                                                     const std::filesystem::path& directory,
                                                     const HeaderOptions& header,
                                                     const LibraryOptions& options);

} // namespace hedra::aot
