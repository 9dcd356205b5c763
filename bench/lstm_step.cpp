// bench/lstm_step: the training step of examples/mnist_rnn (nn::lstm_classifier: LSTM(I → 128)
// over the steps, linear(128 → 10) on the last h, softmax cross-entropy, AdamW lr 1e-3, weight
// decay 0.01 on every parameter) as one compiled program (nn::TrainStep), batch 64:
//   lstm_rows    28 steps of 28 pixels
//   lstm_pixels  784 steps of 1 pixel
// at each --threads count: the cold compile and the median step time. When the peers' venv
// ($PEERS_VENV, default /opt/hedra-peers) is installed, bench/peers/lstm_torch.py runs the same
// model with the same threads afterwards (torch.nn.LSTM, eager and torch.compile, a process of
// its own) and each line gives its median and the ratio (speedup > 1: hedra is faster).
// --replay DIR trains from lstm_torch.py --export DIR's weights on its batches and compares the
// losses with PyTorch's.
//   bench/lstm_step [--quick] [--threads 1,2] [--reps N] [--only rows,pixels] [--no-peer]
//                   [--peer-impls eager,compile] [--replay DIR]
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench/bench_common.hpp"
#include "hedra.hpp"
#include "nn/io/npy_reader.hpp"
#include "nn/optim.hpp"
#include "nn/recurrent.hpp"
#include "nn/train_step.hpp"

using namespace hedra;

namespace {

constexpr std::int64_t kClasses = 10;

struct Workload {
    std::string name; // rows or pixels
    std::int64_t steps, features, hidden, batch;
};

nn::TrainStep make_step(nn::Model model, int threads) {
    nn::AdamWOptions adamw{.lr = 1e-3, .weight_decay = 0.01};
    adamw.decay_mask.assign(model.params.size(), true); // torch.optim.AdamW's default
    ComputeOptions options;
    options.num_threads = threads;
    return nn::TrainStep(std::move(model), std::make_shared<nn::AdamW>(adamw), options);
}

// The peer's median step time for each implementation, from its output lines.
std::vector<std::pair<std::string, double>> run_peer(const Workload& w, int threads,
                                                     const std::string& impls, int reps) {
    const char* venv = std::getenv("PEERS_VENV");
    const std::string python = std::string(venv ? venv : "/opt/hedra-peers") + "/bin/python";
    const std::string script = std::string(HEDRA_BENCH_PEERS_DIR) + "/lstm_torch.py";
    if (!std::filesystem::exists(python) || !std::filesystem::exists(script)) return {};
    const std::string cmd = python + " " + script + (w.name == "pixels" ? " --pixels" : "") +
                            " --impls " + impls + " --threads " + std::to_string(threads) +
                            " --steps " + std::to_string(reps) + " 2>/dev/null";
    std::vector<std::pair<std::string, double>> out;
    FILE* pipe = popen(cmd.c_str(), "r");
    if (!pipe) return out;
    char line[512];
    while (std::fgets(line, sizeof line, pipe)) {
        char mode[32], impl[32];
        int t = 0;
        double median = NAN;
        if (std::sscanf(line, "lstm_step %31s %31s threads=%d step_ms median=%lf", mode, impl, &t,
                        &median) == 4)
            out.emplace_back(impl, median);
    }
    pclose(pipe);
    return out;
}

// Trains from the exported weights on the exported batches; prints the losses side by side.
int replay(const std::string& dir) {
    auto path = [&](const std::string& name) { return dir + "/" + name + ".npy"; };
    HostArray images = nn::read_npy(path("images")), labels = nn::read_npy(path("labels"));
    HostArray torch_losses = nn::read_npy(path("losses"));
    const auto& s = images.sizes(); // (N, B, T, I)
    HostArray w_hh = nn::read_npy(path("lstm.weight_hh_l0"));
    nn::Model model =
        nn::lstm_classifier(s[2], s[3], w_hh.sizes()[1], kClasses, 0); // the shapes and forward
    for (std::size_t i = 0; i < model.names.size(); ++i)
        model.params[i] = nn::read_npy(path(model.names[i]));
    nn::TrainStep step = make_step(std::move(model), 0);
    double worst = 0;
    for (std::int64_t n = 0; n < torch_losses.size(); ++n) {
        const std::int64_t per_image = s[1] * s[2] * s[3];
        std::vector<float> x(static_cast<std::size_t>(per_image));
        for (std::int64_t k = 0; k < per_image; ++k)
            x[static_cast<std::size_t>(k)] = static_cast<float>(images.flat(n * per_image + k));
        std::vector<std::int64_t> y(static_cast<std::size_t>(s[1]));
        for (std::int64_t k = 0; k < s[1]; ++k)
            y[static_cast<std::size_t>(k)] = static_cast<std::int64_t>(labels.flat(n * s[1] + k));
        const double loss =
            step.step(HostArray::from(x, {s[1], s[2], s[3]}), HostArray::from(y, {s[1]}));
        const double want = torch_losses.flat(n);
        worst = std::max(worst, std::fabs(loss - want) / std::fabs(want));
        std::printf("replay step %lld: hedra %.6f torch %.6f\n", static_cast<long long>(n), loss,
                    want);
    }
    const bool ok = worst < 1e-4;
    std::printf("replay: max relative difference of the %lld losses %.3g: %s\n",
                static_cast<long long>(torch_losses.size()), worst, ok ? "ok" : "differ");
    return ok ? 0 : 1;
}

} // namespace

int main(int argc, char** argv) {
    bool peer = true;
    std::string impls = "eager,compile", replay_dir;
    std::vector<char*> rest{argv[0]};
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--no-peer")
            peer = false;
        else if (a == "--peer-impls" && i + 1 < argc)
            impls = argv[++i];
        else if (a == "--replay" && i + 1 < argc)
            replay_dir = argv[++i];
        else
            rest.push_back(argv[i]);
    }
    bench::Args args =
        bench::parse_args(static_cast<int>(rest.size()), rest.data(),
                          " [--no-peer] [--peer-impls eager,compile] [--replay DIR]");
    if (args.quick) peer = false; // the quick mode checks that hedra's side runs
    try {
        if (!replay_dir.empty()) return replay(replay_dir);
        std::vector<Workload> workloads{{"rows", 28, 28, 128, 64}, {"pixels", 784, 1, 128, 64}};
        if (args.quick) workloads = {{"rows", 6, 4, 8, 4}, {"pixels", 24, 1, 8, 4}};
        const int reps = args.reps > 0 ? args.reps : args.quick ? 2 : 20;
        for (const Workload& w : workloads) {
            if (!args.wants(w.name)) continue;
            std::mt19937 gen(3);
            std::normal_distribution<float> pixel;
            std::uniform_int_distribution<std::int64_t> label(0, kClasses - 1);
            std::vector<float> xv(static_cast<std::size_t>(w.batch * w.steps * w.features));
            std::vector<std::int64_t> yv(static_cast<std::size_t>(w.batch));
            for (float& v : xv)
                v = pixel(gen);
            for (std::int64_t& v : yv)
                v = label(gen);
            const HostArray images = HostArray::from(xv, {w.batch, w.steps, w.features});
            const HostArray labels = HostArray::from(yv, {w.batch});
            for (int threads : args.threads) {
                nn::TrainStep step = make_step(
                    nn::lstm_classifier(w.steps, w.features, w.hidden, kClasses, 1), threads);
                const double c0 = bench::now_ms();
                const double first = step.step(images, labels);
                const double compile_s = (bench::now_ms() - c0) / 1e3;
                bench::select_clock(args, threads);
                bench::PairTimes t = bench::time_alternately([&] { step.step(images, labels); },
                                                             [] {}, false, 1, reps);
                char extra[300];
                std::snprintf(extra, sizeof extra,
                              "steps=%lld features=%lld hidden=%lld batch=%lld loss=%.5f "
                              "compile_s=%.2f",
                              static_cast<long long>(w.steps), static_cast<long long>(w.features),
                              static_cast<long long>(w.hidden), static_cast<long long>(w.batch),
                              first, compile_s);
                const std::string name = "lstm_" + w.name;
                auto peers = peer ? run_peer(w, threads, impls, reps)
                                  : std::vector<std::pair<std::string, double>>{};
                if (peers.empty())
                    bench::print_line(name, threads, t, peer ? "missing(torch)" : "none", extra);
                for (const auto& [impl, ms] : peers) {
                    t.peer_ms = ms;
                    bench::print_line(name, threads, t, "torch_" + impl, extra);
                }
            }
        }
    } catch (const Error& e) {
        std::fprintf(stderr, "lstm_step: error: %s\n", e.what());
        return 1;
    }
    return 0;
}
