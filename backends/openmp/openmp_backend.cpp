// The openmp backend: cache lookup, lowering, JIT compilation and running (see the header).
#include "backends/openmp/openmp_backend.hpp"

#include <cstdlib>
#include <thread>
#include <utility>

#include "backends/common/buffer_plan.hpp"
#include "backends/common/graph_key.hpp"
#include "backends/common/kernel_profile.hpp"
#include "backends/openmp/jit_compiler.hpp"
#include "backends/openmp/lower.hpp"
#include "backends/openmp/plan_cache.hpp"
#include "core/dump.hpp"
#include "core/error.hpp"
#include "scheduler/partition.hpp"

namespace hedra::backend {

// How one buffer of the program gets its memory at run time.
struct BufferBinding {
    enum class Kind : std::uint8_t { Allocate, Placeholder, Leaf } kind = Kind::Allocate;
    int index = 0; // placeholder position, or leaf position in GraphKey::leaves
};

struct OpenMPProgramCode {
    std::shared_ptr<CompiledModule> module;
    void (*entry)(void**, int) = nullptr;
    std::vector<std::vector<std::int64_t>> sizes; // per buffer
    std::vector<DType> dtypes;                    // per buffer
    std::vector<BufferBinding> bindings;          // per buffer
    std::vector<int> outputs;                     // buffer per output
    BufferPlan plan;                              // temporaries' arena slots
    // The arena, kept between runs; a run that finds it busy uses a private one.
    mutable std::mutex arena_mutex;
    mutable std::vector<std::unique_ptr<AlignedStorage>> arena;
    // Per result buffer, the storage of its last two results (guarded by arena_mutex). A run
    // reuses one its caller has dropped (use_count 1: only this pool holds it): fresh memory
    // costs a page fault per 4 KiB (16 MiB: ~4000 faults, several ms) on every call. Two, so
    // that a loop feeding each result back as the next input (a training step) finds one.
    mutable std::vector<std::vector<std::shared_ptr<AlignedStorage>>> result_pool;
};

namespace {

using Entry = void (*)(void**, int);

// $HEDRA_MIN_PARALLEL_WORK: kernels with fewer statement instances run sequentially.
std::int64_t min_parallel_work() {
    if (const char* env = std::getenv("HEDRA_MIN_PARALLEL_WORK")) {
        char* end = nullptr;
        long long v = std::strtoll(env, &end, 10);
        if (end != env && *end == '\0' && v >= 0) return v;
    }
    return LowerOptions{}.min_parallel_work;
}

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

std::shared_ptr<OpenMPProgramCode> build_code(const poly::ProgramIR& ir,
                                              const std::vector<NodePtr>& placeholders,
                                              const std::vector<NodePtr>& leaves,
                                              const CompileOptions& options,
                                              const std::string& plan_key, bool& lowered) {
    auto code = std::make_shared<OpenMPProgramCode>();
    for (const poly::Buffer& b : ir.buffers) {
        code->sizes.push_back(b.sizes);
        code->dtypes.push_back(b.dtype);
        BufferBinding bind;
        if (b.role == poly::BufferRole::Input) {
            bind.index = -1;
            for (std::size_t p = 0; p < placeholders.size(); ++p)
                if (placeholders[p] == b.node) bind = {BufferBinding::Kind::Placeholder, int(p)};
            for (std::size_t l = 0; l < leaves.size() && bind.index < 0; ++l)
                if (leaves[l] == b.node) bind = {BufferBinding::Kind::Leaf, int(l)};
            HEDRA_INTERNAL_CHECK(bind.index >= 0, "openmp: input buffer " + b.name +
                                                      " is neither a placeholder nor a leaf");
        }
        code->bindings.push_back(bind);
    }
    code->outputs = ir.outputs;
    code->plan = plan_temporaries(ir);
    LowerOptions lo;
    lo.tile_sizes = options.tile_sizes;
    lo.min_parallel_work = min_parallel_work();
    lo.profile = profile_enabled();
    lo.profile_clock = profile_clock();
    const std::vector<std::string> flags = {"-ffp-contract=off", "-fno-math-errno"};
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
    if (lo.profile)
        register_profile(describe_kernels(ir),
                         code->module->function<long long>(lo.entry + "_profile"), code->module);
    return code;
}

const void* leaf_data(const NodePtr& leaf) {
    if (auto memo = leaf->memo()) return memo->raw();
    HEDRA_INTERNAL_CHECK(leaf->kind == NodeKind::Data, "openmp: a leaf without data");
    return leaf->data.raw();
}

std::size_t byte_size(const std::vector<std::int64_t>& sizes, DType t) {
    std::size_t n = dtype_size(t);
    for (std::int64_t s : sizes)
        n *= static_cast<std::size_t>(s);
    return n;
}

// Memory for result buffer `b`: a pooled storage no one else holds, else a new one (pooled
// when `pooled`, i.e. this run holds arena_mutex).
std::shared_ptr<AlignedStorage> result_storage(const OpenMPProgramCode& code, std::size_t b,
                                               bool pooled) {
    std::size_t bytes = byte_size(code.sizes[b], code.dtypes[b]);
    if (!pooled) return std::make_shared<AlignedStorage>(bytes);
    if (code.result_pool.size() <= b) code.result_pool.resize(code.sizes.size());
    auto& pool = code.result_pool[b];
    for (const auto& storage : pool)
        if (storage.use_count() == 1) return storage;
    auto storage = std::make_shared<AlignedStorage>(bytes);
    if (pool.size() < 2)
        pool.push_back(storage);
    else
        pool[0] = std::exchange(pool[1], storage);
    return storage;
}

std::vector<HostArray> run_code(const OpenMPProgramCode& code, const std::vector<HostArray>& inputs,
                                const std::vector<NodePtr>& leaves, int threads) {
    std::unique_lock<std::mutex> lock(code.arena_mutex, std::try_to_lock);
    std::vector<std::unique_ptr<AlignedStorage>> private_arena;
    auto& arena = lock.owns_lock() ? code.arena : private_arena;
    if (arena.size() < code.plan.slot_bytes.size()) {
        arena.resize(code.plan.slot_bytes.size());
        for (std::size_t s = 0; s < arena.size(); ++s)
            if (!arena[s]) arena[s] = std::make_unique<AlignedStorage>(code.plan.slot_bytes[s]);
    }
    std::size_t n = code.sizes.size();
    std::vector<HostArray> owned(n);
    std::vector<void*> pointers(n, nullptr);
    for (std::size_t b = 0; b < n; ++b) {
        const BufferBinding& bind = code.bindings[b];
        switch (bind.kind) {
        case BufferBinding::Kind::Allocate:
            if (code.plan.slot[b] >= 0) {
                pointers[b] = arena[code.plan.slot[b]]->data;
            } else {
                auto storage = result_storage(code, b, lock.owns_lock());
                owned[b] = HostArray(code.sizes[b], code.dtypes[b], storage, storage->data);
                pointers[b] = storage->data;
            }
            break;
        case BufferBinding::Kind::Placeholder:
            pointers[b] = const_cast<void*>(inputs.at(bind.index).raw());
            break;
        case BufferBinding::Kind::Leaf:
            pointers[b] = const_cast<void*>(leaf_data(leaves.at(bind.index)));
            break;
        }
    }
    code.entry(pointers.data(), threads);
    std::vector<HostArray> results;
    for (int b : code.outputs)
        results.push_back(owned.at(b));
    return results;
}

std::string options_key(const CompileOptions& options) {
    std::string s = "tiles:";
    for (std::int64_t t : options.tile_sizes)
        s += std::to_string(t) + ",";
    return s + "|parallel:" + std::to_string(min_parallel_work()) + "|" +
           (profile_enabled() ? "profile" + std::to_string(profile_clock()) + "|" : "");
}

class OpenMPProgram : public Program {
public:
    OpenMPProgram(std::shared_ptr<const OpenMPProgramCode> code, std::vector<NodePtr> leaves,
                  int threads)
        : code_(std::move(code)), leaves_(std::move(leaves)), threads_(threads) {}
    std::vector<HostArray> run(const std::vector<HostArray>& inputs) override {
        return run_code(*code_, inputs, leaves_, openmp_thread_count(threads_));
    }

private:
    std::shared_ptr<const OpenMPProgramCode> code_;
    std::vector<NodePtr> leaves_;
    int threads_;
};

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

std::shared_ptr<const OpenMPProgramCode>
OpenMPBackend::code_for(const std::vector<NodePtr>& outputs,
                        const std::vector<NodePtr>& placeholders, const CompileOptions& options,
                        std::vector<NodePtr>& leaves) {
    GraphKey key = graph_key(outputs, placeholders);
    leaves = std::move(key.leaves);
    std::string text = options_key(options) + key.text;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (auto it = cache_.find(text); it != cache_.end()) {
            ++stats_.program_cache_hits;
            return it->second;
        }
    }
    dump::CompileScope dump_scope; // HEDRA_DUMP: this compile's files (docs/dumps.md)
    dump::write_graph(outputs);
    poly::ProgramIR ir = [&] {
        dump::PassTimer timer("partition");
        return sched::partition(outputs, placeholders);
    }();
    bool lowered = false;
    std::shared_ptr<const OpenMPProgramCode> code =
        build_code(ir, placeholders, leaves, options, PlanCache::instance().key(text), lowered);
    std::lock_guard<std::mutex> lock(mutex_);
    ++stats_.programs_compiled;
    stats_.programs_lowered += lowered;
    return cache_.emplace(std::move(text), std::move(code)).first->second;
}

std::unique_ptr<Program> OpenMPBackend::compile(const std::vector<NodePtr>& outputs,
                                                const std::vector<NodePtr>& placeholders,
                                                const CompileOptions& options) {
    std::vector<NodePtr> leaves;
    auto code = code_for(outputs, placeholders, options, leaves);
    return std::make_unique<OpenMPProgram>(std::move(code), std::move(leaves), options.num_threads);
}

std::vector<HostArray> OpenMPBackend::evaluate(const std::vector<NodePtr>& outputs,
                                               const CompileOptions& options) {
    std::vector<NodePtr> leaves;
    auto code = code_for(outputs, {}, options, leaves);
    return run_code(*code, {}, leaves, openmp_thread_count(options.num_threads));
}

OpenMPStats OpenMPBackend::stats() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return stats_;
}

} // namespace hedra::backend
