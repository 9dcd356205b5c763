// The tensor-core kernels through the toolkit without a GPU: NVRTC compiles each to PTX for
// compute_80 and compute_90, `ptxas -v` assembles it for sm_80 and sm_90 without spills, and
// `cuobjdump -sass` shows the tensor-core instructions meant: HMMA of the operand format,
// LDSM (ldmatrix) for 16-bit operands, LDGSTS (cp.async) where the operands' runs are aligned.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "cuda/cuda_programs.hpp"
#include "cuda/cuda_testing.hpp"

using namespace hedra;

#if defined(HEDRA_PTXAS)

namespace {

namespace fs = std::filesystem;

struct Run {
    int status = -1;
    std::string out;
};

Run run_shell(const std::string& command, const fs::path& log) {
    int rc = std::system((command + " > '" + log.string() + "' 2>&1").c_str());
    std::ifstream in(log);
    std::ostringstream s;
    s << in.rdbuf();
    return {WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, s.str()};
}

struct Scratch {
    fs::path path = fs::temp_directory_path() / ("hedra_mma_ptxas_" + std::to_string(getpid()));
    Scratch() { fs::create_directories(path); }
    ~Scratch() {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
};

struct MmaProgram {
    std::string name;
    std::string hmma; // the SASS instruction, as a regular expression
    bool ldmatrix;
    bool async; // some operand copied by cp.async
    test::LoweredArrays lowered;
};

std::vector<MmaProgram> mma_programs() {
    std::vector<MmaProgram> out;
    auto add = [&](const std::string& name, const std::string& hmma, bool ldmatrix, bool async,
                   DType dt, Shape sa, Shape sb, bool tf32) {
        Array a = placeholder(sa, dt), b = placeholder(sb, dt);
        backend::CudaLowerOptions o;
        o.allow_tf32 = tf32;
        Array c = matmul(a, b);
        out.push_back({name, hmma, ldmatrix, async, test::lower_arrays({c, relu(c)}, o, {a, b})});
    };
    // HMMA.<m><n><k>.<accumulator>[.<operands>]: f16 operands are the default (no suffix).
    const std::string bf16 = R"(HMMA\.16816\.F32\.BF16 )";
    add("bf16 64x64 tiles", bf16, true, true, DType::BF16, Shape::of({1024, 256}),
        Shape::of({256, 768}), false);
    add("bf16 128x128 tiles", bf16, true, true, DType::BF16, Shape::of({2048, 1024}),
        Shape::of({1024, 2048}), false);
    // K = 33: no aligned runs, every element copied on its own.
    add("f16 ragged, batched", R"(HMMA\.16816\.F32 )", true, false, DType::F16,
        Shape::of({3, 70, 33}), Shape::of({3, 33, 45}), false);
    add("tf32", R"(HMMA\.1688\.F32\.TF32 )", false, true, DType::F32, Shape::of({1024, 512}),
        Shape::of({512, 768}), true);
    // A 3x3 convolution as an implicit GEMM (K = channels × 3 × 3).
    Array x = placeholder(Shape::of({8, 32, 30, 30}), DType::BF16),
          w = placeholder(Shape::of({64, 32, 3, 3}), DType::BF16);
    Array y = test::cuda_conv2d(cast(x, DType::F32), cast(w, DType::F32), 1);
    out.push_back({"bf16 conv 3x3", bf16, true, false, test::lower_arrays({relu(y)}, {}, {x, w})});
    return out;
}

} // namespace

TEST_CASE("tensor cores: NVRTC compiles the mma kernels for sm_80 and sm_90, ptxas shows HMMA "
          "and no spills") {
    if (test::skip_without_nvrtc()) return;
    if (test::skip_because(fs::exists(HEDRA_PTXAS) ? "" : "no ptxas at " HEDRA_PTXAS)) return;
#ifdef HEDRA_CUOBJDUMP
    const fs::path cuobjdump = HEDRA_CUOBJDUMP;
#else
    const fs::path cuobjdump; // the SASS checks are skipped
    test::skip_because("no cuobjdump (the toolkit's, or PyPI's nvidia-cuda-cuobjdump): the PTX "
                       "and ptxas checks run, not the SASS checks");
#endif
    Scratch scratch;
    static const std::regex spills(R"((\d+) bytes spill stores, (\d+) bytes spill loads)"),
        registers(R"(Used (\d+) registers)");
    for (MmaProgram& p : mma_programs()) {
        CAPTURE(p.name);
        const std::string& source = p.lowered.cuda.source;
        REQUIRE(source.find("contraction_mma") != std::string::npos);
        for (std::string arch : {"80", "90"}) {
            CAPTURE(arch);
            backend::cuda::NvrtcImage ptx;
            try {
                ptx = backend::cuda::Nvrtc::instance().compile(source, "compute_" + arch);
            } catch (const Error& e) {
                FAIL(e.what());
            }
            const fs::path file = scratch.path / "k.ptx", cubin = scratch.path / "k.cubin";
            std::ofstream(file, std::ios::binary) << ptx.image;
            Run as = run_shell("'" HEDRA_PTXAS "' -v -arch=sm_" + std::string(arch) + " '" +
                                   file.string() + "' -o '" + cubin.string() + "'",
                               scratch.path / "ptxas.log");
            INFO("ptxas said:\n" << as.out);
            REQUIRE(as.status == 0);
            int reported = 0;
            for (std::sregex_iterator m(as.out.begin(), as.out.end(), spills), end; m != end;
                 ++m, ++reported) {
                CHECK((*m)[1].str() == "0");
                CHECK((*m)[2].str() == "0");
            }
            CHECK(reported > 0);
            std::smatch used;
            if (std::regex_search(as.out, used, registers))
                MESSAGE(p.name << " sm_" << arch << ": " << used[1].str() << " registers");
            // The PTX has the instructions; ptxas assembled them for this architecture.
            CHECK(ptx.image.find(!p.ldmatrix ? "mma.sync.aligned.m16n8k8.row.col.f32.tf32"
                                             : "mma.sync.aligned.m16n8k16.row.col.f32") !=
                  std::string::npos);
            CHECK((ptx.image.find("ldmatrix.sync.aligned") != std::string::npos) == p.ldmatrix);
            if (cuobjdump.empty()) continue;
            // cuobjdump runs nvdisasm, found beside it or on the PATH.
            Run sass = run_shell("PATH='" + cuobjdump.parent_path().string() + "':\"$PATH\" '" +
                                     cuobjdump.string() + "' -sass '" + cubin.string() + "'",
                                 scratch.path / "sass.log");
            REQUIRE(sass.status == 0);
            CHECK(sass.out.find("HMMA.") != std::string::npos);
            CHECK(std::regex_search(sass.out, std::regex(p.hmma)));
            CHECK((sass.out.find("LDSM") != std::string::npos) == p.ldmatrix);
            // cp.async is LDGSTS in SASS, where gpu.tile found aligned runs to copy.
            const bool async = source.find("hd_cp_async_commit();") != std::string::npos;
            CHECK((sass.out.find("LDGSTS") != std::string::npos) == async);
            CHECK(async == p.async);
        }
    }
}

#else

TEST_CASE("tensor cores: NVRTC compiles the mma kernels for sm_80 and sm_90, ptxas shows HMMA "
          "and no spills") {
    test::skip_because("no ptxas in the CUDA toolkit this build was configured with");
}

#endif
