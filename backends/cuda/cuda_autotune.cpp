// The contraction autotuner (cuda_autotune.hpp).
#include "backends/cuda/cuda_autotune.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <sstream>
#include <vector>

#include "backends/common/hash.hpp"
#include "backends/common/kernel_cache.hpp"
#include "backends/cuda/runtime/nvrtc_compiler.hpp"
#include "core/error.hpp"

namespace hedra::backend::cuda {

namespace {

KernelCache& choice_cache() {
    static KernelCache cache(KernelCache::default_directory(), ".tune");
    return cache;
}

// $HEDRA_CUDA_AUTOTUNE, read once: 0 off, 1 on, 2 verbose.
int autotune_mode() {
    static const int mode = [] {
        const char* v = std::getenv("HEDRA_CUDA_AUTOTUNE");
        if (!v) return 0;
        return std::strcmp(v, "verbose") == 0 ? 2 : std::strcmp(v, "1") == 0 ? 1 : 0;
    }();
    return mode;
}

// "128,128,8/0": the tile (empty: the policy's) and the splits.
std::string encode(const ContractionTiling& t) {
    if (t.tile.empty()) return "policy/" + std::to_string(t.splits);
    std::string s;
    for (std::size_t i = 0; i < t.tile.size(); ++i)
        s += (i ? "," : "") + std::to_string(t.tile[i]);
    return s + "/" + std::to_string(t.splits);
}

std::optional<ContractionTiling> decode(const std::string& text) {
    ContractionTiling t;
    std::size_t slash = text.find('/');
    if (slash == std::string::npos) return std::nullopt;
    std::stringstream tile(text.substr(0, slash));
    std::string item;
    try {
        while (text.rfind("policy/", 0) != 0 && std::getline(tile, item, ','))
            t.tile.push_back(std::stoll(item));
        t.splits = std::stoll(text.substr(slash + 1));
    } catch (const std::exception&) {
        return std::nullopt;
    }
    if (t.tile.size() != 0 && t.tile.size() != 3) return std::nullopt;
    return t;
}

// Milliseconds per run of `lowered`'s launches, on buffers of the program's sizes.
double time_launches(const poly::ProgramIR& ir, const CudaLoweredProgram& lowered,
                     const std::string& arch, DeviceAllocator& allocator, const Stream& stream,
                     const ImageObserver& observe) {
    NvrtcImage image = Nvrtc::instance().compile(lowered.source, arch);
    if (observe) observe(lowered.source, image.image);
    Module module(image.image);
    std::vector<void*> functions;
    for (const CudaLaunch& l : lowered.launches)
        functions.push_back(module.function(l.function));
    std::size_t nb = ir.buffers.size();
    std::vector<std::unique_ptr<DeviceBuffer>> buffers(nb + lowered.scratch.size());
    std::vector<std::vector<DevicePtr>> args;
    for (const CudaLaunch& l : lowered.launches) {
        args.emplace_back();
        for (int b : l.buffers) {
            auto ub = static_cast<std::size_t>(b);
            if (!buffers[ub]) {
                std::size_t bytes =
                    ub < nb ? ir.buffers[ub].bytes() : lowered.scratch[ub - nb].bytes();
                buffers[ub] =
                    std::make_unique<DeviceBuffer>(allocator, std::max<std::size_t>(bytes, 1));
            }
            args.back().push_back(buffers[ub]->get());
        }
    }
    auto run = [&] {
        for (std::size_t i = 0; i < lowered.launches.size(); ++i)
            launch(functions[i], lowered.launches[i].grid, lowered.launches[i].block, stream,
                   args[i].data(), args[i].size());
    };
    run(); // warm: module load, caches, clocks
    Event start, stop;
    start.record(stream);
    run();
    stop.record(stream);
    double once = std::max<double>(stop.milliseconds_since(start), 1e-3);
    int reps = static_cast<int>(std::clamp(5.0 / once, 1.0, 50.0)); // about 5 ms per candidate
    start.record(stream);
    for (int i = 0; i < reps; ++i)
        run();
    stop.record(stream);
    return stop.milliseconds_since(start) / reps;
}

} // namespace

bool autotune_enabled() {
    return autotune_mode() > 0;
}

std::optional<ContractionTiling>
autotune_kernel(const poly::ProgramIR& ir, const CudaLowerOptions& base, int kernel,
                const std::vector<ContractionTiling>& candidates, const Device& device,
                DeviceAllocator& allocator, const Stream& stream, const ImageObserver& observe,
                AutotuneStats& stats) {
    std::string arch = default_architecture(device.architecture());
    CudaLowerOptions o = base;
    o.contraction_tilings.clear();
    o.tile_sizes.clear();
    o.only_kernel = kernel;
    o.observer = nullptr;
    o.measure = nullptr; // each candidate as given
    std::vector<std::string> sources;
    std::vector<CudaLoweredProgram> lowered;
    std::vector<ContractionTiling> distinct;
    for (const ContractionTiling& c : candidates) {
        o.contraction_tilings[kernel] = c;
        CudaLoweredProgram l = lower_cuda(ir, o);
        if (std::find(sources.begin(), sources.end(), l.source) != sources.end()) continue;
        sources.push_back(l.source);
        lowered.push_back(std::move(l));
        distinct.push_back(c);
    }
    if (distinct.size() < 2) return std::nullopt; // nothing to choose from
    ++stats.kernels;
    std::string key = sha256_hex("hedra contraction tiling v2\n" + device.name + "\n" + arch +
                                 "\n" + sched::to_string(base.gpu) + "\n" + sources[0]);
    if (auto cached = choice_cache().load(key))
        if (auto t = decode(*cached)) {
            ++stats.from_cache;
            return *t;
        }
    double best = std::numeric_limits<double>::infinity();
    std::size_t best_at = 0;
    std::string report;
    for (std::size_t c = 0; c < lowered.size(); ++c) {
        double ms = std::numeric_limits<double>::infinity();
        try {
            ms = time_launches(ir, lowered[c], arch, allocator, stream, observe);
            ++stats.candidates;
        } catch (const Error& e) {
            report += "  " + encode(distinct[c]) + " failed: " + e.what() + "\n";
            continue;
        }
        report += "  " + encode(distinct[c]) + " " + std::to_string(ms) + " ms\n";
        if (ms < best) {
            best = ms;
            best_at = c;
        }
    }
    if (autotune_mode() == 2)
        std::fprintf(stderr, "hedra cuda autotune: kernel k%d, %zu candidates, chose %s\n%s",
                     kernel, lowered.size(), encode(distinct[best_at]).c_str(), report.c_str());
    if (best < std::numeric_limits<double>::infinity())
        choice_cache().store(key, encode(distinct[best_at]));
    return distinct[best_at];
}

std::function<std::optional<ContractionTiling>(int, const std::vector<ContractionTiling>&)>
autotune_measure(const poly::ProgramIR& ir, const CudaLowerOptions& base, const Device& device,
                 DeviceAllocator& allocator, const Stream& stream, const ImageObserver& observe,
                 AutotuneStats& stats) {
    CudaLowerOptions o = base;
    o.measure = nullptr;
    return [&ir, o, &device, &allocator, &stream, observe,
            &stats](int kernel, const std::vector<ContractionTiling>& candidates) {
        return autotune_kernel(ir, o, kernel, candidates, device, allocator, stream, observe,
                               stats);
    };
}

std::map<int, ContractionTiling>
autotune_contractions(const poly::ProgramIR& ir, const CudaLowerOptions& base, const Device& device,
                      DeviceAllocator& allocator, const Stream& stream,
                      const ImageObserver& observe, AutotuneStats& stats) {
    std::map<int, ContractionTiling> chosen;
    for (std::size_t k = 0; k < ir.kernels.size(); ++k) {
        int kernel = static_cast<int>(k);
        std::vector<ContractionTiling> candidates = sched::contraction_candidates(ir, kernel);
        if (candidates.size() < 2) continue;
        if (auto t = autotune_kernel(ir, base, kernel, candidates, device, allocator, stream,
                                     observe, stats))
            chosen[kernel] = *t;
    }
    return chosen;
}

} // namespace hedra::backend::cuda
