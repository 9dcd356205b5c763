// bench/compile: what compiling costs. For matmul (512², f32), a 20-node elementwise +
// reduction graph, a chain of 2000 elementwise maps, the three MNIST training steps of
// bench/train_step (MLP 784-300-100-10 at batch 64, MLP 784-1024-1024-10 at 256, the CNN at 64:
// forward, backward, SGD update with a run-time learning rate) and the W7 GPT step (forward,
// backward, AdamW):
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

#include "ad/grad.hpp"
#include "bench/bench_common.hpp"
#include "hedra.hpp"
#include "nn/gpt.hpp"
#include "nn/layers.hpp"
#include "nn/model.hpp"
#include "nn/optim.hpp"
#include "nn/recurrent.hpp"

using namespace hedra;

namespace {

using Program = std::pair<std::vector<Array>, std::vector<Array>>; // outputs, placeholders

std::vector<Array> placeholders_like(const std::vector<HostArray>& values, const char* prefix) {
    std::vector<Array> out;
    for (std::size_t i = 0; i < values.size(); ++i)
        out.push_back(placeholder(Shape::of(values[i].sizes()), values[i].dtype(),
                                  prefix + std::to_string(i)));
    return out;
}

// A training step's program: the loss, the new parameters and state from `optimizer` at a
// run-time learning rate, as nn::Trainer builds it.
Program step_program(const std::vector<HostArray>& values, const nn::Optimizer& optimizer,
                     std::vector<Array> inputs,
                     const std::function<Array(const std::vector<Array>&)>& loss_of) {
    std::vector<Array> params = placeholders_like(values, "param");
    std::vector<Array> state = placeholders_like(optimizer.initial_state(values), "state");
    Array lr = placeholder(Shape(), DType::F32, "lr");
    Array loss = loss_of(params);
    nn::OptimizerUpdate u = optimizer.update(params, grad(loss, params), state, lr);
    std::vector<Array> outputs{loss};
    outputs.insert(outputs.end(), u.params.begin(), u.params.end());
    outputs.insert(outputs.end(), u.state.begin(), u.state.end());
    inputs.insert(inputs.begin(), lr);
    inputs.insert(inputs.begin(), state.begin(), state.end());
    inputs.insert(inputs.begin(), params.begin(), params.end());
    return {outputs, inputs};
}

Program classifier_step(const nn::Model& model, std::int64_t batch) {
    std::vector<std::int64_t> x_sizes{batch};
    x_sizes.insert(x_sizes.end(), model.example_shape.begin(), model.example_shape.end());
    Array x = placeholder(Shape::of(x_sizes), DType::F32, "x");
    Array y = placeholder(Shape::of({batch}), DType::I32, "y");
    nn::Sgd sgd(nn::SgdOptions{0.05});
    return step_program(model.params, sgd, {x, y}, [&](const std::vector<Array>& p) {
        return nn::softmax_cross_entropy(model.forward(p, x), y);
    });
}

Program gpt_step() {
    nn::GptConfig config; // W7: 4 layers, 4 heads, width 128, context 64
    const std::int64_t batch = 12, T = config.block;
    Array tokens = placeholder(Shape::of({batch, T}), DType::I64, "tokens");
    Array targets = placeholder(Shape::of({batch, T}), DType::I64, "targets");
    nn::AdamW adamw(nn::AdamWOptions{});
    return step_program(
        nn::gpt_init(config, 1), adamw, {tokens, targets},
        [&](const std::vector<Array>& p) { return nn::gpt_loss(config, p, tokens, targets); });
}

// The program of `workload`: its outputs and placeholders.
Program workload(const std::string& name) {
    if (name == "mlp_step") return classifier_step(nn::mlp({784, 300, 100, 10}, 1), 64);
    if (name == "mlp_large_step") return classifier_step(nn::mlp({784, 1024, 1024, 10}, 1), 256);
    if (name == "cnn_step") return classifier_step(nn::mnist_cnn(1), 64);
    if (name == "gpt_step") return gpt_step();
    // The same LSTM over 28 and 784 steps (28 features each): a scan compiles once, whatever
    // its length.
    if (name == "lstm28_step") return classifier_step(nn::lstm_classifier(28, 28, 128, 10, 1), 64);
    if (name == "lstm784_step")
        return classifier_step(nn::lstm_classifier(784, 28, 128, 10, 1), 64);
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
    if (name == "chain2000") { // 2000 elementwise maps in a row over 1000 elements
        Array x = placeholder(Shape::of({1000}), DType::F32, "x");
        Array h = x;
        for (int i = 0; i < 2000; ++i)
            h = i % 4 == 0   ? h * 1.0001f
                : i % 4 == 1 ? h + 0.5f
                : i % 4 == 2 ? h - 0.25f
                             : h * 0.9999f;
        return {{h}, {x}};
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
    const int reps = args.reps > 0 ? args.reps : args.quick ? 1 : 3;
    double lstm28_cold = 0;
    for (const std::string name : {"matmul", "graph20", "chain2000", "mlp_step", "mlp_large_step",
                                   "cnn_step", "gpt_step", "lstm28_step", "lstm784_step"}) {
        if (!args.wants(name)) continue;
        std::vector<double> cold, warm;
        for (int r = 0; r < reps; ++r) {
            std::filesystem::path dir = fresh_directory(name + std::to_string(r));
            cold.push_back(child_compile_ms(name, dir));
            warm.push_back(child_compile_ms(name, dir));
            std::filesystem::remove_all(dir);
        }
        // Cold targets: the compile issue's (MLP step 1 s, CNN step 2 s, GPT step 10 s).
        const double cold_target = name == "mlp_step"         ? 1000.0
                                   : name == "mlp_large_step" ? 1000.0
                                   : name == "cnn_step"       ? 2000.0
                                   : name == "gpt_step"       ? 10000.0
                                                              : NAN;
        print_target_line("compile_cold_" + name, bench::median(cold), cold_target, "");
        if (name == "lstm28_step") lstm28_cold = bench::median(cold);
        if (name == "lstm784_step" && lstm28_cold > 0) // within 20% of each other
            print_target_line("compile_cold_lstm784_over_lstm28", bench::median(cold) / lstm28_cold,
                              1.2, "(a ratio, not ms)");
        print_target_line("compile_warm_" + name, bench::median(warm),
                          name.ends_with("_step") ? 20.0 : 10.0,
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
    // The same tiny program with a static and with a symbolic extent (bound at each call).
    for (bool symbolic : {false, true}) {
        const std::string name = symbolic ? "per_call_tiny_symbolic" : "per_call_tiny";
        if (!args.wants("per_call") && !args.wants(name)) continue;
        Array t = placeholder(Shape{symbolic ? dynamic("n", 8) : range(4)}, DType::F32, "t");
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
        print_target_line(name, bench::median(per_call), 0.020,
                          symbolic ? "(4 of at most 8 elements, compiled program call)"
                                   : "(4 elements, compiled program call)");
    }
    return 0;
}
