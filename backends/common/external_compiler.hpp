// Compiling a kernel with an external compiler ($HEDRA_CXX, e.g. /usr/bin/g++) into a shared
// object that is then dlopen'ed. Slower than the in-process JIT (a process start and a link per
// kernel); it exists to debug generated code with another compiler, its warnings and its tools.
// Note: g++ -fopenmp links libgomp, a second OpenMP runtime next to the JIT's libomp.
#pragma once

#include "backends/common/compiled_module.hpp"

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace hedra::backend {

// Runs `compiler flags... -shared -o <so> <source file>` in `work_directory` (falling back to
// the temp directory) and loads the result. Throws hedra::Error with the compiler's output and
// the path of the saved source when the compiler fails or the object cannot be loaded.
std::shared_ptr<CompiledModule>
compile_with_external_compiler(const std::string& compiler, const std::string& source,
                               const std::vector<std::string>& flags, const std::string& key,
                               const std::filesystem::path& work_directory);

} // namespace hedra::backend
