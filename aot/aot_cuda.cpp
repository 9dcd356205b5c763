// hedra-aot's cuda target (aot_cuda.hpp): lowering, and the C function over the driver API.
#include "aot/aot_cuda.hpp"

#include <algorithm>

#include "aot/aot_files.hpp"
#include "aot/cuda_driver_loader_source.hpp"
#include "aot/runtime/cuda_status.hpp"
#include "core/error.hpp"
#include "core/range.hpp"
#include "core/symbolic.hpp"
#ifdef HEDRA_AOT_HAVE_CUDA
#include "backends/cuda/render/cuda_lower.hpp"
#include "backends/cuda/runtime/nvrtc_compiler.hpp"
#include "scheduler/partition.hpp"
#endif

namespace hedra::aot {
namespace {

using hedra_aot_cuda::kDriverCallCode, hedra_aot_cuda::kNoDeviceCode, hedra_aot_cuda::kNoDriverCode,
    hedra_aot_cuda::kNoModuleCode;

std::string byte_count(const AotArray& a) {
    std::size_t n = dtype_size(a.dtype);
    for (std::int64_t s : a.sizes)
        n *= static_cast<std::size_t>(s);
    return std::to_string(n);
}

std::string error_message(const AotProgram& p) {
    std::string s = "extern \"C\" const char* " + p.name + "_error_message(int code) {\n";
    s += "    switch (code) {\n    case 0: return \"no error\";\n";
    s += "    case 1: return \"the workspace is not 256-byte aligned\";\n";
    s += "    case 2: return \"cannot allocate the workspace (" +
         std::to_string(p.workspace_bytes) + " bytes of device memory)\";\n";
    s += "    case " + std::to_string(kNoDriverCode) +
         ": return \"cannot load the CUDA driver (libcuda.so.1, or $HEDRA_CUDA_DRIVER)\";\n";
    s += "    case " + std::to_string(kNoDeviceCode) + ": return \"no CUDA device 0 to run on\";\n";
    s += "    case " + std::to_string(kNoModuleCode) +
         ": return \"the device cannot load the kernels (" + p.architecture + ")\";\n";
    s +=
        "    case " + std::to_string(kDriverCallCode) + ": return \"a CUDA driver call failed\";\n";
    return s + "    default: return \"unknown error code\";\n    }\n}\n\n";
}

// The launches as a table: grid, block, and the arguments' positions in the pointers array.
std::string launch_table(const AotProgram& p) {
    std::string s = "struct Launch {\n    unsigned grid[3], block[3];\n    int first, count;\n};\n";
    s += "const Launch kLaunches[] = {\n";
    std::string args;
    int first = 0;
    std::size_t widest = 1;
    for (const AotLaunch& l : p.launches) {
        s += "    {{" + std::to_string(l.grid[0]) + ", " + std::to_string(l.grid[1]) + ", " +
             std::to_string(l.grid[2]) + "}, {" + std::to_string(l.block[0]) + ", " +
             std::to_string(l.block[1]) + ", " + std::to_string(l.block[2]) + "}, " +
             std::to_string(first) + ", " + std::to_string(l.args.size()) + "}, // " + l.function +
             "\n";
        for (int a : l.args)
            args += std::to_string(a) + ",";
        first += static_cast<int>(l.args.size());
        widest = std::max(widest, l.args.size());
    }
    if (p.launches.empty()) s += "    {{1, 1, 1}, {1, 1, 1}, 0, 0}, // none: no kernel runs\n";
    s += "};\nconst int kArgs[] = {" + args + "0};\n";
    s += "constexpr int kMaxArgs = " + std::to_string(widest) + ";\n";
    return s;
}

} // namespace

poly::ProgramIR lower_cuda_program(const AotRequest& r, const AotTarget& target, AotProgram& p) {
#ifndef HEDRA_AOT_HAVE_CUDA
    (void)r, (void)target, (void)p;
    throw Error("hedra-aot: the cuda target needs hedra built with the CUDA toolkit; this one "
                "was built without it");
#else
    std::vector<int> params = symbolic_params(r.placeholders);
    if (!params.empty())
        throw Error("hedra-aot: the cuda target compiles static sizes only, and '" + r.name +
                    "' has the symbolic size '" + param_name(params[0]) +
                    "'; give the program fixed sizes (a generator parameter, for instance)");
    backend::CudaLowerOptions lo;
    if (target.cuda_multiprocessors > 0) lo.gpu.multiprocessors = target.cuda_multiprocessors;
    p.architecture = target.cuda_architecture.empty() ? backend::cuda::default_architecture("")
                                                      : target.cuda_architecture;
    // The mapping uses what the architecture has ("sm_75": no tensor-core mma.sync).
    if (int cc = backend::cuda::compute_capability_of(p.architecture); cc > 0)
        lo.gpu.compute_capability = cc;
    poly::ProgramIR ir = sched::partition(r.outputs, r.placeholders,
                                          sched::partition_options(sched::Target::for_gpu(lo.gpu)));
    backend::CudaLoweredProgram lowered = backend::lower_cuda(ir, lo);
    backend::cuda::NvrtcImage image =
        backend::cuda::Nvrtc::instance().compile(lowered.source, p.architecture);
    p.source = lowered.source;
    p.image = image.image;
    p.cubin = image.cubin;
    if (!p.cubin) p.image.push_back('\0'); // PTX is loaded as a C string
    for (const backend::CudaLaunch& l : lowered.launches)
        p.launches.push_back({l.function, l.grid, l.block, l.buffers});
    for (const backend::ScratchBuffer& s : lowered.scratch)
        p.scratch_offset.push_back(static_cast<std::int64_t>(s.bytes()));
    return ir;
#endif
}

std::string aot_cuda_wrapper(const AotProgram& p) {
    const std::string& n = p.name;
    std::string s = "// " + n + ".cpp: generated by hedra-aot (target cuda). The C function of " +
                    n + ".h: the kernels of\n// " + n + ".program.cu, compiled for " +
                    p.architecture + ", launched through the CUDA driver API. Do not edit.\n";
    s += "#include \"" + n + ".h\"\n\n";
    s += "// The CUDA driver loader (hedra's aot/runtime/cuda_driver_loader.hpp).\n";
    s += cuda_driver_loader_source();
    s += "\n#include <cstdint>\n\nnamespace {\n\nusing namespace hedra_aot_cuda;\n"
         "using Driver = CudaDriver;\n\n";
    s += "alignas(8) const unsigned char kImage[] = {\n" + c_bytes(p.image) + "};\n";
    s += "constexpr int kFunctions = " + std::to_string(p.launches.size()) + ";\n";
    s += "const char* const kFunctionNames[kFunctions + 1] = {";
    for (const AotLaunch& l : p.launches)
        s += "\"" + l.function + "\", ";
    s += "nullptr};\n";
    s += "constexpr int kEmbedded = " + std::to_string(p.embedded.size()) + ";\n";
    std::string data = "const void* const kEmbeddedData[kEmbedded + 1] = {",
                bytes = "const size_t kEmbeddedBytes[kEmbedded + 1] = {";
    for (const AotProgram::Embedded& e : p.embedded) {
        s += "const unsigned char embedded_b" + std::to_string(e.buffer) + "[] = {\n" +
             c_bytes(e.bytes) + "};\n";
        data += "embedded_b" + std::to_string(e.buffer) + ", ";
        bytes += std::to_string(e.bytes.size()) + ", ";
    }
    s += data + "nullptr};\n" + bytes + "0};\n" + launch_table(p) + "\n";
    s += "CUfunction g_functions[kFunctions + 1] = {};\n"
         "CUdeviceptr g_embedded[kEmbedded + 1] = {};\n"
         "const CudaModuleImage kModule = {kImage, kFunctionNames, kFunctions, kEmbeddedData,\n"
         "                                 kEmbeddedBytes, kEmbedded, g_functions, g_embedded};\n\n"
         "// The driver, its context and the module, loaded on the first call.\n"
         "Driver& driver() {\n    return loaded_cuda_driver(kModule);\n}\n"
         "\n} // namespace\n\n";
    s += "extern \"C\" size_t " + n + "_workspace_bytes(void) { return " +
         std::to_string(p.workspace_bytes) + "; }\n\n";
    s += error_message(p);

    std::string params;
    for (const AotArray& a : p.inputs)
        params += "const " + std::string(c_type(a.dtype)) + "* " + a.name + ", ";
    for (const AotArray& a : p.outputs)
        params += std::string(c_type(a.dtype)) + "* " + a.name + ", ";
    s += "extern \"C\" int " + n + "_c(" + params + "void* workspace, void* stream) {\n";
    s += "    Driver& d = driver();\n    if (d.status) return d.status;\n";
    s += "    if (d.cuCtxSetCurrent(d.context)) return kDriverCallCode;\n";
    s += "    CUstream queue = static_cast<CUstream>(stream);\n    CUdeviceptr owned = 0;\n";
    if (p.workspace_bytes > 0)
        s += "    if (!workspace) {\n        if (d.cuMemAlloc(&owned, " +
             std::to_string(p.workspace_bytes) +
             ")) return 2;\n        workspace = reinterpret_cast<void*>(owned);\n    }\n";
    s += "    if (!owned && reinterpret_cast<uintptr_t>(workspace) % 256 != 0) return 1;\n";
    s += "    const CUdeviceptr space = reinterpret_cast<CUdeviceptr>(workspace);\n    "
         "(void)space;\n";
    s += "    CUdeviceptr pointers[" + std::to_string(p.num_buffers + p.scratch_offset.size() + 1) +
         "] = {};\n";
    std::vector<bool> bound(p.num_buffers, false);
    auto bind = [&](int b, const std::string& pointer) {
        if (b < 0 || bound[static_cast<std::size_t>(b)]) return false;
        bound[static_cast<std::size_t>(b)] = true;
        s += "    pointers[" + std::to_string(b) + "] = " + pointer + ";\n";
        return true;
    };
    for (std::size_t b = 0; b < p.workspace_offset.size(); ++b)
        if (p.workspace_offset[b] >= 0)
            bind(static_cast<int>(b), "space + " + std::to_string(p.workspace_offset[b]));
    for (std::size_t e = 0; e < p.embedded.size(); ++e)
        bind(p.embedded[e].buffer, "d.embedded[" + std::to_string(e) + "]");
    for (const AotArray& a : p.inputs)
        bind(a.buffer, "reinterpret_cast<CUdeviceptr>(" + a.name + ")");
    std::string copies;
    for (const AotArray& a : p.outputs)
        if (!bind(a.buffer, "reinterpret_cast<CUdeviceptr>(" + a.name + ")"))
            copies += "    if (!result && (!d.cuMemcpyDtoDAsync || d.cuMemcpyDtoDAsync("
                      "reinterpret_cast<CUdeviceptr>(" +
                      a.name + "), pointers[" + std::to_string(a.buffer) + "], " + byte_count(a) +
                      ", queue)))\n        result = kDriverCallCode;\n";
    for (std::size_t k = 0; k < p.scratch_offset.size(); ++k)
        s += "    pointers[" + std::to_string(p.num_buffers + k) + "] = space + " +
             std::to_string(p.scratch_offset[k]) + ";\n";
    s += "    int result = 0;\n";
    s += "    for (int l = 0; l < kFunctions && !result; ++l) {\n";
    s += "        const Launch& launch = kLaunches[l];\n        void* args[kMaxArgs];\n";
    s += "        for (int a = 0; a < launch.count; ++a)\n";
    s += "            args[a] = &pointers[kArgs[launch.first + a]];\n";
    s += "        if (d.cuLaunchKernel(d.functions[l], launch.grid[0], launch.grid[1], "
         "launch.grid[2],\n                             launch.block[0], launch.block[1], "
         "launch.block[2], 0, queue, args,\n                             nullptr))\n";
    s += "            result = kDriverCallCode;\n    }\n";
    s += copies;
    s += "    if (owned) {\n        d.cuStreamSynchronize(queue);\n        d.cuMemFree(owned);\n   "
         " }\n";
    s += "    return result;\n}\n";
    return s;
}

} // namespace hedra::aot
