// bench/compile: what compiling costs. For matmul (512², f32) and a 20-node elementwise +
// reduction graph:
//   cold: a fresh process with an empty cache directory (isl, printing, clang, linking);
//   warm: a fresh process whose cache directory holds the first one's entries (the kernel
//         object and the lowered plan: no isl, no clang);
//   hot:  compile() again in the same process (the program cache);
// and the per-call overhead of a compiled program on a tiny input (4 elements). Each process
// runs this executable itself (--child) with HEDRA_CACHE_DIR set to a temporary directory and
// reports the time of its compile() call, so process start-up is not counted. There is no peer
// library: lines with a target (issue 3: warm <= 10 ms, per-call <= 20 µs) print it as the
// peer, so speedup >= 1 means the target is met.
//   bench/compile [--quick] [--reps N]
#include <filesystem>
#include <random>

#include "bench/bench_common.hpp"
#include "hedra.hpp"

using namespace hedra;

namespace {

// The program of `workload`: its outputs and placeholders.
std::pair<std::vector<Array>, std::vector<Array>> workload(const std::string& name) {
    if (name == "matmul") {
        Array a = placeholder(Shape::of({512, 512}), DType::F32, "a");
        Array b = placeholder(Shape::of({512, 512}), DType::F32, "b");
        return {{matmul(a, b)}, {a, b}};
    }
    if (name == "graph20") { // 20 nodes: x, 15 maps, 2 reductions, 2 maps
        Array x = placeholder(Shape::of({64, 48}), DType::F32, "x");
        Array h = x;
        for (int i = 0; i < 3; ++i)
            h = tanh(h * 0.5f + float(i)) - sigmoid(h);
        return {{sum(h, {1}) + max(h, {1}) * 2.0f}, {x}};
    }
    std::fprintf(stderr, "compile: unknown workload '%s'\n", name.c_str());
    std::exit(2);
}

// --child <workload>: compile once and print the milliseconds it took.
int child(const std::string& name) {
    auto [outputs, inputs] = workload(name);
    double s = bench::now_ms();
    CompiledProgram program = compile(outputs, inputs);
    std::printf("%.4f\n", bench::now_ms() - s);
    return 0;
}

std::string self_path() {
    return std::filesystem::read_symlink("/proc/self/exe").string();
}

// Runs `self --child name` with HEDRA_CACHE_DIR=dir and returns its compile time.
double child_compile_ms(const std::string& name, const std::filesystem::path& dir) {
    std::string command =
        "HEDRA_CACHE_DIR='" + dir.string() + "' '" + self_path() + "' --child " + name;
    FILE* pipe = popen(command.c_str(), "r");
    if (!pipe) return NAN;
    double ms = NAN;
    if (std::fscanf(pipe, "%lf", &ms) != 1) ms = NAN;
    if (pclose(pipe) != 0) ms = NAN;
    return ms;
}

std::filesystem::path fresh_directory(const std::string& tag) {
    std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                ("hedra_bench_compile_" + std::to_string(getpid()) + "_" + tag);
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    return dir;
}

void print_target_line(const std::string& name, double ms, double target_ms,
                       const std::string& extra) {
    bench::PairTimes t{ms, target_ms};
    bench::print_line(name, 1, t, target_ms > 0 ? "target" : "none", extra);
}

} // namespace

int main(int argc, char** argv) {
    if (argc == 3 && std::string(argv[1]) == "--child") return child(argv[2]);
    bench::Args args = bench::parse_args(argc, argv);
    const int reps = args.reps > 0 ? args.reps : args.quick ? 1 : 5;
    for (const std::string name : {"matmul", "graph20"}) {
        if (!args.wants(name)) continue;
        std::vector<double> cold, warm;
        for (int r = 0; r < reps; ++r) {
            std::filesystem::path dir = fresh_directory(name + std::to_string(r));
            cold.push_back(child_compile_ms(name, dir));
            warm.push_back(child_compile_ms(name, dir));
            std::filesystem::remove_all(dir);
        }
        print_target_line("compile_cold_" + name, bench::median(cold), NAN, "");
        print_target_line("compile_warm_" + name, bench::median(warm), 10.0,
                          "(a second process: on-disk cache)");
        // In this process: the first compile may hit the user's cache; the second hits the
        // program cache.
        auto [outputs, inputs] = workload(name);
        CompiledProgram first = compile(outputs, inputs);
        std::vector<double> hot;
        for (int r = 0; r < std::max(reps, 3); ++r) {
            double s = bench::now_ms();
            CompiledProgram again = compile(outputs, inputs);
            hot.push_back(bench::now_ms() - s);
        }
        print_target_line("compile_hot_" + name, bench::median(hot), 10.0,
                          "(same process: program cache)");
    }
    if (args.wants("per_call")) {
        Array t = placeholder(Shape::of({4}), DType::F32, "t");
        CompiledProgram tiny = compile({t * 2.0f + 1.0f}, {t});
        HostArray in = HostArray::from(std::vector<float>{1, 2, 3, 4}, {4});
        const int calls = args.quick ? 2000 : 20000;
        std::vector<double> per_call;
        for (int round = 0; round < 7; ++round) {
            double s = bench::now_ms();
            for (int c = 0; c < calls; ++c)
                tiny({in});
            per_call.push_back((bench::now_ms() - s) / calls);
        }
        print_target_line("per_call_tiny", bench::median(per_call), 0.020,
                          "(4 elements, compiled program call)");
    }
    return 0;
}
