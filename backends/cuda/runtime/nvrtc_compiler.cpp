// The dlopen'ed NVRTC and the on-disk cache of its images (see nvrtc_compiler.hpp).
#include "backends/cuda/runtime/nvrtc_compiler.hpp"

#include <algorithm>
#include <cstdlib>
#include <dlfcn.h>
#include <fstream>
#include <mutex>
#include <nvrtc.h>

#include "backends/common/hash.hpp"
#include "backends/common/kernel_cache.hpp"
#include "core/error.hpp"

#ifndef HEDRA_NVRTC_LIBRARY_DIR
#define HEDRA_NVRTC_LIBRARY_DIR ""
#endif
#ifndef HEDRA_VERSION_STRING
#define HEDRA_VERSION_STRING "unknown"
#endif

namespace hedra::backend::cuda {

namespace {

#define HEDRA_NVRTC_FUNCTIONS(X)                                                                   \
    X(nvrtcVersion)                                                                                \
    X(nvrtcGetErrorString)                                                                         \
    X(nvrtcCreateProgram)                                                                          \
    X(nvrtcDestroyProgram)                                                                         \
    X(nvrtcCompileProgram)                                                                         \
    X(nvrtcGetProgramLogSize)                                                                      \
    X(nvrtcGetProgramLog)                                                                          \
    X(nvrtcGetPTXSize)                                                                             \
    X(nvrtcGetPTX)                                                                                 \
    X(nvrtcGetCUBINSize)                                                                           \
    X(nvrtcGetCUBIN)                                                                               \
    X(nvrtcGetNumSupportedArchs)                                                                   \
    X(nvrtcGetSupportedArchs)

struct Api {
#define HEDRA_DECLARE(fn) decltype(&::fn) fn = nullptr;
    HEDRA_NVRTC_FUNCTIONS(HEDRA_DECLARE)
#undef HEDRA_DECLARE
};

Api g_api;
Nvrtc* g_nvrtc = nullptr;
std::string g_reason;
std::once_flag g_once;

std::vector<std::string> candidates() {
    std::vector<std::string> names;
    if (const char* env = std::getenv("HEDRA_NVRTC_LIBRARY"); env && *env) names.push_back(env);
    for (const char* n : {"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12"})
        names.push_back(n);
    std::string dir = HEDRA_NVRTC_LIBRARY_DIR;
    if (!dir.empty())
        for (const char* n : {"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12"})
            names.push_back(dir + "/" + n);
    return names;
}

std::string open_library(void*& handle, std::string& opened) {
    std::string tried;
    for (const std::string& name : candidates()) {
        handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (handle) {
            opened = name;
            break;
        }
        tried += (tried.empty() ? "" : ", ") + name;
    }
    if (!handle) return "no NVRTC library found (tried " + tried + "; set HEDRA_NVRTC_LIBRARY)";
#define HEDRA_LOAD(fn)                                                                             \
    g_api.fn = reinterpret_cast<decltype(g_api.fn)>(dlsym(handle, #fn));                           \
    if (!g_api.fn) return opened + " lacks " #fn;
    HEDRA_NVRTC_FUNCTIONS(HEDRA_LOAD)
#undef HEDRA_LOAD
    return "";
}

std::string result_text(nvrtcResult r) {
    const char* s = g_api.nvrtcGetErrorString ? g_api.nvrtcGetErrorString(r) : nullptr;
    return s ? s : "NVRTC error " + std::to_string(static_cast<int>(r));
}

KernelCache& image_cache() {
    static KernelCache cache(KernelCache::default_directory(), ".nvrtc");
    return cache;
}

// One NVRTC program, destroyed on every path.
struct Program {
    nvrtcProgram p = nullptr;
    ~Program() {
        if (p) g_api.nvrtcDestroyProgram(&p);
    }
    std::string log() const {
        std::size_t n = 0;
        if (g_api.nvrtcGetProgramLogSize(p, &n) != NVRTC_SUCCESS || n <= 1) return "";
        std::string s(n, '\0');
        g_api.nvrtcGetProgramLog(p, s.data());
        s.resize(n - 1);
        return s;
    }
};

} // namespace

std::string Nvrtc::unavailable_reason() {
    std::call_once(g_once, [] {
        auto* n = new Nvrtc(); // leaked on purpose, like the library handle
        g_reason = open_library(n->handle_, n->library);
        if (g_reason.empty()) {
            g_api.nvrtcVersion(&n->major, &n->minor);
            g_nvrtc = n;
        } else {
            delete n;
        }
    });
    return g_reason;
}

Nvrtc& Nvrtc::instance() {
    std::string reason = unavailable_reason();
    if (!reason.empty()) throw Error("cannot load NVRTC: " + reason);
    return *g_nvrtc;
}

std::vector<std::string> Nvrtc::options(const std::string& architecture,
                                        const std::vector<std::string>& extra) {
    std::vector<std::string> o = {"--gpu-architecture=" + architecture, "--std=c++17",
                                  "--device-as-default-execution-space", "--fmad=false", "-w"};
    o.insert(o.end(), extra.begin(), extra.end());
    return o;
}

std::vector<int> Nvrtc::supported_architectures() const {
    int n = 0;
    if (g_api.nvrtcGetNumSupportedArchs(&n) != NVRTC_SUCCESS || n <= 0) return {};
    std::vector<int> archs(static_cast<std::size_t>(n));
    g_api.nvrtcGetSupportedArchs(archs.data());
    return archs;
}

NvrtcImage Nvrtc::compile(const std::string& source, const std::string& architecture,
                          const std::vector<std::string>& extra) const {
    std::vector<std::string> opts = options(architecture, extra);
    NvrtcImage out;
    out.cubin = architecture.rfind("sm_", 0) == 0;
    std::string keyed = "hedra " HEDRA_VERSION_STRING "\nnvrtc " + std::to_string(major) + "." +
                        std::to_string(minor) + "\n";
    for (const std::string& o : opts)
        keyed += o + "\n";
    out.key = "cuda-" + sha256_hex(keyed + source);
    if (auto cached = image_cache().load(out.key)) {
        out.image = std::move(*cached);
        out.from_cache = true;
        return out;
    }
    Program prog;
    nvrtcResult r =
        g_api.nvrtcCreateProgram(&prog.p, source.c_str(), "hedra_kernels.cu", 0, nullptr, nullptr);
    if (r != NVRTC_SUCCESS) throw Error("nvrtc: cannot create a program: " + result_text(r));
    std::vector<const char*> argv;
    for (const std::string& o : opts)
        argv.push_back(o.c_str());
    r = g_api.nvrtcCompileProgram(prog.p, static_cast<int>(argv.size()), argv.data());
    out.log = prog.log();
    if (r != NVRTC_SUCCESS)
        throw Error("nvrtc: cannot compile the generated CUDA kernels (" + result_text(r) +
                    "); source saved to " + dump_cuda_source(out.key, source) + "\n" + out.log);
    std::size_t n = 0;
    r = out.cubin ? g_api.nvrtcGetCUBINSize(prog.p, &n) : g_api.nvrtcGetPTXSize(prog.p, &n);
    if (r != NVRTC_SUCCESS) throw Error("nvrtc: no compiled image: " + result_text(r));
    out.image.assign(n, '\0');
    r = out.cubin ? g_api.nvrtcGetCUBIN(prog.p, out.image.data())
                  : g_api.nvrtcGetPTX(prog.p, out.image.data());
    if (r != NVRTC_SUCCESS) throw Error("nvrtc: no compiled image: " + result_text(r));
    if (!out.cubin && !out.image.empty() && out.image.back() == '\0') out.image.pop_back();
    image_cache().store(out.key, out.image);
    return out;
}

std::string default_architecture(const std::string& device_architecture) {
    if (const char* env = std::getenv("HEDRA_CUDA_ARCH"); env && *env) return env;
    if (device_architecture.empty()) return "compute_90";
    int number = std::atoi(device_architecture.c_str() + 3), best = 0;
    if (Nvrtc::unavailable_reason().empty())
        for (int a : Nvrtc::instance().supported_architectures())
            if (a <= number && a > best) best = a;
    if (best == number) return device_architecture; // a cubin: no JIT when loading
    return "compute_" + std::to_string(best > 0 ? best : number);
}

int compute_capability_of(const std::string& architecture) {
    std::size_t at = architecture.find_last_of('_');
    return at == std::string::npos ? 0 : std::max(std::atoi(architecture.c_str() + at + 1), 0);
}

std::string dump_cuda_source(const std::string& key, const std::string& source) {
    std::filesystem::path path = image_cache().scratch_directory() / ("hedra_cuda_" + key + ".cu");
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f << source;
    return f ? path.string() : "(could not be saved to " + path.string() + ")";
}

} // namespace hedra::backend::cuda
