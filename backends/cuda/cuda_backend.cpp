// The cuda backend: program cache, compilation and device-resident runs (see the header).
#include "backends/cuda/cuda_backend.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <functional>

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

// One run's results by buffer (outputs only), kept until the program's next run: which of its
// inputs are results fed back, which results the host read, and where their device copies are.
struct RunRecord {
    bool valid = false;
    bool graphed = false; // made by a graph launch
    std::vector<std::vector<std::int64_t>> input_sizes;
    std::vector<const void*> address;
    std::vector<std::shared_ptr<cuda::DeviceBuffer>> device;
    std::vector<std::shared_ptr<DeferredContents>> pending; // done(): the host read the result
    std::vector<std::weak_ptr<void>> owner;
    // Per buffer bound to an input not fed back: its device copy, if it had one.
    std::vector<std::shared_ptr<cuda::DeviceBuffer>> resident;
    void reset(std::size_t buffers, const std::vector<HostArray>& inputs) {
        valid = true;
        graphed = false;
        input_sizes.clear();
        for (const HostArray& a : inputs)
            input_sizes.push_back(a.sizes());
        address.assign(buffers, nullptr);
        device.assign(buffers, nullptr);
        pending.assign(buffers, nullptr);
        owner.assign(buffers, {});
    }
};

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
                                      const std::vector<NodePtr>& leaves,
                                      RunRecord* record = nullptr) {
        s_.device.make_current();
        s_.residency.sweep();
        std::size_t n = c_.sizes.size();
        std::vector<cuda::DevicePtr> ptr(n + c_.lowered.scratch.size(), 0);
        std::vector<std::shared_ptr<cuda::DeviceBuffer>> owned(n);
        for (std::size_t b = 0; b < n; ++b)
            ptr[b] = bind(b, inputs, leaves, owned[b]);
        std::vector<cuda::DevicePtr> sp = scratch();
        std::copy(sp.begin(), sp.end(), ptr.begin() + static_cast<long>(n));
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
        if (record) record->reset(n, inputs);
        return download(owned, record);
    }

    // The device address of buffer `b` for this run: the arena's slot of a temporary, new memory
    // for an output (kept alive by `keep`), the device copy of an input or a leaf (uploaded now
    // unless one is resident).
    cuda::DevicePtr bind(std::size_t b, const std::vector<HostArray>& inputs,
                         const std::vector<NodePtr>& leaves,
                         std::shared_ptr<cuda::DeviceBuffer>& keep) {
        const BufferBinding& bind = c_.bindings[b];
        if (bind.kind == BufferBinding::Kind::Allocate) {
            if (cuda::DevicePtr slot = arena_slot(b)) return slot;
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

    // The arena's slot of temporary `b` (allocated on first use, then kept), or 0 when `b` has
    // none.
    cuda::DevicePtr arena_slot(std::size_t b) {
        int slot = c_.plan.slot[b];
        if (slot < 0 || c_.roles[b] != poly::BufferRole::Temporary) return 0;
        if (c_.arena.size() < c_.plan.slot_bytes.size()) c_.arena.resize(c_.plan.slot_bytes.size());
        auto& a = c_.arena[static_cast<std::size_t>(slot)];
        if (!a)
            a = std::make_shared<cuda::DeviceBuffer>(
                s_.allocator, c_.plan.slot_bytes[static_cast<std::size_t>(slot)]);
        return a->get();
    }

    // The scratch buffers' addresses (allocated on first use, then kept).
    std::vector<cuda::DevicePtr> scratch() {
        for (std::size_t k = c_.scratch.size(); k < c_.lowered.scratch.size(); ++k)
            c_.scratch.push_back(
                std::make_shared<cuda::DeviceBuffer>(s_.allocator, c_.lowered.scratch[k].bytes()));
        std::vector<cuda::DevicePtr> out;
        for (const auto& sb : c_.scratch)
            out.push_back(sb->get());
        return out;
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

    // The outputs as host arrays whose contents are copied from the device on first access
    // (DeferredContents): the run returns without waiting for its kernels, and a result that is
    // only fed back to the device (new parameters) never crosses the bus. The device copy is
    // registered for residency at once and lives as long as the host storage.
    std::vector<HostArray> download(const std::vector<std::shared_ptr<cuda::DeviceBuffer>>& dev,
                                    RunRecord* record) {
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
                    if (record) {
                        record->address[ub] = storage->data;
                        record->device[ub] = dev[ub];
                        record->pending[ub] = pending;
                        record->owner[ub] = storage;
                    }
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

// Whether compiled programs may be replayed as CUDA graphs: $HEDRA_CUDA_GRAPHS (default 1; 0
// makes every run launch its kernels one by one) and a driver with the graph entry points.
bool graphs_enabled() {
    const char* env = std::getenv("HEDRA_CUDA_GRAPHS");
    if (env && std::string(env) == "0") return false;
    return cuda::Graph::available();
}

// Whether a graph can own the program's outputs: each has memory of its own (none is an input, a
// leaf or a slot of the shared arena). Profiled programs time each launch and keep to them.
bool graphable(const CudaProgramCode& c) {
    if (c.lowered.launches.empty() || c.profile) return false;
    for (int b : c.outputs) {
        auto ub = static_cast<std::size_t>(b);
        if (c.bindings[ub].kind != BufferBinding::Kind::Allocate) return false;
        if (c.plan.slot[ub] >= 0 && c.roles[ub] == poly::BufferRole::Temporary) return false;
    }
    return true;
}

// Per buffer bound to an input: the output buffer whose result of the previous run the input is
// (-1: none, or a result changed on the host since). A result still alive owns its memory, so an
// input at its address is that result; a dropped one's memory may hold a new array by now.
std::vector<int> fed_outputs(const CudaProgramCode& c, const std::vector<HostArray>& inputs,
                             const RunRecord& last) {
    std::vector<int> feed(c.sizes.size(), -1);
    if (!last.valid) return feed;
    for (std::size_t b = 0; b < c.sizes.size(); ++b) {
        const BufferBinding& bind = c.bindings[b];
        if (bind.kind != BufferBinding::Kind::Placeholder) continue;
        const HostArray& host = inputs.at(static_cast<std::size_t>(bind.index));
        if (host.bytes() == 0 || host.changed()) continue;
        for (int o : c.outputs) {
            auto uo = static_cast<std::size_t>(o);
            if (last.address[uo] == host.address() && !last.owner[uo].expired() &&
                c.sizes[uo] == c.sizes[b] && c.dtypes[uo] == c.dtypes[b]) {
                feed[b] = o;
                break;
            }
        }
    }
    return feed;
}

// The device copy of an input that has one (a result of another program, or of this one's
// earlier runs), else null.
std::shared_ptr<cuda::DeviceBuffer> resident_input(DeviceState& s, const HostArray& host) {
    if (host.bytes() == 0 || host.changed()) return nullptr;
    return s.residency.find_host(host.address(), host.bytes());
}

// Per buffer bound to an input not fed back: its device copy, if it has one.
std::vector<std::shared_ptr<cuda::DeviceBuffer>>
resident_inputs(DeviceState& s, const CudaProgramCode& c, const std::vector<HostArray>& inputs,
                const std::vector<int>& feed) {
    std::vector<std::shared_ptr<cuda::DeviceBuffer>> out(c.sizes.size());
    for (std::size_t b = 0; b < c.sizes.size(); ++b) {
        const BufferBinding& bind = c.bindings[b];
        if (bind.kind == BufferBinding::Kind::Placeholder && feed[b] < 0)
            out[b] = resident_input(s, inputs.at(static_cast<std::size_t>(bind.index)));
    }
    return out;
}

std::vector<std::vector<std::int64_t>> sizes_of(const std::vector<HostArray>& inputs) {
    std::vector<std::vector<std::int64_t>> sizes;
    for (const HostArray& a : inputs)
        sizes.push_back(a.sizes());
    return sizes;
}

// A program's launches captured as CUDA graphs and replayed, for runs that repeat the run before
// them: the same input sizes, the same inputs fed back from its results (parameters, optimizer
// state), the others the same device arrays as then (a batch made on the device) or host arrays
// (the batch, the learning rate). Every output has two
// device buffers, sets 0 and 1: the graph of parity p reads its fed inputs from set p and writes
// the outputs into set 1-p, so the next run, of the other parity, finds its fed inputs where
// they are and nothing is copied on the device (two graphs, each captured on first use). The
// other inputs are copied by the host into pinned staging and by the graph into the program's
// device buffers; the outputs that the host read after the run before the first capture (the
// loss) are copied by the graph into pinned staging, the others stay on the device until read,
// as without graphs. Staging is per parity too. Set 0 starts as the outputs of that run, so the
// parameters it returned stay where they are. A set is overwritten two runs after it was
// written: the results living there that are still alive are copied to the host first and
// their device copies forgotten. The arena and the scratch buffers are the program's already.
class GraphReplay {
public:
    GraphReplay(Run& run, DeviceState& s, const CudaProgramCode& c,
                const std::vector<HostArray>& inputs, const std::vector<NodePtr>& leaves,
                const RunRecord& last, std::vector<int> feed)
        : s_(s), c_(c), feed_(std::move(feed)), input_sizes_(last.input_sizes) {
        const std::size_t n = c.sizes.size();
        for (int p = 0; p < 2; ++p) {
            set_[p].assign(n, nullptr);
            stage_in_[p].assign(n, nullptr);
            stage_out_[p].assign(n, nullptr);
            ptr_[p].assign(n, 0);
            done_[p] = std::make_shared<cuda::Event>();
        }
        device_in_.assign(n, nullptr);
        resident_.assign(n, nullptr);
        leaf_.assign(n, nullptr);
        download_.assign(n, false);
        for (int o : c.outputs) {
            auto uo = static_cast<std::size_t>(o);
            download_[uo] = last.pending[uo] && last.pending[uo]->done();
        }
        for (int o : feed_)
            if (o >= 0) download_[static_cast<std::size_t>(o)] = false;
        for (std::size_t b = 0; b < n; ++b) {
            const std::size_t bytes = c.bytes[b];
            if (bytes == 0) continue;
            const BufferBinding& bind = c.bindings[b];
            if (bind.kind == BufferBinding::Kind::Allocate) {
                if (cuda::DevicePtr slot = run.arena_slot(b)) {
                    ptr_[0][b] = ptr_[1][b] = slot;
                    continue;
                }
                set_[0][b] = last.device[b]
                                 ? last.device[b]
                                 : std::make_shared<cuda::DeviceBuffer>(s.allocator, bytes);
                set_[1][b] = std::make_shared<cuda::DeviceBuffer>(s.allocator, bytes);
                ptr_[0][b] = set_[1][b]->get();
                ptr_[1][b] = set_[0][b]->get();
                if (download_[b])
                    for (int p = 0; p < 2; ++p)
                        stage_out_[p][b] = std::make_shared<cuda::PinnedBuffer>(bytes);
            } else if (bind.kind == BufferBinding::Kind::Placeholder) {
                if (feed_[b] >= 0) continue; // below, once every output has its sets
                const HostArray& host = inputs.at(static_cast<std::size_t>(bind.index));
                if ((resident_[b] = resident_input(s, host))) {
                    ptr_[0][b] = ptr_[1][b] = resident_[b]->get();
                    continue;
                }
                device_in_[b] = std::make_shared<cuda::DeviceBuffer>(s.allocator, bytes);
                ptr_[0][b] = ptr_[1][b] = device_in_[b]->get();
                for (int p = 0; p < 2; ++p)
                    stage_in_[p][b] = std::make_shared<cuda::PinnedBuffer>(bytes);
            } else {
                ptr_[0][b] = ptr_[1][b] = run.bind(b, inputs, leaves, leaf_[b]);
            }
        }
        for (std::size_t b = 0; b < n; ++b)
            if (feed_[b] >= 0)
                for (int p = 0; p < 2; ++p)
                    ptr_[p][b] = set_[p][static_cast<std::size_t>(feed_[b])]->get();
        scratch_ = run.scratch();
        for (int o : c.outputs) {
            auto uo = static_cast<std::size_t>(o);
            if (last.pending[uo])
                written_[0].push_back({last.address[uo], last.owner[uo], last.pending[uo]});
        }
    }

    // A launch may still read the staging or write the sets: it finishes before they go (freeing
    // pinned memory does not wait for the device). A failed wait surfaces at the next call.
    ~GraphReplay() {
        if (!cuda::driver_alive()) return;
        for (int p = 0; p < 2; ++p) {
            try {
                if (launched_[p]) done_[p]->synchronize();
            } catch (const Error&) {
            }
        }
    }
    GraphReplay(const GraphReplay&) = delete;
    GraphReplay& operator=(const GraphReplay&) = delete;

    // Whether this run repeats the previous one, a launch of these graphs, as they need.
    bool matches(const std::vector<HostArray>& inputs, const std::vector<NodePtr>& leaves,
                 const RunRecord& last, const std::vector<int>& feed) const {
        if (!last.valid || !last.graphed || feed != feed_ || sizes_of(inputs) != input_sizes_)
            return false;
        for (std::size_t b = 0; b < c_.sizes.size(); ++b) {
            const BufferBinding& bind = c_.bindings[b];
            if (bind.kind != BufferBinding::Kind::Placeholder || feed_[b] >= 0) continue;
            const HostArray& host = inputs.at(static_cast<std::size_t>(bind.index));
            if (resident_input(s_, host) != resident_[b]) return false;
        }
        for (std::size_t b = 0; b < leaf_.size(); ++b) {
            if (!leaf_[b]) continue;
            const NodePtr& node = leaves.at(static_cast<std::size_t>(c_.bindings[b].index));
            const HostArray& host = leaf_array(node);
            std::shared_ptr<cuda::DeviceBuffer> now =
                host.changed() ? nullptr : s_.residency.find_host(host.address(), host.bytes());
            if (!now) now = s_.residency.find_node(node);
            if (now != leaf_[b]) return false;
        }
        return true;
    }

    // The results that the next launch overwrites and that are still alive, copied to the host.
    // Called without the device lock: a reader may be copying one of them at the same time.
    void copy_back_overwritten() {
        for (const Written& e : written_[1 - next_])
            if (!e.owner.expired())
                if (auto pending = e.pending.lock()) pending->wait();
    }

    std::vector<HostArray> run(const std::vector<HostArray>& inputs, RunRecord& last,
                               CudaStats& stats, const std::shared_ptr<CudaCounters>& counters) {
        const int p = next_, w = 1 - p;
        for (const Written& e : written_[w])
            if (!e.owner.expired()) s_.residency.erase_host(e.address);
        written_[w].clear();
        if (launched_[p]) done_[p]->synchronize(); // its staging is free again
        for (std::size_t b = 0; b < c_.sizes.size(); ++b) {
            const BufferBinding& bind = c_.bindings[b];
            if (bind.kind != BufferBinding::Kind::Placeholder || c_.bytes[b] == 0) continue;
            if (feed_[b] >= 0 || resident_[b]) {
                ++stats.resident_inputs;
                continue;
            }
            const HostArray& host = inputs.at(static_cast<std::size_t>(bind.index));
            std::memcpy(stage_in_[p][b]->get(), host.raw(), c_.bytes[b]);
            ++stats.uploads;
        }
        if (!graph_[p]) {
            graph_[p] = std::make_unique<cuda::Graph>(s_.stream, [&] { enqueue(p); });
            ++stats.graphs_captured;
        }
        graph_[p]->launch(s_.stream);
        done_[p]->record(s_.stream);
        launched_[p] = true;
        ++stats.graph_launches;
        stats.launches += c_.lowered.launches.size();
        for (const auto& staged : stage_out_[p])
            stats.downloads += staged ? 1 : 0;
        next_ = w;
        return results(p, inputs, last, counters);
    }

private:
    struct Written {
        const void* address;
        std::weak_ptr<void> owner;
        std::weak_ptr<DeferredContents> pending;
    };

    // What the graph of parity p does: the host inputs' uploads from staging, the launches, the
    // downloads of the outputs read on the host into staging.
    void enqueue(int p) {
        const int w = 1 - p;
        for (std::size_t b = 0; b < c_.sizes.size(); ++b)
            if (stage_in_[p][b])
                s_.stream.copy_to_device(device_in_[b]->get(), stage_in_[p][b]->get(), c_.bytes[b]);
        std::vector<cuda::DevicePtr> args;
        const std::size_t n = c_.sizes.size();
        for (std::size_t i = 0; i < c_.lowered.launches.size(); ++i) {
            const CudaLaunch& l = c_.lowered.launches[i];
            args.clear();
            for (int b : l.buffers) {
                auto ub = static_cast<std::size_t>(b);
                args.push_back(ub < n ? ptr_[p][ub] : scratch_.at(ub - n));
            }
            cuda::launch(c_.functions[i], l.grid, l.block, s_.stream, args.data(), args.size());
        }
        for (std::size_t b = 0; b < n; ++b)
            if (stage_out_[p][b])
                s_.stream.copy_to_host(stage_out_[p][b]->get(), set_[w][b]->get(), c_.bytes[b]);
    }

    // The outputs of the launch of parity p: in set 1-p, or staged for the host.
    std::vector<HostArray> results(int p, const std::vector<HostArray>& inputs, RunRecord& last,
                                   const std::shared_ptr<CudaCounters>& counters) {
        const int w = 1 - p;
        const std::size_t n = c_.sizes.size();
        last.reset(n, inputs);
        last.graphed = true;
        std::vector<HostArray> out, by_buffer(n);
        std::vector<bool> made(n, false);
        for (int b : c_.outputs) {
            auto ub = static_cast<std::size_t>(b);
            if (!made[ub]) {
                made[ub] = true;
                const std::size_t bytes = c_.bytes[ub];
                auto storage = std::make_shared<AlignedStorage>(bytes);
                if (bytes == 0) {
                    by_buffer[ub] = HostArray(c_.sizes[ub], c_.dtypes[ub], storage, storage->data);
                } else {
                    std::function<void()> fill;
                    if (stage_out_[p][ub]) {
                        fill = [state = &s_, done = done_[p], staged = stage_out_[p][ub],
                                host = storage->data, bytes] {
                            std::lock_guard<std::recursive_mutex> lock(state->mutex);
                            state->device.make_current();
                            done->synchronize();
                            std::memcpy(host, staged->get(), bytes);
                        };
                    } else {
                        fill = [state = &s_, counters, device = set_[w][ub], host = storage->data,
                                bytes] {
                            std::lock_guard<std::recursive_mutex> lock(state->mutex);
                            state->device.make_current();
                            state->stream.copy_to_host(host, device->get(), bytes);
                            state->stream.synchronize();
                            counters->add_download();
                        };
                    }
                    auto pending = std::make_shared<DeferredContents>(std::move(fill));
                    last.address[ub] = storage->data;
                    last.device[ub] = set_[w][ub];
                    last.pending[ub] = pending;
                    last.owner[ub] = storage;
                    written_[w].push_back({storage->data, storage, pending});
                    // A staged result is read from its staging: work on its device copy (an
                    // all-reduce in place) would not reach the host.
                    s_.residency.add_host(storage, storage->data, set_[w][ub], !stage_out_[p][ub]);
                    by_buffer[ub] = HostArray(c_.sizes[ub], c_.dtypes[ub], storage, storage->data,
                                              std::move(pending));
                }
            }
            out.push_back(by_buffer[ub]);
        }
        return out;
    }

    DeviceState& s_;
    const CudaProgramCode& c_;
    std::vector<int> feed_;
    std::vector<std::vector<std::int64_t>> input_sizes_;
    std::vector<bool> download_; // per output buffer: copied to the host by the graph
    std::array<std::vector<std::shared_ptr<cuda::DeviceBuffer>>, 2> set_;
    // Per buffer: the program's copy of a host input, the device array bound as input (the same
    // in every run), the leaf's device copy.
    std::vector<std::shared_ptr<cuda::DeviceBuffer>> device_in_, resident_, leaf_;
    std::array<std::vector<std::shared_ptr<cuda::PinnedBuffer>>, 2> stage_in_, stage_out_;
    std::array<std::vector<cuda::DevicePtr>, 2> ptr_; // per buffer, for each parity
    std::vector<cuda::DevicePtr> scratch_;
    std::array<std::unique_ptr<cuda::Graph>, 2> graph_;
    std::array<std::shared_ptr<cuda::Event>, 2> done_; // recorded after each launch
    std::array<bool, 2> launched_{false, false};
    std::array<std::vector<Written>, 2> written_; // the live results in each set
    int next_ = 0;                                // the parity of the next launch
};

class CudaProgram : public Program {
public:
    CudaProgram(std::shared_ptr<const CudaProgramCode> code, std::vector<NodePtr> leaves,
                std::shared_ptr<CudaCounters> counters)
        : code_(std::move(code)), leaves_(std::move(leaves)), counters_(std::move(counters)),
          graphs_(graphs_enabled() && graphable(*code_)) {}
    std::vector<HostArray> run(const std::vector<HostArray>& inputs) override {
        // Lock order: this program, then a result's copy (DeferredContents), then the device.
        std::lock_guard<std::mutex> program_lock(mutex_);
        if (graph_) graph_->copy_back_overwritten();
        DeviceState& s = device_state();
        std::lock_guard<std::recursive_mutex> lock(s.mutex);
        CudaStats local;
        auto out = graphs_ ? run_with_graphs(s, inputs, local)
                           : Run(s, *code_, local, counters_)(inputs, leaves_);
        std::lock_guard<std::mutex> counters_lock(counters_->mutex);
        counters_->stats.uploads += local.uploads;
        counters_->stats.resident_inputs += local.resident_inputs;
        counters_->stats.launches += local.launches;
        counters_->stats.downloads += local.downloads; // inside graphs
        counters_->stats.graphs_captured += local.graphs_captured;
        counters_->stats.graph_launches += local.graph_launches;
        return out;
    }

private:
    // A graph launch when this run repeats the previous one (GraphReplay), else a run launch by
    // launch, remembered for the next run to compare with.
    std::vector<HostArray> run_with_graphs(DeviceState& s, const std::vector<HostArray>& inputs,
                                           CudaStats& stats) {
        Run run(s, *code_, stats, counters_);
        s.device.make_current();
        s.residency.sweep();
        std::vector<int> feed = fed_outputs(*code_, inputs, last_);
        std::vector<std::shared_ptr<cuda::DeviceBuffer>> resident =
            resident_inputs(s, *code_, inputs, feed);
        if (graph_ && !graph_->matches(inputs, leaves_, last_, feed)) {
            graph_.reset();
            // Runs that keep changing would capture again and again: such a program gives up
            // graphs.
            if (++discarded_ >= kMaxDiscardedGraphs) graphs_ = false;
        }
        // A capture needs two runs alike: device inputs that move every run (the results of
        // another program, say) never start one.
        if (graphs_ && !graph_ && last_.valid && !last_.graphed &&
            last_.input_sizes == sizes_of(inputs) && last_.resident.size() == resident.size() &&
            std::equal(resident.begin(), resident.end(), last_.resident.begin(),
                       [](const auto& now, const auto& before) { return !now || now == before; }))
            graph_ = std::make_unique<GraphReplay>(run, s, *code_, inputs, leaves_, last_, feed);
        std::vector<HostArray> out =
            graph_ ? graph_->run(inputs, last_, stats, counters_) : run(inputs, leaves_, &last_);
        last_.resident = std::move(resident);
        return out;
    }

    std::shared_ptr<const CudaProgramCode> code_;
    std::vector<NodePtr> leaves_;
    std::shared_ptr<CudaCounters> counters_;
    static constexpr int kMaxDiscardedGraphs = 4;
    bool graphs_;
    int discarded_ = 0; // graphs dropped because a run did not repeat the one before
    std::mutex mutex_;
    RunRecord last_;
    std::unique_ptr<GraphReplay> graph_;
};

} // namespace

CudaBackend::CudaBackend() : counters_(std::make_shared<CudaCounters>()) {}

void set_cuda_image_hook(CudaImageHook hook) {
    g_image_hook.store(hook);
}

std::string cuda_unavailable_reason() {
    return cuda::Device::unavailable_reason();
}

CudaDeviceArray cuda_device_array(const HostArray& a) {
    if (!cuda::Device::unavailable_reason().empty() || !a.pending() || a.changed() ||
        a.bytes() == 0)
        return {};
    DeviceState& s = device_state();
    std::lock_guard<std::recursive_mutex> lock(s.mutex);
    std::shared_ptr<cuda::DeviceBuffer> d = s.residency.find_writable_host(a.address(), a.bytes());
    if (!d || !a.pending()) return {}; // (read meanwhile: the host copy would go stale)
    return {d->get(), s.stream.get()};
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
