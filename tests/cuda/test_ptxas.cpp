// The generated GPU code through the toolkit's assembler, without a GPU: each golden CUDA source
// (tests/tools/golden/<name>.cuda.txt, what hedra-dump prints for matmul, conv2d, jacobi,
// softmax and matmul_bf16, a tensor-core kernel) is compiled by NVRTC to PTX for compute_90
// and assembled by `ptxas -v -arch=sm_90`. Every kernel must assemble to SASS and no contraction
// kernel may spill; each kernel's registers and spill bytes are compared with <name>.ptxas.txt
// beside the source, so a change that costs registers shows up as a diff to review. After
// reviewing, regenerate with HEDRA_UPDATE_GOLDEN=1 (after the CUDA sources' own goldens, which this
// test reads; docs/cuda.md). Register counts belong to one NVRTC and one ptxas: a golden recorded
// by other versions is reported, not compared.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "cuda/cuda_testing.hpp"

using namespace hedra;

#if defined(HEDRA_PTXAS) && defined(HEDRA_GOLDEN_DIR)

namespace {

namespace fs = std::filesystem;

std::string read_text(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

// A folder of this test process, removed when the test ends.
struct Scratch {
    fs::path path = fs::temp_directory_path() / ("hedra_ptxas_" + std::to_string(getpid()));
    Scratch() { fs::create_directories(path); }
    ~Scratch() {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
};

struct Run {
    int status = -1;
    std::string out; // standard output and error together
};

// `command` is shell text (quote paths).
Run run_shell(const std::string& command, const fs::path& log) {
    int rc = std::system((command + " > '" + log.string() + "' 2>&1").c_str());
    return {WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, read_text(log)};
}

// What ptxas reports of one kernel, and its launch strategy.
struct KernelUsage {
    std::string strategy;
    int registers = -1;
    int spill_stores = -1, spill_loads = -1;
};

// Function -> strategy ("contraction", "map", ...), from the "// launches, in order:" list that
// ends every generated source ("//   k0_0 contraction grid(1,2,1) ...").
std::map<std::string, KernelUsage> launched_kernels(const std::string& source) {
    std::map<std::string, KernelUsage> kernels;
    std::size_t at = source.find("// launches, in order:\n");
    REQUIRE(at != std::string::npos);
    std::istringstream lines(source.substr(at));
    std::string line;
    std::getline(lines, line);
    static const std::regex launch(R"(^//\s+(\w+)\s+(\w+)\s)");
    for (std::smatch m; std::getline(lines, line);)
        if (std::regex_search(line, m, launch))
            kernels.try_emplace(m[1].str(), KernelUsage{m[2].str()});
    return kernels;
}

// ptxas -v's report: "Compiling entry function 'k0_0'", then "Function properties for k0_0"
// with "N bytes stack frame, S bytes spill stores, L bytes spill loads", then "Used R
// registers". Properties of device functions that were not inlined are reported too; they count
// against no entry here.
void parse_report(const std::string& report, std::map<std::string, KernelUsage>& kernels) {
    static const std::regex entry(R"(Compiling entry function '(\w+)')"),
        properties(R"(Function properties for (\w+))"),
        spills(R"((\d+) bytes spill stores, (\d+) bytes spill loads)"),
        registers(R"(Used (\d+) registers)");
    std::istringstream lines(report);
    std::string line, current_entry, current_properties;
    for (std::smatch m; std::getline(lines, line);) {
        if (std::regex_search(line, m, entry)) {
            current_entry = m[1].str();
        } else if (std::regex_search(line, m, properties)) {
            current_properties = m[1].str();
        } else if (std::regex_search(line, m, spills)) {
            if (auto k = kernels.find(current_properties); k != kernels.end()) {
                k->second.spill_stores = std::stoi(m[1].str());
                k->second.spill_loads = std::stoi(m[2].str());
            }
        } else if (std::regex_search(line, m, registers)) {
            if (auto k = kernels.find(current_entry); k != kernels.end())
                k->second.registers = std::stoi(m[1].str());
        }
    }
}

// "V13.0.88", from `ptxas --version`.
std::string ptxas_version(const Scratch& scratch) {
    Run r = run_shell("'" HEDRA_PTXAS "' --version", scratch.path / "version.log");
    std::smatch m;
    static const std::regex version(R"(V\d+\.\d+\.\d+)");
    return r.status == 0 && std::regex_search(r.out, m, version) ? m.str() : "unknown";
}

// The golden file's text: the versions, then one line per kernel.
std::string golden_text(const std::string& versions,
                        const std::map<std::string, KernelUsage>& kernels) {
    std::string text = versions + "\n";
    for (const auto& [name, k] : kernels)
        text += name + " " + k.strategy + " registers " + std::to_string(k.registers) +
                " spill_stores " + std::to_string(k.spill_stores) + " spill_loads " +
                std::to_string(k.spill_loads) + "\n";
    return text;
}

void check_example(const std::string& example, const std::string& versions,
                   const Scratch& scratch) {
    CAPTURE(example);
    const fs::path dir = HEDRA_GOLDEN_DIR;
    std::string source = read_text(dir / (example + ".cuda.txt"));
    REQUIRE_MESSAGE(!source.empty(), "missing " << (dir / (example + ".cuda.txt")).string());
    std::map<std::string, KernelUsage> kernels = launched_kernels(source);
    REQUIRE(!kernels.empty());

    backend::cuda::NvrtcImage ptx;
    try {
        ptx = backend::cuda::Nvrtc::instance().compile(source, "compute_90");
    } catch (const Error& e) {
        FAIL(e.what());
    }
    const fs::path ptx_file = scratch.path / (example + ".ptx"),
                   cubin = scratch.path / (example + ".cubin");
    std::ofstream(ptx_file, std::ios::binary) << ptx.image;
    {
        Run r = run_shell("'" HEDRA_PTXAS "' -v -arch=sm_90 '" + ptx_file.string() + "' -o '" +
                              cubin.string() + "'",
                          scratch.path / (example + ".ptxas.log"));
        INFO("ptxas said:\n" << r.out);
        REQUIRE(r.status == 0);
        CHECK(fs::file_size(cubin) > 0);
        parse_report(r.out, kernels);
        for (const auto& [name, k] : kernels) {
            CAPTURE(name);
            CHECK_MESSAGE(k.registers > 0, "no SASS reported for " << name);
            CHECK(k.spill_stores >= 0);
            CHECK(k.spill_loads >= 0);
            if (k.strategy.rfind("contraction", 0) == 0) {
                INFO(k.strategy << " kernel spills");
                CHECK(k.spill_stores == 0);
                CHECK(k.spill_loads == 0);
            }
        }
    }

    std::string got = golden_text(versions, kernels);
    const fs::path golden = dir / (example + ".ptxas.txt");
    if (const char* update = std::getenv("HEDRA_UPDATE_GOLDEN"); update && *update) {
        std::ofstream(golden, std::ios::binary) << got;
        MESSAGE("updated " << golden.string());
        return;
    }
    std::string want = read_text(golden);
    REQUIRE_MESSAGE(!want.empty(), "missing golden file " << golden.string()
                                                          << "; run with HEDRA_UPDATE_GOLDEN=1");
    std::string recorded = want.substr(0, want.find('\n'));
    if (recorded != versions) {
        MESSAGE("registers not compared: " << golden.string() << " was recorded by '" << recorded
                                           << "', this is '" << versions << "'; now:\n"
                                           << got);
        return;
    }
    INFO("golden " << golden.string() << "\n(review, then regenerate with HEDRA_UPDATE_GOLDEN=1)");
    CHECK(got == want);
}

} // namespace

TEST_CASE("cuda: the golden kernels assemble for sm_90 with the recorded registers, contractions "
          "without spills") {
    if (test::skip_without_nvrtc()) return;
    if (test::skip_because(fs::exists(HEDRA_PTXAS) ? "" : "no ptxas at " HEDRA_PTXAS)) return;
    Scratch scratch;
    const backend::cuda::Nvrtc& nvrtc = backend::cuda::Nvrtc::instance();
    std::string versions = "# NVRTC " + std::to_string(nvrtc.major) + "." +
                           std::to_string(nvrtc.minor) + " (compute_90 PTX), ptxas " +
                           ptxas_version(scratch) + " (-arch=sm_90)";
    for (const char* example : {"matmul", "conv2d", "jacobi", "softmax", "matmul_bf16"})
        check_example(example, versions, scratch);
}

#else

TEST_CASE("cuda: the golden kernels assemble for sm_90 with the recorded registers, contractions "
          "without spills") {
    test::skip_because("no ptxas in the CUDA toolkit this build was configured with");
}

#endif
