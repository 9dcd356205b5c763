// The openmp backend: cache lookup, lowering, JIT compilation and running (see the header).
#include "backends/openmp/openmp_backend.hpp"

#include <algorithm>
#include <cstdlib>
#include <thread>

#include "backends/common/graph_key.hpp"
#include "backends/common/host_program.hpp"
#include "backends/common/kernel_profile.hpp"
#include "backends/openmp/jit_compiler.hpp"
#include "backends/openmp/lower.hpp"
#include "backends/openmp/plan_cache.hpp"
#include "core/dump.hpp"
#include "core/error.hpp"
#include "core/symbolic.hpp"
#include "scheduler/lower.hpp"
#include "scheduler/partition.hpp"

namespace hedra::backend {

namespace {

using Entry = void (*)(void**, int);

// Added to the JIT's defaults: every value computed exactly (c_renderer.hpp), no errno.
const std::vector<std::string> kKernelFlags = {"-ffp-contract=off", "-fno-math-errno"};

} // namespace

std::int64_t openmp_min_parallel_work() {
    if (const char* env = std::getenv("HEDRA_MIN_PARALLEL_WORK")) {
        char* end = nullptr;
        long long v = std::strtoll(env, &end, 10);
        if (end != env && *end == '\0' && v >= 0) return v;
    }
    return LowerOptions{}.min_parallel_work;
}

std::vector<std::string> openmp_compile_flags() {
    std::vector<std::string> flags = JitCompiler::default_flags();
    flags.insert(flags.end(), kKernelFlags.begin(), kKernelFlags.end());
    return flags;
}

namespace {

// The generated source of `ir`: from the plan cache when `plan_key` names an entry and
// `lowered` is false (it stays so), else lowered through isl (`lowered` becomes true) and stored.
std::string program_source(const poly::ProgramIR& ir, const LowerOptions& lo,
                           const std::string& plan_key, bool& lowered) {
    PlanCache& plans = PlanCache::instance();
    if (!lowered && plans.enabled())
        if (std::optional<std::string> source = plans.load(plan_key)) return *source;
    lowered = true;
    std::string source = lower(ir, lo).source;
    plans.store(plan_key, source);
    return source;
}

// Translation units of the kernels: one per core for the in-process compiler (it compiles
// them in parallel), one for an external compiler.
int compile_units() {
    if (!JitCompiler::instance().in_process()) return 1;
    static const int cores = [] {
        unsigned hw = std::thread::hardware_concurrency();
        return static_cast<int>(std::clamp(hw, 1u, 8u));
    }();
    return cores;
}

std::shared_ptr<HostProgramCode> build_code(const poly::ProgramIR& ir,
                                            const std::vector<NodePtr>& placeholders,
                                            const std::vector<NodePtr>& leaves,
                                            const CompileOptions& options,
                                            const std::string& plan_key, bool& lowered) {
    std::shared_ptr<HostProgramCode> code = bind_host_program(ir, placeholders, leaves, "openmp");
    LowerOptions lo;
    lo.tile_sizes = options.tile_sizes;
    lo.min_parallel_work = openmp_min_parallel_work();
    lo.profile = profile_enabled();
    lo.profile_clock = profile_clock();
    lo.units = compile_units();
    lo.kernel_hooks = options.output_hooks;
    const std::vector<std::string>& flags = kKernelFlags;
    std::string source = program_source(ir, lo, plan_key, lowered);
    dump::PassTimer timer("jit");
    try {
        code->module = JitCompiler::instance().compile(source, flags);
    } catch (const Error&) {
        if (lowered) throw;
        // A cached plan that does not compile (a damaged entry) is lowered again, not trusted.
        lowered = true;
        source = program_source(ir, lo, plan_key, lowered);
        code->module = JitCompiler::instance().compile(source, flags);
    }
    code->entry = code->module->function<void(void**, int)>(lo.entry);
    code->kernel_hooks = lo.kernel_hooks;
    if (lo.profile)
        register_profile(describe_kernels(ir),
                         code->module->function<long long>(lo.entry + "_profile"), code->module);
    return code;
}

std::string options_key(const CompileOptions& options) {
    std::string s =
        "units:" + std::to_string(compile_units()) + "|" + tile_sizes_key(options.tile_sizes);
    return s + "parallel:" + std::to_string(openmp_min_parallel_work()) + "|" +
           (profile_enabled() ? "profile" + std::to_string(profile_clock()) + "|" : "") +
           (options.output_hooks ? "hooks|" : "") + donate_key(options.donate);
}

} // namespace

int openmp_thread_count(int requested) {
    if (requested > 0) return requested;
    if (const char* env = std::getenv("HEDRA_NUM_THREADS")) {
        char* end = nullptr;
        long v = std::strtol(env, &end, 10);
        if (end != env && *end == '\0' && v > 0 && v <= 4096) return static_cast<int>(v);
    }
    static const int hardware = [] { // reads /sys: once, not per call
        unsigned hw = std::thread::hardware_concurrency();
        return hw > 0 ? static_cast<int>(hw) : 1;
    }();
    return hardware;
}

std::shared_ptr<const HostProgramCode>
OpenMPBackend::code_for(const std::vector<NodePtr>& outputs,
                        const std::vector<NodePtr>& placeholders, const CompileOptions& options,
                        std::vector<NodePtr>& leaves) {
    GraphKey key = graph_key(outputs, placeholders);
    leaves = std::move(key.leaves);
    std::string text = options_key(options) + key.text;
    if (std::shared_ptr<const HostProgramCode> cached = cache_.find(text)) return cached;
    dump::CompileScope dump_scope; // HEDRA_DUMP: this compile's files (docs/dumps.md)
    dump::write_graph(outputs);
    // Timed step by step.
    poly::ProgramIR ir =
        sched::partition(outputs, placeholders, sched::partition_options(sched::Target::for_cpu()),
                         donated_placeholders(placeholders, options.donate));
    bool lowered = false;
    std::shared_ptr<const HostProgramCode> code =
        build_code(ir, placeholders, leaves, options, PlanCache::instance().key(text), lowered);
    {
        std::lock_guard<std::mutex> lock(mutex_);
        ++stats_.programs_compiled;
        stats_.programs_lowered += lowered;
    }
    return cache_.insert(std::move(text), std::move(code));
}

std::unique_ptr<Program> OpenMPBackend::compile(const std::vector<NodePtr>& outputs,
                                                const std::vector<NodePtr>& placeholders,
                                                const CompileOptions& options) {
    std::vector<NodePtr> leaves;
    auto code = code_for(outputs, placeholders, options, leaves);
    return std::make_unique<HostProgram>(std::move(code), std::move(leaves), options.num_threads,
                                         openmp_thread_count);
}

bool OpenMPBackend::compiles_symbolic_extents(const std::vector<NodePtr>& outputs,
                                              const std::vector<NodePtr>& placeholders) const {
    for (const auto* nodes : {&outputs, &placeholders})
        for (const NodePtr& n : *nodes)
            if (!symbolic_axis_leads(n->shape)) return false;
    return true;
}

std::vector<HostArray> OpenMPBackend::evaluate(const std::vector<NodePtr>& outputs,
                                               const CompileOptions& options) {
    std::vector<NodePtr> leaves;
    auto code = code_for(outputs, {}, options, leaves);
    return run_host_program(*code, {}, leaves, openmp_thread_count(options.num_threads));
}

OpenMPStats OpenMPBackend::stats() const {
    std::lock_guard<std::mutex> lock(mutex_);
    OpenMPStats s = stats_;
    s.program_cache_hits = cache_.hits();
    return s;
}

} // namespace hedra::backend
