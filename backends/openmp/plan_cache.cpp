// The on-disk cache of lowered programs (see plan_cache.hpp).
#include "backends/openmp/plan_cache.hpp"

#include "backends/openmp/jit_compiler.hpp"
#include "core/dump.hpp"

namespace hedra::backend {

PlanCache& PlanCache::instance() {
    static PlanCache cache(JitCompiler::instance().cache().directory());
    return cache;
}

PlanCache::PlanCache(std::optional<std::filesystem::path> directory)
    : enabled_(directory.has_value() && !dump::enabled()), cache_(std::move(directory), ".plan") {}

std::string PlanCache::key(const std::string& structure) const {
    if (!enabled_) return {};
    // JitCompiler::cache_key adds the host CPU, the LLVM and hedra versions.
    return JitCompiler::instance().cache_key(
        std::string("plan|") + codegen_stamp() + "|" + structure, {});
}

std::optional<std::string> PlanCache::load(const std::string& key) {
    if (!enabled_) return std::nullopt;
    return cache_.load(key);
}

void PlanCache::store(const std::string& key, const std::string& source) {
    if (enabled_) cache_.store(key, source);
}

} // namespace hedra::backend
