// The cuda backend: program cache, compilation and device-resident runs (see the header).
#include "backends/cuda/cuda_backend.hpp"

#include <atomic>
#include <cstdlib>

#include "backends/common/buffer_plan.hpp"
#include "backends/common/graph_key.hpp"
#include "backends/common/kernel_profile.hpp"
#include "backends/cuda/cuda_autotune.hpp"
#include "backends/cuda/runtime/cuda_driver.hpp"
#include "backends/cuda/runtime/device_allocator.hpp"
#include "backends/cuda/runtime/device_residency.hpp"
#include "backends/cuda/runtime/nvrtc_compiler.hpp"
#include "core/dump.hpp"
#include "core/error.hpp"
#include "scheduler/partition.hpp"

namespace hedra::backend {

namespace {

// The device and everything shared by all programs; one per process, never destroyed (driver
// calls at exit are unsafe). Runs and deferred downloads are serialized by `mutex`; it is
// recursive because a run that uploads a result nobody has read yet copies it to the host first.
struct DeviceState {
    cuda::Device& device;
    cuda::Stream stream;
    cuda::DeviceAllocator allocator;
    cuda::DeviceResidency residency;
    std::recursive_mutex mutex;
    explicit DeviceState(cuda::Device& d) : device(d) {}
};

DeviceState& device_state() {
    static DeviceState* state = [] {
        cuda::Device& d = cuda::Device::instance(); // throws "no CUDA device: ..."
        d.make_current();
        return new DeviceState(d);
    }();
    return *state;
}

std::atomic<CudaImageHook> g_image_hook{nullptr};

} // namespace

struct CudaCounters {
    std::mutex mutex;
    CudaStats stats;
    void add_download() {
        std::lock_guard<std::mutex> lock(mutex);
        ++stats.downloads;
    }
};

struct CudaProgramCode {
    CudaLoweredProgram lowered;
    std::unique_ptr<cuda::Module> module;
    std::vector<void*> functions; // per launch
    std::vector<std::size_t> bytes;
    std::vector<std::vector<std::int64_t>> sizes;
    std::vector<DType> dtypes;
    std::vector<poly::BufferRole> roles;
    std::vector<BufferBinding> bindings;
    std::vector<int> outputs;
    BufferPlan plan;
    // Kept between runs (guarded by the device lock): temporaries' slots and scratch buffers.
    mutable std::vector<std::shared_ptr<cuda::DeviceBuffer>> arena, scratch;
    // HEDRA_PROFILE: per kernel (ns, runs), read by the table printed at exit; events around
    // each launch.
    std::shared_ptr<std::vector<long long>> profile;
    mutable std::vector<std::unique_ptr<cuda::Event>> events;
};

namespace {

std::shared_ptr<CudaProgramCode> build_code(DeviceState& state, const poly::ProgramIR& ir,
                                            const std::vector<NodePtr>& placeholders,
                                            const std::vector<NodePtr>& leaves,
                                            const CompileOptions& options, CudaStats& stats) {
    auto code = std::make_shared<CudaProgramCode>();
    for (const poly::Buffer& b : ir.buffers) {
        code->sizes.push_back(b.sizes);
        code->dtypes.push_back(b.dtype);
        code->roles.push_back(b.role);
        code->bytes.push_back(b.bytes());
        HEDRA_INTERNAL_CHECK(b.row_local == 0 && b.row_window == 0,
                             "cuda: row-local or windowed buffer " + b.name +
                                 " (the cuda partition fuses no rows)");
        code->bindings.push_back(binding_of(b, placeholders, leaves, "cuda"));
    }
    code->outputs = ir.outputs;
    code->plan = plan_temporaries(ir);
    CudaLowerOptions lo;
    lo.tile_sizes = options.tile_sizes;
    lo.gpu = state.device.target();
    // The code is compiled for `arch` (NVRTC's newest at or below the device's, or
    // HEDRA_CUDA_ARCH's): the mapping uses what it has (tensor cores from sm_80).
    std::string arch = cuda::default_architecture(state.device.architecture());
    if (int cc = cuda::compute_capability_of(arch); cc > 0) lo.gpu.compute_capability = cc;
    // HEDRA_CUDA_ALLOW_TF32=1: f32 contractions on tensor cores, inputs rounded to TF32.
    const char* tf32 = std::getenv("HEDRA_CUDA_ALLOW_TF32");
    lo.allow_tf32 = tf32 && std::string(tf32) == "1";
    // HEDRA_CUDA_AUTOTUNE: gpu.autotune times each contraction's candidates on this device.
    cuda::AutotuneStats tuning;
    if (lo.tile_sizes.empty() && cuda::autotune_enabled()) {
        cuda::ImageObserver observe;
        if (CudaImageHook hook = g_image_hook.load()) observe = hook;
        lo.measure = cuda::autotune_measure(ir, lo, state.device, state.allocator, state.stream,
                                            observe, tuning);
    }
    code->lowered = lower_cuda(ir, lo); // the GPU mapping passes, then "print"
    stats.tuned_kernels += tuning.kernels;
    stats.tuning_candidates += tuning.candidates;
    cuda::NvrtcImage image = [&] {
        dump::PassTimer timer("jit");
        return cuda::Nvrtc::instance().compile(code->lowered.source, arch);
    }();
    stats.images_from_disk += image.from_cache;
    if (CudaImageHook hook = g_image_hook.load()) hook(code->lowered.source, image.image);
    code->module = std::make_unique<cuda::Module>(image.image);
    for (const CudaLaunch& l : code->lowered.launches)
        code->functions.push_back(code->module->function(l.function));
    if (profile_enabled()) {
        code->profile = std::make_shared<std::vector<long long>>(2 * ir.kernels.size(), 0);
        register_profile(describe_kernels(ir), code->profile->data(), code->profile, "gpu");
    }
    return code;
}

const HostArray& leaf_array(const NodePtr& leaf) {
    if (auto memo = leaf->memo()) return *memo;
    HEDRA_INTERNAL_CHECK(leaf->kind == NodeKind::Data, "cuda: a leaf without data");
    return leaf->data;
}

class Run {
public:
    Run(DeviceState& s, const CudaProgramCode& c, CudaStats& stats,
        std::shared_ptr<CudaCounters> counters)
        : s_(s), c_(c), stats_(stats), counters_(std::move(counters)) {}

    std::vector<HostArray> operator()(const std::vector<HostArray>& inputs,
                                      const std::vector<NodePtr>& leaves) {
        s_.device.make_current();
        s_.residency.sweep();
        std::size_t n = c_.sizes.size();
        std::vector<cuda::DevicePtr> ptr(n + c_.lowered.scratch.size(), 0);
        std::vector<std::shared_ptr<cuda::DeviceBuffer>> owned(n);
        if (c_.arena.size() < c_.plan.slot_bytes.size()) c_.arena.resize(c_.plan.slot_bytes.size());
        for (std::size_t b = 0; b < n; ++b)
            ptr[b] = bind(b, inputs, leaves, owned[b]);
        if (c_.scratch.size() < c_.lowered.scratch.size()) {
            for (std::size_t k = c_.scratch.size(); k < c_.lowered.scratch.size(); ++k) {
                const ScratchBuffer& sb = c_.lowered.scratch[k];
                c_.scratch.push_back(
                    std::make_shared<cuda::DeviceBuffer>(s_.allocator, sb.bytes()));
            }
        }
        for (std::size_t k = 0; k < c_.scratch.size(); ++k)
            ptr[n + k] = c_.scratch[k]->get();
        std::vector<cuda::DevicePtr> args;
        std::size_t nl = c_.lowered.launches.size();
        if (c_.profile)
            while (c_.events.size() < nl + 1)
                c_.events.push_back(std::make_unique<cuda::Event>());
        if (c_.profile && nl > 0) c_.events[0]->record(s_.stream);
        for (std::size_t i = 0; i < nl; ++i) {
            const CudaLaunch& l = c_.lowered.launches[i];
            args.clear();
            for (int b : l.buffers)
                args.push_back(ptr.at(static_cast<std::size_t>(b)));
            cuda::launch(c_.functions[i], l.grid, l.block, s_.stream, args.data(), args.size());
            if (c_.profile) c_.events[i + 1]->record(s_.stream);
            ++stats_.launches;
        }
        if (c_.profile) record_profile();
        return download(owned);
    }

private:
    // Adds each launch's GPU time to its kernel (waits for the run: profiling is synchronous).
    void record_profile() {
        std::vector<long long>& counters = *c_.profile;
        std::vector<bool> ran(counters.size() / 2, false);
        for (std::size_t i = 0; i < c_.lowered.launches.size(); ++i) {
            auto k = static_cast<std::size_t>(c_.lowered.launches[i].kernel);
            double ms = c_.events[i + 1]->milliseconds_since(*c_.events[i]);
            counters[2 * k] += static_cast<long long>(ms * 1e6);
            if (!ran[k]) ++counters[2 * k + 1];
            ran[k] = true;
        }
    }

    cuda::DevicePtr upload(const HostArray& a, std::shared_ptr<cuda::DeviceBuffer>& keep) {
        keep = std::make_shared<cuda::DeviceBuffer>(s_.allocator, a.bytes());
        s_.stream.copy_to_device(keep->get(), a.raw(), a.bytes());
        ++stats_.uploads;
        return keep->get();
    }

    cuda::DevicePtr bind(std::size_t b, const std::vector<HostArray>& inputs,
                         const std::vector<NodePtr>& leaves,
                         std::shared_ptr<cuda::DeviceBuffer>& keep) {
        const BufferBinding& bind = c_.bindings[b];
        if (bind.kind == BufferBinding::Kind::Allocate) {
            int slot = c_.plan.slot[b];
            if (slot >= 0 && c_.roles[b] == poly::BufferRole::Temporary) {
                auto& a = c_.arena[static_cast<std::size_t>(slot)];
                if (!a)
                    a = std::make_shared<cuda::DeviceBuffer>(
                        s_.allocator, c_.plan.slot_bytes[static_cast<std::size_t>(slot)]);
                return a->get();
            }
            keep = std::make_shared<cuda::DeviceBuffer>(s_.allocator, c_.bytes[b]);
            return keep->get();
        }
        const HostArray& host = bind.kind == BufferBinding::Kind::Placeholder
                                    ? inputs.at(static_cast<std::size_t>(bind.index))
                                    : leaf_array(leaves.at(static_cast<std::size_t>(bind.index)));
        if (host.bytes() == 0) return 0;
        // A result changed on the host since it was returned is uploaded again.
        if (auto d =
                host.changed() ? nullptr : s_.residency.find_host(host.address(), host.bytes())) {
            ++stats_.resident_inputs;
            keep = d;
            return d->get();
        }
        if (bind.kind == BufferBinding::Kind::Leaf) {
            const NodePtr& node = leaves[static_cast<std::size_t>(bind.index)];
            if (auto d = s_.residency.find_node(node)) {
                ++stats_.resident_inputs;
                keep = d;
                return d->get();
            }
            cuda::DevicePtr p = upload(host, keep);
            s_.residency.add_node(node, keep);
            return p;
        }
        return upload(host, keep);
    }

    // The outputs as host arrays whose contents are copied from the device on first access
    // (DeferredContents): the run returns without waiting for its kernels, and a result that is
    // only fed back to the device (new parameters) never crosses the bus. The device copy is
    // registered for residency at once and lives as long as the host storage.
    std::vector<HostArray> download(const std::vector<std::shared_ptr<cuda::DeviceBuffer>>& dev) {
        std::vector<HostArray> results;
        std::vector<HostArray> by_buffer(c_.sizes.size());
        std::vector<bool> made(c_.sizes.size(), false);
        for (int b : c_.outputs) {
            auto ub = static_cast<std::size_t>(b);
            if (!made[ub]) {
                made[ub] = true;
                auto storage = std::make_shared<AlignedStorage>(c_.bytes[ub]);
                if (c_.bytes[ub] == 0) {
                    by_buffer[ub] = HostArray(c_.sizes[ub], c_.dtypes[ub], storage, storage->data);
                } else {
                    HEDRA_INTERNAL_CHECK(dev[ub] != nullptr,
                                         "cuda: an output without device memory");
                    auto pending = std::make_shared<DeferredContents>(
                        [state = &s_, counters = counters_, device = dev[ub], host = storage->data,
                         bytes = c_.bytes[ub]] {
                            std::lock_guard<std::recursive_mutex> lock(state->mutex);
                            state->device.make_current();
                            state->stream.copy_to_host(host, device->get(), bytes);
                            state->stream.synchronize();
                            counters->add_download();
                        });
                    by_buffer[ub] = HostArray(c_.sizes[ub], c_.dtypes[ub], storage, storage->data,
                                              std::move(pending));
                    s_.residency.add_host(storage, storage->data, dev[ub]);
                }
            }
            results.push_back(by_buffer[ub]);
        }
        return results;
    }

    DeviceState& s_;
    const CudaProgramCode& c_;
    CudaStats& stats_;
    std::shared_ptr<CudaCounters> counters_;
};

class CudaProgram : public Program {
public:
    CudaProgram(std::shared_ptr<const CudaProgramCode> code, std::vector<NodePtr> leaves,
                std::shared_ptr<CudaCounters> counters)
        : code_(std::move(code)), leaves_(std::move(leaves)), counters_(std::move(counters)) {}
    std::vector<HostArray> run(const std::vector<HostArray>& inputs) override {
        DeviceState& s = device_state();
        std::lock_guard<std::recursive_mutex> lock(s.mutex);
        CudaStats local;
        auto out = Run(s, *code_, local, counters_)(inputs, leaves_);
        std::lock_guard<std::mutex> counters_lock(counters_->mutex);
        counters_->stats.uploads += local.uploads;
        counters_->stats.resident_inputs += local.resident_inputs;
        counters_->stats.launches += local.launches;
        return out;
    }

private:
    std::shared_ptr<const CudaProgramCode> code_;
    std::vector<NodePtr> leaves_;
    std::shared_ptr<CudaCounters> counters_;
};

} // namespace

CudaBackend::CudaBackend() : counters_(std::make_shared<CudaCounters>()) {}

void set_cuda_image_hook(CudaImageHook hook) {
    g_image_hook.store(hook);
}

std::string cuda_unavailable_reason() {
    return cuda::Device::unavailable_reason();
}

std::shared_ptr<const CudaProgramCode>
CudaBackend::code_for(const std::vector<NodePtr>& outputs, const std::vector<NodePtr>& placeholders,
                      const CompileOptions& options, std::vector<NodePtr>& leaves) {
    DeviceState& state = device_state(); // first: "no CUDA device" before any other work
    GraphKey key = graph_key(outputs, placeholders);
    leaves = std::move(key.leaves);
    // (Tuned and untuned programs differ: the autotuner's switch is part of the key.)
    std::string text =
        tile_sizes_key(options.tile_sizes) + (cuda::autotune_enabled() ? "tuned;" : "") + key.text;
    if (std::shared_ptr<const CudaProgramCode> cached = cache_.find(text)) return cached;
    // Epilogues, chains of them included, are applied where each sum's element is stored
    // (backends/common/c_reduction.hpp).
    poly::ProgramIR ir =
        sched::partition(outputs, placeholders,
                         sched::partition_options(sched::Target::for_gpu(state.device.target())));
    CudaStats local;
    std::shared_ptr<const CudaProgramCode> code;
    {
        std::lock_guard<std::recursive_mutex> lock(state.mutex); // module loading: the context
        state.device.make_current();
        code = build_code(state, ir, placeholders, leaves, options, local);
    }
    {
        std::lock_guard<std::mutex> counters_lock(counters_->mutex);
        ++counters_->stats.programs_compiled;
        counters_->stats.images_from_disk += local.images_from_disk;
        counters_->stats.tuned_kernels += local.tuned_kernels;
        counters_->stats.tuning_candidates += local.tuning_candidates;
    }
    return cache_.insert(std::move(text), std::move(code));
}

std::unique_ptr<Program> CudaBackend::compile(const std::vector<NodePtr>& outputs,
                                              const std::vector<NodePtr>& placeholders,
                                              const CompileOptions& options) {
    std::vector<NodePtr> leaves;
    auto code = code_for(outputs, placeholders, options, leaves);
    return std::make_unique<CudaProgram>(std::move(code), std::move(leaves), counters_);
}

std::vector<HostArray> CudaBackend::evaluate(const std::vector<NodePtr>& outputs,
                                             const CompileOptions& options) {
    std::vector<NodePtr> leaves;
    auto code = code_for(outputs, {}, options, leaves);
    CudaProgram program(std::move(code), std::move(leaves), counters_);
    return program.run({});
}

CudaStats CudaBackend::stats() const {
    std::lock_guard<std::mutex> lock(counters_->mutex);
    CudaStats s = counters_->stats;
    s.program_cache_hits = cache_.hits();
    return s;
}

} // namespace hedra::backend
