// The on-disk cache of lowered programs (see plan_cache.hpp).
#include "backends/openmp/plan_cache.hpp"

#include "backends/openmp/jit_compiler.hpp"
#include "core/dump.hpp"
#include "scheduler/target.hpp"

namespace hedra::backend {

PlanCache& PlanCache::instance() {
    static PlanCache cache(JitCompiler::instance().cache().directory());
    return cache;
}

PlanCache::PlanCache(std::optional<std::filesystem::path> directory)
    : persistent_(directory.has_value()), cache_(std::move(directory), ".plan") {}

bool PlanCache::enabled() const {
    return persistent_ && !dump::enabled() && !dump::time_passes_enabled();
}

std::string PlanCache::key(const std::string& structure) const {
    if (!enabled()) return {};
    // JitCompiler::cache_key adds the host CPU, the LLVM and hedra versions; the source also
    // depends on the CPU target the code is written for (HEDRA_CPU_TARGET may choose another).
    return JitCompiler::instance().cache_key(std::string("plan|") + codegen_stamp() + "|" +
                                                 sched::cpu_target().name + "|" + structure,
                                             {});
}

std::optional<std::string> PlanCache::load(const std::string& key) {
    if (key.empty() || !enabled()) return std::nullopt;
    return cache_.load(key);
}

void PlanCache::store(const std::string& key, const std::string& source) {
    if (!key.empty() && enabled()) cache_.store(key, source);
}

} // namespace hedra::backend
