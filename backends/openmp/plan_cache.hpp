// plan_cache: lowered programs (the generated C++ source) on disk, next to the kernel objects,
// so that a second process compiling a graph it has compiled before skips isl and printing as
// well as clang: it partitions (microseconds), reads the source, and the object cache supplies
// the machine code. Without it a warm compile still spends 15-50 ms in isl.
// An entry is keyed by a digest of the code generator's version stamp (a build-time digest of
// every source that decides the generated code, so a changed generator never reuses an old
// plan), the lowering options, the host and LLVM version, and the graph's structural key
// (graph_key.hpp: exact, up to the values of the leaves, which are bound at run time).
// Entries are written atomically and checksummed (KernelCache); a corrupt one is a miss and is
// lowered again. The cache is off while HEDRA_DUMP or HEDRA_TIME_PASSES is set (they observe
// the passes, which must then run) and when the kernel cache has no directory.
#pragma once

#include <optional>
#include <string>

#include "backends/common/kernel_cache.hpp"

namespace hedra::backend {

// The digest of the code generator's sources (generated at build time: codegen_stamp.cpp).
const char* codegen_stamp();

class PlanCache {
public:
    // The process-wide plan cache, in the JIT's cache directory (files <key>.plan).
    static PlanCache& instance();

    explicit PlanCache(std::optional<std::filesystem::path> directory);

    // Whether lookups and stores happen at all: a directory, and neither HEDRA_DUMP nor
    // HEDRA_TIME_PASSES set now.
    bool enabled() const;

    // The entry key of a program: `structure` is the lowering options and the graph key.
    std::string key(const std::string& structure) const;

    // The source stored under `key`, or nothing (a miss; a rejected entry counts as corrupt).
    std::optional<std::string> load(const std::string& key);
    void store(const std::string& key, const std::string& source);

    CacheStats stats() const { return cache_.stats(); }

private:
    bool persistent_;
    KernelCache cache_;
};

} // namespace hedra::backend
