// hedra's in-process C++ compiler for generated kernels: clang's driver and frontend run in
// this process, LLVM generates the object, and ORC's LLJIT links it into its own JITDylib.
// This is 3-8x faster than running a compiler as a subprocess, and clang generates better
// register-tiled code than g++. Objects go through the KernelCache, so recompiling a known
// kernel costs a file read. Kernels must be self-contained (no #include: headers cost hundreds
// of milliseconds) and export their entry points as extern "C"; static initializers of
// globals are not run. OpenMP pragmas call LLVM's libomp (hedra_jit links it).
//
// Clang and LLVM headers stay inside jit_compiler.cpp; they cost ~20 s per translation unit.
#pragma once

#include "backends/common/c_renderer.hpp"
#include "backends/common/compiled_module.hpp"
#include "backends/common/kernel_cache.hpp"

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace hedra::backend {

struct JitOptions {
    // Where compiled objects are cached; none: in memory only.
    std::optional<std::filesystem::path> cache_directory;
    // Non-empty: compile with this compiler as a subprocess into a shared object (debugging).
    std::string external_compiler;
};

class JitCompiler {
public:
    // The process-wide compiler: cache in KernelCache::default_directory(), external compiler
    // from $HEDRA_CXX (read once, on first use).
    static JitCompiler& instance();

    explicit JitCompiler(JitOptions options);
    ~JitCompiler();
    JitCompiler(const JitCompiler&) = delete;
    JitCompiler& operator=(const JitCompiler&) = delete;

    // Compiles `source` with default_flags() followed by `extra_flags` (later flags win) and
    // links it. A source of several translation units (separated by kTranslationUnitMarker
    // lines, c_renderer.hpp's PrintOptions::units) compiles them in parallel, one clang per
    // core, each cached on its own, and links them into one module. Throws hedra::Error with the
    // compiler's diagnostics and the path of a saved copy of the source when compiling or linking
    // fails. Thread-safe.
    std::shared_ptr<CompiledModule> compile(const std::string& source,
                                            const std::vector<std::string>& extra_flags = {});

    // -O3 -march=native -mtune=generic -fopenmp -ffp-contract=fast (with -std=c++20 -fPIC).
    static const std::vector<std::string>& default_flags();

    // The cache key of a compilation on this host (hex SHA-256 of source, flags, host CPU name
    // and features, LLVM version and hedra version).
    std::string cache_key(const std::string& source, const std::vector<std::string>& flags) const;

    CacheStats cache_stats() const { return cache_.stats(); }
    const KernelCache& cache() const { return cache_; }
    const JitOptions& options() const { return options_; }

    struct Engine; // LLVM/ORC state, defined in jit_compiler.cpp

    // Whether compile() runs clang in this process (else $HEDRA_CXX as a subprocess, which
    // takes one translation unit).
    bool in_process() const { return options_.external_compiler.empty(); }

private:
    std::shared_ptr<CompiledModule> compile_in_process(const std::string& source,
                                                       const std::vector<std::string>& flags);
    std::shared_ptr<CompiledModule> compile_units(const std::string& source,
                                                  const std::vector<std::string>& units,
                                                  const std::vector<std::string>& flags);

    JitOptions options_;
    KernelCache cache_;
    std::shared_ptr<Engine> engine_; // shared with every CompiledModule it linked
};

} // namespace hedra::backend
