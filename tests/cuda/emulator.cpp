// The CPU emulator of generated CUDA kernels (see emulator.hpp).
#include "cuda/emulator.hpp"

#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <unistd.h>

#include "backends/common/hash.hpp"
#include "core/error.hpp"
#include "core/node.hpp"

namespace hedra::test {

namespace {

const char* kEmulationHeader =
    R"(// CUDA built-ins for the CPU emulation of hedra's generated kernels.
#include <barrier>
#include <thread>
#include <vector>
struct hd_dim3 { unsigned x, y, z; };
static thread_local hd_dim3 threadIdx, blockIdx;
static hd_dim3 blockDim, gridDim;
static std::barrier<>* hd_emu_barrier = nullptr;
#define __global__
#define __device__
#define __launch_bounds__(...)
#define __shared__ static
#define __restrict__ __restrict
#define __align__(n) __attribute__((aligned(n)))
// Aligned as CUDA's: a vector access at an address the GPU would fault on ("misaligned
// address") stops the emulation (-fsanitize=alignment, emulation_library).
struct __attribute__((aligned(8))) float2 { float x, y; };
struct __attribute__((aligned(16))) float4 { float x, y, z, w; };
struct __attribute__((aligned(8))) int2 { int x, y; };
struct __attribute__((aligned(16))) int4 { int x, y, z, w; };
static inline void __syncthreads() { hd_emu_barrier->arrive_and_wait(); }
static inline float __fmaf_rn(float a, float b, float c) { return __builtin_fmaf(a, b, c); }
static inline double __fma_rn(double a, double b, double c) { return __builtin_fma(a, b, c); }
static inline float __int_as_float(int x) { float f; __builtin_memcpy(&f, &x, 4); return f; }
static inline double __longlong_as_double(long long x) { double d; __builtin_memcpy(&d, &x, 8); return d; }
#define HEDRA_CUDA_EMULATION 1
// Warp collectives (the tensor-core helpers): each warp has a barrier of its threads and each
// thread a slot of the exchange; a collective deposits its operands, waits for its warp,
// computes its own results from every lane's operands, and waits again before the slots are
// reused.
#include <memory>
static std::vector<std::unique_ptr<std::barrier<>>>* hd_emu_warps = nullptr;
static unsigned hd_emu_exchange[1024][6];
static const void* hd_emu_address[1024];
static inline unsigned hd_emu_tid() {
    return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}
static inline void hd_emu_warp_sync() { (*hd_emu_warps)[hd_emu_tid() / 32]->arrive_and_wait(); }
static inline float hd_emu_bits_f32(unsigned u) { float f; __builtin_memcpy(&f, &u, 4); return f; }
static inline float hd_emu_half(unsigned h, bool bf16) {
    if (bf16) return hd_emu_bits_f32(h << 16);
    const unsigned e = (h >> 10) & 31, m = h & 1023;
    float v = e == 0 ? __builtin_ldexpf((float)m, -24)
              : e == 31 ? (m ? __builtin_nanf("") : __builtin_inff())
                        : __builtin_ldexpf((float)(m + 1024), (int)e - 25);
    return h & 0x8000 ? -v : v;
}
// Element (row, k) of A (16×16, or 16×8 for TF32) and (k, col) of B from the lanes' fragments,
// as the PTX ISA lays out mma.m16n8k16 (.bf16/.f16) and mma.m16n8k8 (.tf32): groupID = lane/4
// holds A's rows g and g + 8 and B's column g; threadID_in_group t holds A's columns 2t, 2t + 1
// (+8) and B's rows the same (16-bit, two to a register, the lower column in the low half), or
// A's columns t (+4) and B's rows t (+4) (TF32, one to a register).
static inline float hd_emu_a(unsigned base, int kind, unsigned row, unsigned k) {
    if (kind == 2)
        return hd_emu_bits_f32(hd_emu_exchange[base + (row % 8) * 4 + k % 4][row / 8 + 2 * (k / 4)]);
    unsigned w = hd_emu_exchange[base + (row % 8) * 4 + (k % 8) / 2][row / 8 + 2 * (k / 8)];
    return hd_emu_half((w >> (16 * (k % 2))) & 0xffff, kind == 0);
}
static inline float hd_emu_b(unsigned base, int kind, unsigned k, unsigned col) {
    if (kind == 2) return hd_emu_bits_f32(hd_emu_exchange[base + col * 4 + k % 4][4 + k / 4]);
    unsigned w = hd_emu_exchange[base + col * 4 + (k % 8) / 2][4 + k / 8];
    return hd_emu_half((w >> (16 * (k % 2))) & 0xffff, kind == 0);
}
// D += A·B for the warp; this thread's d is C's row g (c0, c1) and g + 8 (c2, c3), columns 2t
// and 2t + 1. Products are exact in f32 (bf16, f16 and TF32 operands), summed in k order.
static inline void hd_emu_mma(float* d, const unsigned* a, const unsigned* b, int kind) {
    const unsigned tid = hd_emu_tid(), lane = tid % 32, base = tid - lane;
    for (int i = 0; i < 4; ++i) hd_emu_exchange[tid][i] = a[i];
    hd_emu_exchange[tid][4] = b[0];
    hd_emu_exchange[tid][5] = b[1];
    hd_emu_warp_sync();
    const unsigned g = lane / 4, t = lane % 4, depth = kind == 2 ? 8 : 16;
    for (unsigned i = 0; i < 4; ++i) {
        const unsigned row = g + 8 * (i / 2), col = 2 * t + i % 2;
        float acc = d[i];
        for (unsigned k = 0; k < depth; ++k) acc += hd_emu_a(base, kind, row, k) * hd_emu_b(base, kind, k, col);
        d[i] = acc;
    }
    hd_emu_warp_sync();
}
static inline void hd_mma_bf16(float* d, const unsigned* a, const unsigned* b) { hd_emu_mma(d, a, b, 0); }
static inline void hd_mma_f16(float* d, const unsigned* a, const unsigned* b) { hd_emu_mma(d, a, b, 1); }
static inline void hd_mma_tf32(float* d, const unsigned* a, const unsigned* b) { hd_emu_mma(d, a, b, 2); }
// ldmatrix .x<count>: lanes 8j..8j+7 address the rows of 8×8 tile j (16-bit elements); this
// thread's register j is row lane/4 of tile j, columns 2(lane%4) and 2(lane%4) + 1.
static inline void hd_emu_ldmatrix(unsigned* r, const void* p, unsigned count) {
    const unsigned tid = hd_emu_tid(), lane = tid % 32, base = tid - lane;
    hd_emu_address[tid] = p;
    hd_emu_warp_sync();
    for (unsigned j = 0; j < count; ++j) {
        const unsigned short* row = (const unsigned short*)hd_emu_address[base + 8 * j + lane / 4];
        r[j] = (unsigned)row[2 * (lane % 4)] | (unsigned)row[2 * (lane % 4) + 1] << 16;
    }
    hd_emu_warp_sync();
}
static inline void hd_ldmatrix_x4(unsigned* r, const void* p) { hd_emu_ldmatrix(r, p, 4); }
static inline void hd_ldmatrix_x2(unsigned* r, const void* p) { hd_emu_ldmatrix(r, p, 2); }
// .trans: register j is column lane/4 of tile j, rows 2(lane%4) and 2(lane%4) + 1 (the tile
// transposed, then read as above).
static inline void hd_emu_ldmatrix_trans(unsigned* r, const void* p, unsigned count) {
    const unsigned tid = hd_emu_tid(), lane = tid % 32, base = tid - lane;
    hd_emu_address[tid] = p;
    hd_emu_warp_sync();
    for (unsigned j = 0; j < count; ++j) {
        const unsigned short* lo = (const unsigned short*)hd_emu_address[base + 8 * j + 2 * (lane % 4)];
        const unsigned short* hi = (const unsigned short*)hd_emu_address[base + 8 * j + 2 * (lane % 4) + 1];
        r[j] = (unsigned)lo[lane / 4] | (unsigned)hi[lane / 4] << 16;
    }
    hd_emu_warp_sync();
}
static inline void hd_ldmatrix_x4_trans(unsigned* r, const void* p) { hd_emu_ldmatrix_trans(r, p, 4); }
static inline void hd_ldmatrix_x2_trans(unsigned* r, const void* p) { hd_emu_ldmatrix_trans(r, p, 2); }
// cp.async as a copy at once: the first `bytes` from global memory, the rest of the size
// zeroed; commit and wait have nothing left to do (the barriers after them still order the
// copies against the other threads' reads, which race_check sees).
static inline void hd_emu_cp_async(void* d, const void* s, unsigned size, unsigned bytes) {
    // Byte by byte: race_check's ThreadSanitizer did not see the stores of a memcpy here.
    for (unsigned i = 0; i < size; ++i)
        ((unsigned char*)d)[i] = i < bytes ? ((const unsigned char*)s)[i] : 0;
}
static inline void hd_cp_async16(void* d, const void* s, unsigned bytes) { hd_emu_cp_async(d, s, 16, bytes); }
static inline void hd_cp_async8(void* d, const void* s, unsigned bytes) { hd_emu_cp_async(d, s, 8, bytes); }
static inline void hd_cp_async4(void* d, const void* s, unsigned bytes) { hd_emu_cp_async(d, s, 4, bytes); }
static inline void hd_cp_async_commit() {}
static inline void hd_cp_async_wait0() {}
static inline void hd_cp_async_wait1() {}
// cvt.rna.tf32.f32: the 10-bit mantissa rounded to nearest, ties away from zero (the low 13
// bits zero); NaN stays NaN.
static inline unsigned hd_tf32(float x) {
    unsigned u;
    __builtin_memcpy(&u, &x, 4);
    if ((u & 0x7f800000u) == 0x7f800000u) return (u & 0x7fffffu) ? 0x7fffffffu : u;
    return (u + 0x1000u) & 0xffffe000u;
}
extern "C" void hd_emu_launch(void (*fn)(void**), void** args, unsigned gx, unsigned gy,
                              unsigned gz, unsigned bx, unsigned by, unsigned bz) {
    gridDim = {gx, gy, gz};
    blockDim = {bx, by, bz};
    unsigned nt = bx * by * bz;
    std::barrier<> bar(nt);
    hd_emu_barrier = &bar;
    std::vector<std::unique_ptr<std::barrier<>>> warps;
    for (unsigned w = 0; w * 32 < nt; ++w)
        warps.push_back(std::make_unique<std::barrier<>>(nt - w * 32 < 32 ? nt - w * 32 : 32));
    hd_emu_warps = &warps;
    std::vector<std::thread> threads;
    for (unsigned t = 0; t < nt; ++t)
        threads.emplace_back([=, &bar] {
            threadIdx = {t % bx, (t / bx) % by, t / (bx * by)};
            // Blocks last to first: a GPU runs them in no set order, so a kernel whose result
            // depends on it (a later block overwriting an earlier one's elements) shows here.
            for (unsigned z = gz; z-- > 0;)
                for (unsigned y = gy; y-- > 0;)
                    for (unsigned x = gx; x-- > 0;) {
                        blockIdx = {x, y, z};
                        fn(args);
                        bar.arrive_and_wait();
                    }
        });
    for (std::thread& t : threads) t.join();
}
)";

using Launcher = void (*)(void (*)(void**), void**, unsigned, unsigned, unsigned, unsigned,
                          unsigned, unsigned);

bool runs(const std::string& compiler) {
    std::string cmd = compiler + " --version > /dev/null 2>&1";
    return std::system(cmd.c_str()) == 0;
}

std::filesystem::path work_directory() {
    auto dir = std::filesystem::temp_directory_path() / "hedra_cuda_emulation";
    std::filesystem::create_directories(dir);
    return dir;
}

} // namespace

void* emulation_library(const std::string& source) {
    static std::mutex mutex;
    std::lock_guard<std::mutex> lock(mutex);
    std::string text = std::string(kEmulationHeader) + source;
    std::string key = backend::sha256_hex(text).substr(0, 24);
    auto dir = work_directory();
    auto so = dir / ("emu_" + key + ".so");
    if (!std::filesystem::exists(so)) {
        auto cpp = dir / ("emu_" + key + ".cpp"), log = dir / ("emu_" + key + ".log");
        auto tmp = dir / ("emu_" + key + ".so.tmp" + std::to_string(::getpid()));
        std::ofstream(cpp) << text;
        auto command = [&](const std::string& checks) {
            return emulation_compiler() +
                   " -std=c++20 -O1 -fno-strict-aliasing -shared -fPIC -pthread "
                   "-ffp-contract=off " +
                   checks + " -o " + tmp.string() + " " + cpp.string() + " > " + log.string() +
                   " 2>&1";
        };
        // Without the sanitizer's runtime (a compiler installed without libubsan), the
        // emulation runs unchecked rather than not at all.
        if (std::system(command("-fsanitize=alignment -fno-sanitize-recover=alignment").c_str()) !=
                0 &&
            std::system(command("").c_str()) != 0) {
            std::stringstream s;
            s << std::ifstream(log).rdbuf();
            throw Error("emulation: cannot compile " + cpp.string() + ":\n" + s.str());
        }
        std::filesystem::rename(tmp, so);
    }
    void* handle = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle)
        throw Error(std::string("emulation: cannot load ") + so.string() + ": " + dlerror());
    return handle;
}

namespace {

const HostArray& input_of(const poly::Buffer& b) {
    if (auto memo = b.node->memo()) return *memo;
    HEDRA_INTERNAL_CHECK(b.node->kind == NodeKind::Data, "emulation: an input without data");
    return b.node->data;
}

} // namespace

std::string emulation_compiler() {
    static const std::string compiler = [] {
        std::vector<std::string> candidates;
        if (const char* env = std::getenv("CXX"); env && *env) candidates.push_back(env);
        candidates.push_back("c++");
        candidates.push_back("g++");
        for (const std::string& c : candidates)
            if (runs(c)) return c;
        return std::string();
    }();
    return compiler;
}

std::vector<HostArray> emulate_cuda(const poly::ProgramIR& program,
                                    const backend::CudaLoweredProgram& lowered) {
    void* handle = emulation_library(lowered.source);
    auto launch = reinterpret_cast<Launcher>(dlsym(handle, "hd_emu_launch"));
    HEDRA_INTERNAL_CHECK(launch != nullptr, "emulation: no hd_emu_launch");
    std::vector<std::vector<unsigned char>> memory;
    for (const poly::Buffer& b : program.buffers) {
        std::size_t bytes = b.bytes();
        memory.emplace_back(bytes + 64, 0xcd); // uninitialised memory is not zero on a GPU
        if (b.role == poly::BufferRole::Input && bytes > 0)
            std::memcpy(memory.back().data(), input_of(b).raw(), bytes);
    }
    for (const backend::ScratchBuffer& s : lowered.scratch)
        memory.emplace_back(s.bytes() + 64, 0xcd);
    for (const backend::CudaLaunch& l : lowered.launches) {
        auto fn = reinterpret_cast<void (*)(void**)>(dlsym(handle, (l.function + "_emu").c_str()));
        HEDRA_INTERNAL_CHECK(fn != nullptr, "emulation: no " + l.function + "_emu");
        std::vector<void*> args;
        for (int b : l.buffers)
            args.push_back(memory.at(static_cast<std::size_t>(b)).data());
        launch(fn, args.data(), l.grid[0], l.grid[1], l.grid[2], l.block[0], l.block[1],
               l.block[2]);
    }
    std::vector<HostArray> out;
    for (int b : program.outputs) {
        const poly::Buffer& buf = program.buffers.at(static_cast<std::size_t>(b));
        HostArray h(buf.sizes, buf.dtype);
        if (h.bytes() > 0)
            std::memcpy(h.raw_mutable(), memory[static_cast<std::size_t>(b)].data(), h.bytes());
        out.push_back(h);
    }
    return out;
}

namespace {

// Runs `command`, returning its exit status and (in `output`) what it printed.
int run_command(const std::string& command, const std::filesystem::path& log, std::string& output) {
    int rc = std::system((command + " > " + log.string() + " 2>&1").c_str());
    std::stringstream s;
    s << std::ifstream(log).rdbuf();
    output = s.str();
    return rc;
}

// main() of the race-check executable: the buffers as emulate_cuda lays them out, the inputs
// read from the file argv[1], the launches in order.
std::string race_check_main(const poly::ProgramIR& program,
                            const backend::CudaLoweredProgram& lowered,
                            std::vector<std::size_t>& input_bytes) {
    std::string m = "\n#include <cstdio>\nint main(int argc, char** argv) {\n"
                    "    if (argc < 2) return 2;\n"
                    "    std::FILE* f = std::fopen(argv[1], \"rb\");\n"
                    "    if (!f) return 2;\n"
                    "    std::vector<std::vector<unsigned char>> m;\n";
    for (const poly::Buffer& b : program.buffers) {
        std::size_t n = b.bytes();
        m += "    m.emplace_back(" + std::to_string(n + 64) + ", 0xcd);\n";
        if (b.role == poly::BufferRole::Input && n > 0) {
            m += "    if (std::fread(m.back().data(), 1, " + std::to_string(n) +
                 ", f) != " + std::to_string(n) + ") return 2;\n";
            input_bytes.push_back(n);
        } else {
            input_bytes.push_back(0);
        }
    }
    for (const backend::ScratchBuffer& sb : lowered.scratch)
        m += "    m.emplace_back(" + std::to_string(sb.bytes() + 64) + ", 0xcd);\n";
    m += "    std::fclose(f);\n";
    for (const backend::CudaLaunch& l : lowered.launches) {
        m += "    {\n        void* args[] = {nullptr";
        for (int b : l.buffers)
            m += ", m[" + std::to_string(b) + "].data()";
        m += "};\n        hd_emu_launch(" + l.function + "_emu, args + 1, " +
             std::to_string(l.grid[0]) + ", " + std::to_string(l.grid[1]) + ", " +
             std::to_string(l.grid[2]) + ", " + std::to_string(l.block[0]) + ", " +
             std::to_string(l.block[1]) + ", " + std::to_string(l.block[2]) + ");\n    }\n";
    }
    return m + "    return 0;\n}\n";
}

} // namespace

std::string race_check(const poly::ProgramIR& program, const backend::CudaLoweredProgram& lowered) {
    if (emulation_compiler().empty()) return "skipped: no host C++ compiler";
    std::vector<std::size_t> input_bytes;
    std::string text = std::string(kEmulationHeader) + lowered.source +
                       race_check_main(program, lowered, input_bytes);
    std::string key = backend::sha256_hex(text).substr(0, 24);
    auto dir = work_directory();
    auto exe = dir / ("race_" + key), log = dir / ("race_" + key + ".log");
    std::string output;
    if (!std::filesystem::exists(exe)) {
        auto cpp = dir / ("race_" + key + ".cpp");
        auto tmp = dir / ("race_" + key + ".tmp" + std::to_string(::getpid()));
        std::ofstream(cpp) << text;
        if (run_command(emulation_compiler() +
                            " -std=c++20 -O1 -g -fsanitize=thread -fno-strict-aliasing -pthread "
                            "-ffp-contract=off -o " +
                            tmp.string() + " " + cpp.string(),
                        log, output) != 0)
            return "skipped: the host compiler cannot build with -fsanitize=thread:\n" + output;
        std::filesystem::rename(tmp, exe);
    }
    auto inputs = dir / ("race_" + key + ".in" + std::to_string(::getpid()));
    {
        std::ofstream in(inputs, std::ios::binary);
        for (std::size_t b = 0; b < program.buffers.size(); ++b)
            if (input_bytes[b] > 0)
                in.write(static_cast<const char*>(input_of(program.buffers[b]).raw()),
                         static_cast<std::streamsize>(input_bytes[b]));
    }
    int rc = run_command("TSAN_OPTIONS='halt_on_error=1 exitcode=66' " + exe.string() + " " +
                             inputs.string(),
                         log, output);
    std::filesystem::remove(inputs);
    if (rc == 0 && output.find("ThreadSanitizer") == std::string::npos) return "";
    return "race check of " + exe.string() + " (exit status " + std::to_string(rc) + "):\n" +
           output.substr(0, 6000);
}

} // namespace hedra::test
