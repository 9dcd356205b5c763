// The layering of the sources (README "Layout"): data flows one way, core <- polyhedral <-
// scheduler <- backends; a backend includes backends/common, never another backend; ad builds
// core graphs and nn builds on ad; distributed (communicators, data parallelism) builds on nn,
// writes checkpoints with nn/io and runs NCCL on the cuda backend's device (streams, memory); nn/io
// (file formats) builds on core alone, and nn's core does not include it; aot (ahead-of-time
// libraries) builds on the openmp backend's lowering; no library file
// includes tools/, examples/, bench/ or tests/.
// Every quoted #include of every library file is checked against that table.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

// The layer of a path relative to the source root: its first folder, or backends/<name>, or
// nn/io; "registry" for the files that register every backend by name; "hedra" for hedra.hpp.
std::string layer_of(const std::string& path) {
    if (path == "hedra.hpp") return "hedra";
    std::size_t slash = path.find('/');
    if (slash == std::string::npos) return path;
    std::string top = path.substr(0, slash);
    if (top == "nn" && path.rfind("nn/io/", 0) == 0) return "nn/io";
    if (top != "backends") return top;
    std::size_t next = path.find('/', slash + 1);
    if (next == std::string::npos) return "registry"; // backends/builtin_backends.cpp
    std::string name = path.substr(0, next);
    if (path.find("/standalone/") != std::string::npos) return "registry";
    return name;
}

// What a file of `layer` may include, by the included file's layer.
bool may_include(const std::string& layer, const std::string& target) {
    static const std::map<std::string, std::set<std::string>> below = {
        {"core", {"core"}},
        {"polyhedral", {"core", "polyhedral"}},
        {"scheduler", {"core", "polyhedral", "scheduler"}},
        {"backends/common", {"core", "polyhedral", "scheduler", "backends/common"}},
        {"ad", {"core", "ad"}},
        {"nn", {"core", "ad", "nn"}},
        {"distributed", {"core", "ad", "nn", "nn/io", "distributed", "backends/cuda"}},
        {"nn/io", {"core", "nn/io"}},
        // ahead-of-time libraries: the openmp backend's lowering, without running the program
        {"aot",
         {"core", "polyhedral", "scheduler", "backends/common", "backends/openmp", "backends/cuda",
          "aot"}},
    };
    if (auto it = below.find(layer); it != below.end()) return it->second.count(target) > 0;
    if (layer == "registry")
        return target == "hedra" || target == "core" || target == "ad" ||
               target.rfind("backends/", 0) == 0;
    if (layer.rfind("backends/", 0) == 0) // one backend
        return target == layer || target == "backends/common" || target == "core" ||
               target == "polyhedral" || target == "scheduler";
    return true;
}

// The isl analyses and schedulers run inside the scheduler's pass list (scheduler/lower.hpp);
// a backend reads what the passes give (the kernel IR, loop ASTs, observers) and never runs them.
bool runs_isl(const std::string& header) {
    static const std::set<std::string> passes = {
        "polyhedral/scop.hpp",           "polyhedral/dependences.hpp",
        "polyhedral/dead_writes.hpp",    "polyhedral/isl_context.hpp",
        "polyhedral/isl_ptr.hpp",        "scheduler/compute_schedule.hpp",
        "scheduler/direct_schedule.hpp", "scheduler/tile.hpp",
        "scheduler/ast_build.hpp"};
    return passes.count(header) > 0;
}

// Within the cuda backend: the renderer (backends/cuda/render) prints the mapping passes'
// decisions and never touches the device; the device runtime (backends/cuda/runtime) runs
// images and knows nothing of rendering. Neither includes the other.
bool crosses_cuda_split(const std::string& file, const std::string& header) {
    auto in = [](const std::string& path, const char* folder) {
        return path.rfind(folder, 0) == 0;
    };
    return (in(file, "backends/cuda/render/") && in(header, "backends/cuda/runtime/")) ||
           (in(file, "backends/cuda/runtime/") && in(header, "backends/cuda/render/"));
}

struct Violation {
    std::string file;
    int line = 0;
    std::string include;
};

std::vector<Violation> violations(const fs::path& root) {
    static const std::regex include_line(R"(^\s*#\s*include\s*"([^"]+)\")");
    std::vector<Violation> out;
    for (const char* top :
         {"core", "polyhedral", "scheduler", "backends", "ad", "nn", "distributed", "aot"}) {
        for (const auto& entry : fs::recursive_directory_iterator(root / top)) {
            std::string ext = entry.path().extension().string();
            if (!entry.is_regular_file() || (ext != ".cpp" && ext != ".hpp")) continue;
            std::string file = fs::relative(entry.path(), root).generic_string();
            std::ifstream in(entry.path());
            std::string text;
            int n = 0;
            while (std::getline(in, text)) {
                ++n;
                std::smatch m;
                if (!std::regex_search(text, m, include_line)) continue;
                std::string inc = m[1];
                if (!fs::exists(root / inc)) continue; // a sibling header named relatively
                bool backend = file.rfind("backends/", 0) == 0;
                if (!may_include(layer_of(file), layer_of(inc)) || (backend && runs_isl(inc)) ||
                    crosses_cuda_split(file, inc))
                    out.push_back({file, n, inc});
            }
        }
    }
    return out;
}

// The mapping rule: decisions live in passes, renderers only print. A file under backends/
// that reads a machine fact — a field of sched::GpuTarget, or of the CpuTarget other than the
// vector width and name the renderer's types are printed with — decides a mapping, so it is a
// violation. Writing a field (filling the target from the device) is not a read. The lines
// matched: `.gpu.<field>` and `target.<field>` for GpuTarget fields not followed by `=`, and
// `cpu_target().<field>` / `cpu.<field>` for CpuTarget's scheduling fields. The renderers
// (backends/common, backends/cuda/render) do not read the process-wide cpu_target() at all:
// what they print with comes from the target the program was lowered for.
struct MachineFactRead {
    std::string file;
    int line = 0;
    std::string text;
};

bool renderer_file(const std::string& file) {
    return file.rfind("backends/common/", 0) == 0 || file.rfind("backends/cuda/render/", 0) == 0;
}

const std::regex& global_target() {
    static const std::regex r(R"(\bcpu_target\s*\(\s*\))");
    return r;
}

const std::regex& gpu_fact() {
    static const std::regex r(
        R"(\b(gpu|target|base)\s*\.\s*(warp_size|shared_memory_per_block|registers_per_thread|multiprocessors|max_threads_per_block|max_grid_[xyz]|compute_capability)\b(?!\s*=[^=]))");
    return r;
}

const std::regex& cpu_fact() {
    static const std::regex r(
        R"(\b(cpu_target\(\)|cpu)\s*\.\s*(vector_registers|register_tile_rows|panel_bytes|l1d_bytes)\b)");
    return r;
}

std::vector<MachineFactRead> machine_fact_reads(const fs::path& root) {
    std::vector<MachineFactRead> out;
    for (const auto& entry : fs::recursive_directory_iterator(root / "backends")) {
        std::string ext = entry.path().extension().string();
        if (!entry.is_regular_file() || (ext != ".cpp" && ext != ".hpp")) continue;
        std::string file = fs::relative(entry.path(), root).generic_string();
        // The device runtime fills the target from the driver's attributes.
        if (file == "backends/cuda/runtime/cuda_driver.cpp") continue;
        std::ifstream in(entry.path());
        std::string text;
        int n = 0;
        while (std::getline(in, text)) {
            ++n;
            std::string code = text.substr(0, text.find("//"));
            if (std::regex_search(code, gpu_fact()) || std::regex_search(code, cpu_fact()) ||
                (renderer_file(file) && std::regex_search(code, global_target())))
                out.push_back({file, n, text});
        }
    }
    return out;
}

// The partition rule: how a graph is partitioned for a target is the scheduler's decision
// (sched::partition_options in scheduler/lower.hpp). A file under backends/ that makes its own
// PartitionOptions (declares one, or builds a temporary) decides the partition, so it is a
// violation; passing the scheduler's along is not.
const std::regex& partition_decision() {
    static const std::regex r(R"(\bPartitionOptions\s*(\{|\(\s*\)|[A-Za-z_]\w*\s*[;{=]))");
    return r;
}

std::vector<MachineFactRead> partition_decisions(const fs::path& root) {
    std::vector<MachineFactRead> out;
    for (const auto& entry : fs::recursive_directory_iterator(root / "backends")) {
        std::string ext = entry.path().extension().string();
        if (!entry.is_regular_file() || (ext != ".cpp" && ext != ".hpp")) continue;
        std::ifstream in(entry.path());
        std::string text;
        int n = 0;
        while (std::getline(in, text)) {
            ++n;
            if (std::regex_search(text.substr(0, text.find("//")), partition_decision()))
                out.push_back({fs::relative(entry.path(), root).generic_string(), n, text});
        }
    }
    return out;
}

} // namespace

TEST_CASE("the partition rule: no file under backends/ makes its own PartitionOptions") {
    std::vector<MachineFactRead> found = partition_decisions(HEDRA_SOURCE_DIR);
    for (const MachineFactRead& r : found) {
        std::string what = r.file + ":" + std::to_string(r.line) + " decides a partition (" +
                           r.text +
                           "): partition options come from sched::partition_options(target) "
                           "(scheduler/lower.hpp)";
        FAIL_CHECK(what);
    }
    CHECK(found.empty());
    const std::regex& rule = partition_decision();
    CHECK(std::regex_search(std::string("sched::PartitionOptions o;"), rule));
    CHECK(
        std::regex_search(std::string("PartitionOptions o = sched::partition_options(t);"), rule));
    CHECK(std::regex_search(std::string("f(sched::PartitionOptions{4});"), rule));
    CHECK(std::regex_search(std::string("f(sched::PartitionOptions());"), rule));
    CHECK_FALSE(
        std::regex_search(std::string("sched::PartitionOptions cuda_partition_options();"), rule));
    CHECK_FALSE(std::regex_search(
        std::string("partition(o, p, sched::partition_options(sched::Target::for_gpu(g)));"),
        rule));
}

TEST_CASE("the mapping rule: no file under backends/ reads a machine fact of a target") {
    const std::regex& gpu_fact = ::gpu_fact();
    std::vector<MachineFactRead> found = machine_fact_reads(HEDRA_SOURCE_DIR);
    for (const MachineFactRead& r : found) {
        std::string what = r.file + ":" + std::to_string(r.line) + " reads a machine fact (" +
                           r.text +
                           "): machine facts are read by the passes (scheduler/gpu_mapping.hpp, "
                           "scheduler/register_tile.hpp), which write their decisions "
                           "into the mapping or the AST for the renderer to print";
        FAIL_CHECK(what);
    }
    CHECK(found.empty());
    // The rule catches what it names, and lets a write through.
    CHECK(std::regex_search(std::string("int sms = b.options.gpu.multiprocessors;"), gpu_fact));
    CHECK(std::regex_search(std::string("if (t > target.max_threads_per_block)"), gpu_fact));
    CHECK(std::regex_search(std::string("std::min(blocks, target.max_grid_z)"), gpu_fact));
    CHECK_FALSE(std::regex_search(std::string("base.max_grid_z = max_grid_z;"), gpu_fact));
    CHECK_FALSE(std::regex_search(std::string("lo.gpu.multiprocessors = 80;"), gpu_fact));
    CHECK(std::regex_search(std::string("x = lo.gpu.warp_size == 32;"), gpu_fact));
    CHECK(std::regex_search(std::string("int r = cpu.vector_registers - 1;"), cpu_fact()));
    CHECK(std::regex_search(std::string("sched::cpu_target().panel_bytes"), cpu_fact()));
    CHECK_FALSE(std::regex_search(std::string("sched::cpu_target().vector_bytes"), cpu_fact()));
    CHECK(std::regex_search(std::string("int w = sched::cpu_target().vector_bytes;"),
                            global_target()));
    CHECK(renderer_file("backends/common/register_tile.cpp"));
    CHECK_FALSE(renderer_file("backends/openmp/plan_cache.cpp"));
}

TEST_CASE("the layering rules: which layer may include which") {
    CHECK(layer_of("backends/cuda/render/cuda_map.cpp") == "backends/cuda");
    CHECK(layer_of("backends/builtin_backends.cpp") == "registry");
    CHECK(layer_of("backends/cuda/standalone/register_backends.cpp") == "registry");
    CHECK(may_include("scheduler", "polyhedral"));
    CHECK_FALSE(may_include("polyhedral", "scheduler"));
    CHECK_FALSE(may_include("core", "backends/openmp"));
    CHECK(may_include("backends/cuda", "backends/common"));
    CHECK_FALSE(may_include("backends/cuda", "backends/openmp"));
    CHECK_FALSE(may_include("backends/common", "backends/openmp"));
    CHECK_FALSE(may_include("ad", "scheduler"));
    CHECK_FALSE(may_include("nn", "backends/openmp"));
    CHECK_FALSE(may_include("nn", "distributed"));
    CHECK_FALSE(may_include("distributed", "backends/openmp"));
    CHECK(may_include("distributed", "backends/cuda"));
    CHECK_FALSE(may_include("backends/cuda", "distributed"));
    CHECK_FALSE(may_include("backends/cuda", "nn"));
    CHECK(layer_of("nn/io/idx_reader.hpp") == "nn/io");
    CHECK(layer_of("nn/layers.hpp") == "nn");
    CHECK_FALSE(may_include("nn", "nn/io"));
    CHECK_FALSE(may_include("nn/io", "ad"));
    for (const char* outside : {"tools", "examples", "bench", "tests"})
        for (const char* layer :
             {"core", "scheduler", "backends/openmp", "registry", "nn", "nn/io"})
            CHECK_FALSE(may_include(layer, outside));
    CHECK(runs_isl("polyhedral/scop.hpp"));
    CHECK(runs_isl("scheduler/compute_schedule.hpp"));
    CHECK_FALSE(runs_isl("scheduler/lower.hpp"));
    CHECK_FALSE(runs_isl("polyhedral/kernel_ir.hpp"));
    CHECK(crosses_cuda_split("backends/cuda/render/cuda_map.cpp",
                             "backends/cuda/runtime/cuda_driver.hpp"));
    CHECK(crosses_cuda_split("backends/cuda/runtime/cuda_driver.cpp",
                             "backends/cuda/render/cuda_lower.hpp"));
    CHECK_FALSE(crosses_cuda_split("backends/cuda/cuda_backend.cpp",
                                   "backends/cuda/runtime/cuda_driver.hpp"));
}

TEST_CASE("no library file includes across a forbidden arrow") {
    std::vector<Violation> found = violations(HEDRA_SOURCE_DIR);
    for (const Violation& v : found) {
        std::string what =
            v.file + ":" + std::to_string(v.line) + " includes \"" + v.include +
            "\": " + layer_of(v.file) + " may not include " +
            (runs_isl(v.include) ? v.include + " (isl runs in scheduler/lower.hpp)"
             : crosses_cuda_split(v.file, v.include)
                 ? v.include + " (the cuda renderer and the device runtime are apart)"
                 : layer_of(v.include));
        FAIL_CHECK(what);
    }
    CHECK(found.empty());
}
