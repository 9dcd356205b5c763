// hedra_cuda_bench: the cuda backend against its peers, on a GPU (bench/gpu_check.sh runs it).
// - matmul: the generated kernel of matmul(A, B) (f32, N×N) against cuBLAS's sgemm (FP32, no
//   tensor cores: CUBLAS_DEFAULT_MATH), both launched in this process on the same device buffers
//   and timed with CUDA events; the results are compared with each other. cuBLAS is a
//   benchmark-only peer, opened with dlopen (libcublas.so[.13|.12], or the toolkit's directory).
// - matmul_tc: the tensor-core matmuls (bf16 operands; f32 with TF32 allowed) against
//   cublasGemmEx with the same types (f32 accumulation; TF32 compute), N×N.
// - train_step: steady-state training steps (nn::TrainStep, SGD with momentum) of the two MLPs
//   and the MNIST CNN (nn::mnist_cnn, batch 64) on the cuda backend, timed per step on the wall
//   clock, with the number of kernel launches per step; the batch on the device (hedra_ms, as the
//   peer's) and passed from the host (host_batch_ms), both replayed as CUDA graphs after the
//   warm-up (graph_launches_per_step), and the device batch launch by launch (no_graph_ms,
//   HEDRA_CUDA_GRAPHS=0). The PyTorch CUDA peer runs in Python
//   (bench/gpu_check.sh) with the same shapes.
// After each matmul, a "<kind>_tuned ... tiles=BM,BN,chunk/splits" line times the autotuner's
// choice (cuda_autotune.hpp; its tuning time in tune_s). Then "matmul_tiles n=...
// tiles=BM,BN,chunk ..." lines time other tile sizes (more at the largest N); "matmul_shape m=.."
// lines time the MLP's shapes (and two fixed tilings of each). With HEDRA_CUDA_AUTOTUNE set in
// the environment, the training steps are autotuned (tuned_kernels=...).
// Prints one line per measurement, key=value, e.g.
//   matmul n=4096 hedra_ms=2.94 peer=cublas peer_ms=2.67 speedup=0.91 hedra_tflops=46.7
//   max_rel_diff=2e-6
// where speedup = peer_ms / hedra_ms, as in hedra's other benchmarks.
// Usage: hedra_cuda_bench [matmul [N...]] [train_step] [--quick]
#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "backends/cuda/cuda_autotune.hpp"
#include "backends/cuda/cuda_backend.hpp"
#include "backends/cuda/render/cuda_lower.hpp"
#include "backends/cuda/runtime/cuda_driver.hpp"
#include "backends/cuda/runtime/device_allocator.hpp"
#include "backends/cuda/runtime/nvrtc_compiler.hpp"
#include "hedra.hpp"
#include "nn/model.hpp"
#include "nn/optim.hpp"
#include "nn/train_step.hpp"
#include "scheduler/partition.hpp"

#ifndef HEDRA_CUDA_LIBRARY_DIR
#define HEDRA_CUDA_LIBRARY_DIR ""
#endif

using namespace hedra;
namespace cu = hedra::backend::cuda;

namespace {

// The few cuBLAS entry points the peer needs (cublas_v2.h's signatures, opaque types).
struct Cublas {
    using Create = int (*)(void**);
    using SetStream = int (*)(void*, void*);
    using Sgemm = int (*)(void*, int, int, int, int, int, const float*, const float*, int,
                          const float*, int, const float*, float*, int);
    // cublasGemmEx: the tensor-core peers (bf16 operands, or f32 with TF32 compute).
    using GemmEx = int (*)(void*, int, int, int, int, int, const void*, const void*, int, int,
                           const void*, int, int, const void*, void*, int, int, int, int);
    Create create = nullptr;
    SetStream set_stream = nullptr;
    Sgemm sgemm = nullptr;
    GemmEx gemm_ex = nullptr;
    void* handle = nullptr;
    std::string library;

    bool load() {
        std::vector<std::string> names = {"libcublas.so", "libcublas.so.13", "libcublas.so.12"};
        std::string dir = HEDRA_CUDA_LIBRARY_DIR;
        if (!dir.empty())
            for (const char* n : {"libcublas.so", "libcublas.so.13", "libcublas.so.12"})
                names.push_back(dir + "/" + n);
        for (const std::string& n : names) {
            void* lib = dlopen(n.c_str(), RTLD_NOW | RTLD_GLOBAL);
            if (!lib) continue;
            create = reinterpret_cast<Create>(dlsym(lib, "cublasCreate_v2"));
            set_stream = reinterpret_cast<SetStream>(dlsym(lib, "cublasSetStream_v2"));
            sgemm = reinterpret_cast<Sgemm>(dlsym(lib, "cublasSgemm_v2"));
            gemm_ex = reinterpret_cast<GemmEx>(dlsym(lib, "cublasGemmEx"));
            if (create && set_stream && sgemm && create(&handle) == 0) {
                library = n;
                return true;
            }
        }
        return false;
    }
};

std::vector<float> random_floats(std::size_t n, unsigned seed) {
    std::mt19937 gen(seed);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    std::vector<float> v(n);
    for (float& x : v)
        x = dist(gen);
    return v;
}

// Milliseconds per call of `fn` (enqueued on `stream`), over enough calls to take ~0.3 s.
template <class F>
double time_ms(const cu::Stream& stream, F fn) {
    fn();
    fn();
    cu::Event start, stop;
    start.record(stream);
    fn();
    stop.record(stream);
    double once = std::max<double>(stop.milliseconds_since(start), 1e-3);
    int reps = static_cast<int>(std::clamp(300.0 / once, 3.0, 1000.0));
    start.record(stream);
    for (int i = 0; i < reps; ++i)
        fn();
    stop.record(stream);
    return stop.milliseconds_since(start) / reps;
}

// The generated matmul of `ir` lowered with `tiles` (empty: the backend's choice), compiled and
// timed on `buffers` (the IR's, then its scratch buffers).
struct GeneratedMatmul {
    double ms = 0;
    std::string launches;
};

backend::CudaLowerOptions lower_options() {
    cu::Device& dev = cu::Device::instance();
    backend::CudaLowerOptions lo;
    lo.gpu = dev.target();
    return lo;
}

GeneratedMatmul time_generated(const poly::ProgramIR& ir, const std::vector<std::int64_t>& tiles,
                               cu::DeviceAllocator& allocator, const cu::Stream& stream,
                               std::vector<std::unique_ptr<cu::DeviceBuffer>>& buffers,
                               const std::map<int, backend::ContractionTiling>& tuned = {},
                               bool allow_tf32 = false) {
    cu::Device& dev = cu::Device::instance();
    backend::CudaLowerOptions lo = lower_options();
    lo.allow_tf32 = allow_tf32;
    lo.tile_sizes = tiles;
    lo.contraction_tilings = tuned;
    backend::CudaLoweredProgram lowered = backend::lower_cuda(ir, lo);
    cu::NvrtcImage image =
        cu::Nvrtc::instance().compile(lowered.source, cu::default_architecture(dev.architecture()));
    cu::Module module(image.image);
    std::vector<void*> functions;
    for (const backend::CudaLaunch& l : lowered.launches)
        functions.push_back(module.function(l.function));
    buffers.resize(ir.buffers.size());
    for (const backend::ScratchBuffer& s : lowered.scratch)
        buffers.push_back(std::make_unique<cu::DeviceBuffer>(
            allocator, static_cast<std::size_t>(s.elements) * dtype_size(s.dtype)));
    auto run = [&] {
        for (std::size_t i = 0; i < lowered.launches.size(); ++i) {
            std::vector<cu::DevicePtr> args;
            for (int buffer : lowered.launches[i].buffers)
                args.push_back(buffers.at(static_cast<std::size_t>(buffer))->get());
            cu::launch(functions[i], lowered.launches[i].grid, lowered.launches[i].block, stream,
                       args.data(), args.size());
        }
    };
    GeneratedMatmul g;
    g.ms = time_ms(stream, run);
    g.launches = "launches=" + std::to_string(lowered.launches.size());
    for (const backend::CudaLaunch& l : lowered.launches)
        g.launches += " " + l.strategy + ":grid(" + std::to_string(l.grid[0]) + "," +
                      std::to_string(l.grid[1]) + "," + std::to_string(l.grid[2]) + ")block(" +
                      std::to_string(l.block[0]) + "," + std::to_string(l.block[1]) + "," +
                      std::to_string(l.block[2]) + ")smem=" + std::to_string(l.shared_bytes);
    return g;
}

double max_relative_difference(const cu::Stream& stream, cu::DevicePtr a, cu::DevicePtr b,
                               std::size_t n) {
    std::vector<float> x(n), y(n);
    stream.copy_to_host(x.data(), a, n * sizeof(float));
    stream.copy_to_host(y.data(), b, n * sizeof(float));
    stream.synchronize();
    double diff = 0, scale = 1e-30;
    for (std::size_t i = 0; i < n; ++i) {
        diff = std::max(diff, double(std::fabs(x[i] - y[i])));
        scale = std::max(scale, double(std::fabs(y[i])));
    }
    return diff / scale;
}

// f32 -> bf16 bits, rounded to nearest even (finite inputs).
std::uint16_t bf16_bits(float x) {
    std::uint32_t u;
    std::memcpy(&u, &x, 4);
    return static_cast<std::uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

// The tensor-core matmul C (N×N, f32) = A · B of `kind` "bf16" (bf16 operands, f32 products
// and sum: matmul(cast(a, f32), cast(b, f32))) or "tf32" (f32 operands with allow_tf32), timed
// against cublasGemmEx with the same operand types and f32 accumulation (TF32 compute for
// "tf32"). Lines "matmul_tc kind=bf16 n=4096 hedra_ms=.. peer_ms=.. speedup=..".
void bench_tensor_core(std::int64_t n, const std::string& kind, Cublas& cublas, bool have_cublas) {
    cu::Device& dev = cu::Device::instance();
    dev.make_current();
    const bool bf16 = kind == "bf16";
    const DType dt = bf16 ? DType::BF16 : DType::F32;
    Array a = placeholder(Shape::of({n, n}), dt), b = placeholder(Shape::of({n, n}), dt);
    Array c = bf16 ? matmul(cast(a, DType::F32), cast(b, DType::F32)) : matmul(a, b);
    poly::ProgramIR ir = sched::partition({c.node()}, {a.node(), b.node()});
    cu::DeviceAllocator allocator;
    std::vector<std::unique_ptr<cu::DeviceBuffer>> buffers;
    for (const poly::Buffer& buffer : ir.buffers)
        buffers.push_back(std::make_unique<cu::DeviceBuffer>(allocator, buffer.bytes()));
    cu::Stream stream;
    const std::size_t elements = static_cast<std::size_t>(n * n);
    int ia = ir.inputs.at(0), ib = ir.inputs.at(1), ic = ir.outputs.at(0);
    for (auto [buffer, seed] : {std::pair<int, unsigned>{ia, 1}, {ib, 2}}) {
        std::vector<float> v = random_floats(elements, seed);
        if (bf16) {
            std::vector<std::uint16_t> h(elements);
            for (std::size_t i = 0; i < elements; ++i)
                h[i] = bf16_bits(v[i]);
            stream.copy_to_device(buffers[buffer]->get(), h.data(), h.size() * 2);
        } else {
            stream.copy_to_device(buffers[buffer]->get(), v.data(), v.size() * 4);
        }
        stream.synchronize();
    }
    const double flop = 2.0 * double(n) * double(n) * double(n);
    GeneratedMatmul g = time_generated(ir, {}, allocator, stream, buffers, {}, !bf16);
    std::printf("matmul_tc kind=%s n=%lld hedra_ms=%.4f hedra_tflops=%.2f %s", kind.c_str(),
                (long long)n, g.ms, flop / (g.ms * 1e9), g.launches.c_str());
    if (have_cublas && cublas.gemm_ex) {
        cu::DeviceBuffer peer_c(allocator, elements * sizeof(float));
        cublas.set_stream(cublas.handle, stream.get());
        const float one = 1.0f, zero = 0.0f;
        const int ni = static_cast<int>(n);
        // cudaDataType: CUDA_R_16BF 14, CUDA_R_32F 0; cublasComputeType_t: CUBLAS_COMPUTE_32F
        // 68, CUBLAS_COMPUTE_32F_FAST_TF32 77; CUBLAS_GEMM_DEFAULT -1.
        const int type = bf16 ? 14 : 0, compute = bf16 ? 68 : 77;
        int status = 0;
        auto run_cublas = [&] {
            status =
                cublas.gemm_ex(cublas.handle, 0, 0, ni, ni, ni, &one,
                               reinterpret_cast<const void*>(buffers[ib]->get()), type, ni,
                               reinterpret_cast<const void*>(buffers[ia]->get()), type, ni, &zero,
                               reinterpret_cast<void*>(peer_c.get()), 0, ni, compute, -1);
        };
        const double peer_ms = time_ms(stream, run_cublas);
        std::printf(" peer=cublas_%s peer_ms=%.4f speedup=%.3f max_rel_diff=%.2e status=%d",
                    kind.c_str(), peer_ms, peer_ms / g.ms,
                    max_relative_difference(stream, buffers[ic]->get(), peer_c.get(), elements),
                    status);
    } else {
        std::printf(" peer=none");
    }
    std::printf("\n");
    std::fflush(stdout);
}

// `sweep`: other tile sizes {BM, BN, chunk} timed after the backend's choice (one line each), so
// one run on a GPU gives the table to tune the default from.
// C (m×n) = A (m×k) · B (k×n). Lines start "<kind> <keys>" (kind "matmul", keys "n=4096" for
// the square goal sizes; "matmul_shape", "m=.. k=.. n=.." for the MLP's), the sweep's
// "<kind>_tiles <keys> tiles=..".
void bench_matmul(std::int64_t m, std::int64_t k, std::int64_t n, const std::string& kind,
                  const std::string& keys, Cublas& cublas, bool have_cublas,
                  const std::vector<std::vector<std::int64_t>>& sweep) {
    cu::Device& dev = cu::Device::instance();
    dev.make_current();
    Array a = placeholder(Shape::of({m, k})), b = placeholder(Shape::of({k, n}));
    poly::ProgramIR ir = sched::partition({matmul(a, b).node()}, {a.node(), b.node()});
    cu::DeviceAllocator allocator;
    std::size_t elements = static_cast<std::size_t>(m * n);
    std::vector<std::unique_ptr<cu::DeviceBuffer>> buffers;
    for (const poly::Buffer& buffer : ir.buffers) {
        std::size_t count = 1;
        for (std::int64_t size : buffer.sizes)
            count *= static_cast<std::size_t>(size);
        buffers.push_back(std::make_unique<cu::DeviceBuffer>(allocator, count * sizeof(float)));
    }
    cu::Stream stream;
    std::vector<float> ha = random_floats(static_cast<std::size_t>(m * k), 1),
                       hb = random_floats(static_cast<std::size_t>(k * n), 2);
    int ia = ir.inputs.at(0), ib = ir.inputs.at(1), ic = ir.outputs.at(0);
    stream.copy_to_device(buffers[ia]->get(), ha.data(), ha.size() * sizeof(float));
    stream.copy_to_device(buffers[ib]->get(), hb.data(), hb.size() * sizeof(float));
    double flop = 2.0 * double(m) * double(k) * double(n);
    GeneratedMatmul g = time_generated(ir, {}, allocator, stream, buffers);
    std::printf("%s %s hedra_ms=%.4f hedra_tflops=%.2f %s", kind.c_str(), keys.c_str(), g.ms,
                flop / (g.ms * 1e9), g.launches.c_str());
    double peer_ms = 0;
    std::unique_ptr<cu::DeviceBuffer> peer_c;
    if (have_cublas) {
        peer_c = std::make_unique<cu::DeviceBuffer>(allocator, elements * sizeof(float));
        cublas.set_stream(cublas.handle, stream.get());
        const float one = 1.0f, zero = 0.0f;
        int mi = static_cast<int>(m), ki = static_cast<int>(k), ni = static_cast<int>(n);
        // Row-major C = A·B is column-major Cᵀ = Bᵀ·Aᵀ.
        auto run_cublas = [&] {
            cublas.sgemm(cublas.handle, 0, 0, ni, mi, ki, &one,
                         reinterpret_cast<const float*>(buffers[ib]->get()), ni,
                         reinterpret_cast<const float*>(buffers[ia]->get()), ki, &zero,
                         reinterpret_cast<float*>(peer_c->get()), ni);
        };
        peer_ms = time_ms(stream, run_cublas);
        std::printf(" peer=cublas peer_ms=%.4f speedup=%.3f max_rel_diff=%.2e", peer_ms,
                    peer_ms / g.ms,
                    max_relative_difference(stream, buffers[ic]->get(), peer_c->get(), elements));
    } else {
        std::printf(" peer=none");
    }
    std::printf("\n");
    std::fflush(stdout);
    // The end of a line that times another lowering of the same matmul: against the peer.
    auto end_line = [&](const GeneratedMatmul& t) {
        if (have_cublas)
            std::printf(
                " speedup=%.3f max_rel_diff=%.2e", peer_ms / t.ms,
                max_relative_difference(stream, buffers[ic]->get(), peer_c->get(), elements));
        std::printf(" %s\n", t.launches.c_str());
        std::fflush(stdout);
    };
    // The autotuner's choice (HEDRA_CUDA_AUTOTUNE's, cuda_autotune.hpp): candidates timed on
    // scratch buffers, the chosen tiling timed here as the default was.
    {
        cu::AutotuneStats tuning;
        auto start = std::chrono::steady_clock::now();
        std::map<int, backend::ContractionTiling> tuned =
            cu::autotune_contractions(ir, lower_options(), dev, allocator, stream, nullptr, tuning);
        double tune_s =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        GeneratedMatmul t = time_generated(ir, {}, allocator, stream, buffers, tuned);
        std::string choice = "policy";
        if (auto it = tuned.find(0); it != tuned.end() && !it->second.tile.empty())
            choice = std::to_string(it->second.tile[0]) + "," + std::to_string(it->second.tile[1]) +
                     "," + std::to_string(it->second.tile[2]);
        if (auto it = tuned.find(0); it != tuned.end())
            choice += "/" + std::to_string(it->second.splits);
        std::printf("%s_tuned %s tiles=%s hedra_ms=%.4f hedra_tflops=%.2f candidates=%llu "
                    "tune_s=%.2f",
                    kind.c_str(), keys.c_str(), choice.c_str(), t.ms, flop / (t.ms * 1e9),
                    (unsigned long long)tuning.candidates, tune_s);
        end_line(t);
    }
    for (const std::vector<std::int64_t>& tiles : sweep) {
        GeneratedMatmul t = time_generated(ir, tiles, allocator, stream, buffers);
        std::printf("%s_tiles %s tiles=%lld,%lld,%lld hedra_ms=%.4f hedra_tflops=%.2f",
                    kind.c_str(), keys.c_str(), (long long)tiles[0], (long long)tiles[1],
                    (long long)tiles[2], t.ms, flop / (t.ms * 1e9));
        end_line(t);
    }
}

// Steady-state steps of one MLP, timed on the wall clock: `steps` calls, the loss of every
// step kept and the last one read at the end (one wait for the device), as the PyTorch peer.
struct StepTiming {
    double ms;
    backend::CudaStats delta;
    double loss;
};
StepTiming time_steps(nn::TrainStep& ts, const HostArray& images, const HostArray& labels,
                      int steps) {
    auto backend = std::dynamic_pointer_cast<backend::CudaBackend>(get_backend("cuda"));
    backend::CudaStats before = backend->stats();
    auto start = std::chrono::steady_clock::now();
    HostArray last;
    for (int i = 0; i < steps; ++i)
        last = ts.step_loss(images, labels);
    double loss = last.flat(0);
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                    .count() /
                steps;
    backend::CudaStats after = backend->stats();
    backend::CudaStats delta;
    delta.launches = after.launches - before.launches;
    delta.uploads = after.uploads - before.uploads;
    delta.downloads = after.downloads - before.downloads;
    delta.resident_inputs = after.resident_inputs - before.resident_inputs;
    delta.graph_launches = after.graph_launches - before.graph_launches;
    return {ms, delta, loss};
}

// hedra_ms: the batch already on the device (as the PyTorch peer's `x`, made there by a cuda
// program, so residency passes it without a copy); host_batch_ms: the same batch passed from
// host memory, uploaded every step (a training loop that reads each batch from the host).
// `model` takes a batch of `model.example_shape` and scores `classes` classes.
void bench_train_step(const char* name, nn::Model model, std::int64_t classes, std::int64_t batch,
                      int steps) {
    ComputeOptions on_cuda;
    on_cuda.backend = "cuda";
    auto cuda = std::dynamic_pointer_cast<backend::CudaBackend>(get_backend("cuda"));
    std::uint64_t tuned_before = cuda->stats().tuned_kernels;
    std::vector<std::int64_t> shape = {batch};
    shape.insert(shape.end(), model.example_shape.begin(), model.example_shape.end());
    nn::TrainStep ts(std::move(model), std::make_shared<nn::Sgd>(nn::SgdOptions{0.01, 0.9}),
                     on_cuda);
    std::int64_t elements = 1;
    for (std::int64_t e : shape)
        elements *= e;
    std::vector<float> x = random_floats(static_cast<std::size_t>(elements), 3);
    std::vector<std::int32_t> y(static_cast<std::size_t>(batch));
    for (std::size_t i = 0; i < y.size(); ++i)
        y[i] = static_cast<std::int32_t>(i % static_cast<std::size_t>(classes));
    HostArray images = HostArray::from(x, shape), labels = HostArray::from(y, {batch});
    HostArray device_images = compute(array(images) + 0.0f, on_cuda),
              device_labels = compute(array(labels) + 0, on_cuda);
    for (int i = 0; i < 3; ++i)
        ts.step(images, labels);
    StepTiming host = time_steps(ts, images, labels, steps);
    for (int i = 0; i < 3; ++i)
        ts.step(device_images, device_labels);
    StepTiming device = time_steps(ts, device_images, device_labels, steps);
    // The same steps launch by launch: a TrainStep whose program is made with
    // HEDRA_CUDA_GRAPHS=0 (read then), from the same compiled code.
    const char* graphs = std::getenv("HEDRA_CUDA_GRAPHS");
    const std::string graphs_before = graphs ? graphs : "";
    nn::TrainStep plain(ts.model(), std::make_shared<nn::Sgd>(nn::SgdOptions{0.01, 0.9}), on_cuda);
    setenv("HEDRA_CUDA_GRAPHS", "0", 1);
    for (int i = 0; i < 3; ++i)
        plain.step(device_images, device_labels);
    if (graphs)
        setenv("HEDRA_CUDA_GRAPHS", graphs_before.c_str(), 1);
    else
        unsetenv("HEDRA_CUDA_GRAPHS");
    StepTiming launched = time_steps(plain, device_images, device_labels, steps);
    const backend::CudaStats& d = device.delta;
    std::printf(
        "train_step model=%s batch=%lld hedra_ms=%.4f host_batch_ms=%.4f "
        "no_graph_ms=%.4f graph_launches_per_step=%.2f "
        "kernels_per_step=%.1f uploads_per_step=%.1f host_batch_uploads_per_step=%.1f "
        "downloads_per_step=%.2f resident_inputs_per_step=%.1f compile_s=%.2f "
        "tuned_kernels=%llu loss=%.4f\n",
        name, (long long)batch, device.ms, host.ms, launched.ms, double(d.graph_launches) / steps,
        double(d.launches) / steps, double(d.uploads) / steps, double(host.delta.uploads) / steps,
        double(d.downloads) / steps, double(d.resident_inputs) / steps, ts.compile_seconds(),
        (unsigned long long)(cuda->stats().tuned_kernels - tuned_before), device.loss);
    std::fflush(stdout);
}

} // namespace

int main(int argc, char** argv) {
    bool quick = false, matmul_only = false, train_only = false;
    std::vector<std::int64_t> sizes;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--quick")
            quick = true;
        else if (a == "matmul")
            matmul_only = true;
        else if (a == "train_step")
            train_only = true;
        else if (std::isdigit(static_cast<unsigned char>(a[0])))
            sizes.push_back(std::stoll(a));
        else {
            std::fprintf(stderr,
                         "usage: hedra_cuda_bench [matmul [N...]] [train_step] [--quick]\n");
            return 2;
        }
    }
    bool run_matmul = matmul_only || !train_only, run_train = train_only || !matmul_only;
    try {
        cu::Device& dev = cu::Device::instance();
        std::printf("device name=\"%s\" arch=%s multiprocessors=%d driver=%d nvrtc=%d.%d\n",
                    dev.name.c_str(), dev.architecture().c_str(), dev.multiprocessors,
                    dev.driver_version, cu::Nvrtc::instance().major, cu::Nvrtc::instance().minor);
        if (run_matmul) {
            Cublas cublas;
            bool have = cublas.load();
            if (!have) std::printf("note: cuBLAS not found; matmul runs without a peer\n");
            if (sizes.empty())
                sizes = quick ? std::vector<std::int64_t>{1024}
                              : std::vector<std::int64_t>{1024, 2048, 4096};
            // The tile sweep, unless --quick: the policy's neighbours at every size, more at
            // the largest (the goal's N = 4096).
            std::vector<std::vector<std::int64_t>> sweep = {
                {128, 128, 8}, {128, 128, 16}, {64, 64, 16}};
            std::vector<std::vector<std::int64_t>> wide = {
                {128, 128, 8}, {128, 64, 16}, {64, 128, 16}, {64, 64, 8}, {64, 64, 16}};
            std::int64_t largest = *std::max_element(sizes.begin(), sizes.end());
            for (std::int64_t n : sizes)
                bench_matmul(n, n, n, "matmul", "n=" + std::to_string(n), cublas, have,
                             quick          ? std::vector<std::vector<std::int64_t>>{}
                             : n == largest ? wide
                                            : sweep);
            // Tensor cores: bf16 operands, and f32 with TF32, against cuBLAS's GemmEx.
            for (std::int64_t n : sizes)
                for (const char* kind : {"bf16", "tf32"})
                    bench_tensor_core(n, kind, cublas, have);
            // The MLP-large step's matmul shapes (batch 256): forward, weight gradient. The
            // backend's choice (64x64 tiles split over the reduction where few) against the
            // 32x32 and 64x64 tiles unsplit (given tile sizes are never split).
            if (!quick)
                for (auto [m, k, n] : {std::array<std::int64_t, 3>{256, 784, 1024},
                                       std::array<std::int64_t, 3>{256, 1024, 1024},
                                       std::array<std::int64_t, 3>{1024, 256, 784}})
                    bench_matmul(m, k, n, "matmul_shape",
                                 "m=" + std::to_string(m) + " k=" + std::to_string(k) +
                                     " n=" + std::to_string(n),
                                 cublas, have, {{32, 32, 16}, {64, 64, 16}});
        }
        if (run_train) {
            int steps = quick ? 10 : 50;
            bench_train_step("mlp-small", nn::mlp({784, 300, 100, 10}, 0), 10, 64, steps);
            bench_train_step("mlp-large", nn::mlp({784, 1024, 1024, 10}, 0), 10, 256, steps);
            bench_train_step("cnn", nn::mnist_cnn(0), 10, 64, steps);
        }
    } catch (const std::exception& e) {
        std::printf("error: %s\n", e.what());
        return 1;
    }
    return 0;
}
