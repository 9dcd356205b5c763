// The training loop shared by the MNIST examples (mnist_mlp, mnist_cnn, mnist_rnn): command-line
// flags, data loading, a compiled training step run per batch, progress, test accuracy after each
// epoch, the loss CSV and plot, and the closing line `test_accuracy=<x> epoch_seconds=<y>`.
// Everything a model computes is in nn::TrainStep; this file only moves batches and prints.
#pragma once

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "distributed/data_parallel.hpp"
#include "distributed/init.hpp"
#include "hedra.hpp"
#include "nn/io/mnist_dataset.hpp"
#include "nn/io/npy_reader.hpp"
#include "nn/io/training_report.hpp"
#include "nn/model.hpp"
#include "nn/optim.hpp"
#include "nn/train_step.hpp"

namespace mnist_example {

using namespace hedra;

struct Flags {
    std::vector<std::int64_t> hidden{300, 100}; // mnist_mlp only
    std::int64_t batch = 64;
    double lr = 0.1;
    double momentum = 0.0;
    std::string optimizer = "sgd"; // sgd, adam or adamw
    double weight_decay = 0.01;    // adamw only
    std::int64_t epochs = 1;
    int threads = 0;
    std::string backend;
    std::uint64_t seed = 0;
    std::string data = nn::kDefaultMnistDirectory;
    std::int64_t limit = 0;              // train on the first N examples (0: all)
    std::string inputs = "standardized"; // or "unit": pixels / 255 as they are
    std::string csv; // default: <program>_loss.csv; the plot takes the same stem
    // A .npy of training-example indices taken in this order in every epoch (a peer's order, to
    // train the same batches); empty: a seeded shuffle per epoch.
    std::string batch_order;
};

// A whole number above 0 (CLI11's PositiveNumber states its range as doubles).
inline CLI::Validator positive_integer() {
    return CLI::Validator(
        [](std::string& text) {
            char* end = nullptr;
            long long v = std::strtoll(text.c_str(), &end, 10);
            return !text.empty() && *end == '\0' && v > 0
                       ? std::string()
                       : "must be a positive integer, not '" + text + "'";
        },
        "POSITIVE");
}

// An example's own flags, added to the shared ones.
using ExtraOptions = std::function<void(CLI::App&)>;

// The command line (CLI11): "--name value" or "--name=value"; --help lists every flag with its
// default. A bad flag or value prints why and exits with CLI11's status. `defaults` are the
// example's own (its optimizer and learning rate).
inline Flags parse_flags(int argc, char** argv, const char* program, bool with_hidden,
                         Flags defaults = {}, const ExtraOptions& extra = {}) {
    Flags f = std::move(defaults);
    f.csv = std::string(program) + "_loss.csv";
    CLI::App app{std::string("Trains on Fashion-MNIST with hedra (") + program + ")", program};
    if (with_hidden)
        app.add_option("--hidden", f.hidden, "hidden layer sizes, e.g. 300,100")
            ->delimiter(',')
            ->check(positive_integer())
            ->capture_default_str();
    app.add_option("--batch", f.batch, "batch size")
        ->check(positive_integer())
        ->capture_default_str();
    app.add_option("--lr", f.lr, "learning rate")->capture_default_str();
    app.add_option("--momentum", f.momentum, "SGD momentum")->capture_default_str();
    app.add_option("--optimizer", f.optimizer, "sgd, adam or adamw")
        ->check(CLI::IsMember({"sgd", "adam", "adamw"}))
        ->capture_default_str();
    app.add_option("--weight-decay", f.weight_decay, "AdamW's decoupled weight decay")
        ->capture_default_str();
    app.add_option("--epochs", f.epochs, "epochs")
        ->check(positive_integer())
        ->capture_default_str();
    app.add_option("--threads", f.threads, "threads (0: $HEDRA_NUM_THREADS or all cores)")
        ->check(CLI::NonNegativeNumber)
        ->capture_default_str();
    app.add_option("--backend", f.backend, "hedra backend (default: $HEDRA_BACKEND or built-in)");
    app.add_option("--seed", f.seed, "seed of the initial weights and the shuffles")
        ->capture_default_str();
    app.add_option("--data", f.data, "MNIST-format folder")->capture_default_str();
    app.add_option("--limit", f.limit, "train on the first N training examples only (0: all)")
        ->check(CLI::NonNegativeNumber)
        ->capture_default_str();
    app.add_option("--inputs", f.inputs,
                   "standardized (zero mean, unit variance, the training set's statistics) or "
                   "unit (pixels / 255)")
        ->check(CLI::IsMember({"standardized", "unit"}))
        ->capture_default_str();
    app.add_option("--csv", f.csv,
                   "loss per step ('' for none); a .png plot goes beside it when gnuplot is "
                   "installed")
        ->capture_default_str();
    app.add_option("--batch-order", f.batch_order,
                   ".npy of training-example indices (i32 or i64) to take in this order in every "
                   "epoch instead of a seeded shuffle");
    if (extra) extra(app);
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        std::exit(app.exit(e));
    }
    return f;
}

// The fraction of `split` the step's current parameters classify correctly; under mpirun each
// rank counts every size()-th batch and the counts are summed.
inline double test_accuracy(nn::TrainStep& step, const nn::MnistSplit& split,
                            distributed::Communicator& comm) {
    constexpr std::int64_t kEvalBatch = 1000;
    auto order = nn::sequential_indices(split.size());
    std::int64_t correct = 0;
    for (std::int64_t b = comm.rank(); b < nn::batch_count(split.size(), kEvalBatch, false);
         b += comm.size()) {
        auto batch = nn::mnist_batch(split, order, b, kEvalBatch, step.example_shape());
        correct += step.count_correct(batch.images, batch.labels);
    }
    HostArray count = HostArray::from(std::vector<std::int64_t>{correct}, {1});
    return static_cast<double>(comm.all_reduce(count).flat(0)) / static_cast<double>(split.size());
}

inline std::string png_path_for(const std::string& csv) {
    const std::string ext = ".csv";
    if (csv.size() > ext.size() && csv.compare(csv.size() - ext.size(), ext.size(), ext) == 0)
        return csv.substr(0, csv.size() - ext.size()) + ".png";
    return csv + ".png";
}

// The indices of a --batch-order file, each checked to be a training example.
inline std::vector<std::int64_t> read_batch_order(const std::string& path, std::int64_t n) {
    const HostArray a = nn::read_npy(path);
    if (a.rank() != 1 || (a.dtype() != DType::I64 && a.dtype() != DType::I32))
        throw Error("--batch-order " + path + ": expected a 1-d i32 or i64 array");
    std::vector<std::int64_t> order(static_cast<std::size_t>(a.size()));
    for (std::size_t i = 0; i < order.size(); ++i) {
        order[i] = static_cast<std::int64_t>(a.flat(static_cast<std::int64_t>(i)));
        if (order[i] < 0 || order[i] >= n)
            throw Error("--batch-order " + path + ": index " + std::to_string(order[i]) +
                        " is not one of the " + std::to_string(n) + " training examples");
    }
    if (order.empty()) throw Error("--batch-order " + path + " is empty");
    return order;
}

using ModelFactory = std::function<nn::Model(const nn::MnistDataset&, const Flags&)>;

inline int train(const char* program, const Flags& f, const ModelFactory& make_model) {
    using clock = std::chrono::steady_clock;
    // Under mpirun every rank reads the same shuffled batches and trains on its share of each
    // (distributed::DataParallelTrainer); rank 0 alone prints and writes files.
    std::shared_ptr<distributed::Communicator> comm = distributed::init();
    if (comm->rank() != 0 && !std::freopen("/dev/null", "w", stdout))
        throw Error("cannot silence rank " + std::to_string(comm->rank()) + "'s output");
    nn::MnistDataset data = nn::load_mnist(f.data);
    if (f.limit > 0 && f.limit < data.train.size()) {
        auto first = nn::sequential_indices(f.limit);
        data.train = {nn::gather_rows(data.train.images, first),
                      nn::gather_rows(data.train.labels, first)};
    }
    // Standardized inputs make the first epoch's result far less dependent on the seed: over
    // seeds 0-99 the MLP's 1-epoch test accuracy spans 0.787-0.848 (pixels / 255: 0.771-0.827).
    if (f.inputs == "standardized") {
        const nn::PixelStatistics stats = nn::pixel_statistics(data.train);
        nn::standardize(data.train, stats);
        nn::standardize(data.test, stats);
        std::printf("inputs: standardized with the training set's mean %.4f and std %.4f\n",
                    stats.mean, stats.stddev);
    }
    ComputeOptions options;
    options.backend = f.backend;
    options.num_threads = f.threads;
    const std::string backend = f.backend.empty() ? default_backend_name() : f.backend;
    nn::Model model = make_model(data, f);
    std::shared_ptr<const nn::Optimizer> optimizer;
    if (f.optimizer == "adam") {
        optimizer = std::make_shared<nn::Adam>(nn::AdamOptions{f.lr});
    } else if (f.optimizer == "adamw") {
        // Every parameter decays, as torch.optim.AdamW(model.parameters()) does.
        nn::AdamWOptions o{.lr = f.lr, .weight_decay = f.weight_decay};
        o.decay_mask.assign(model.params.size(), true);
        optimizer = std::make_shared<nn::AdamW>(o);
    } else {
        optimizer = std::make_shared<nn::Sgd>(nn::SgdOptions{f.lr, f.momentum});
    }
    nn::TrainStep step(std::move(model), optimizer, options);
    std::unique_ptr<distributed::DataParallelTrainer> parallel;
    if (comm->size() > 1) {
        parallel = std::make_unique<distributed::DataParallelTrainer>(comm, step.trainer());
        std::printf("data parallel: %d ranks (%s), each %lld of every %lld examples\n",
                    comm->size(), comm->name().c_str(),
                    static_cast<long long>(parallel->shard(f.batch).second -
                                           parallel->shard(f.batch).first),
                    static_cast<long long>(f.batch));
    }

    const std::vector<std::int64_t> fixed_order =
        f.batch_order.empty() ? std::vector<std::int64_t>{}
                              : read_batch_order(f.batch_order, data.train.size());
    const std::int64_t n =
        fixed_order.empty() ? data.train.size() : static_cast<std::int64_t>(fixed_order.size());
    const std::int64_t steps = nn::batch_count(n, f.batch, false);
    std::printf("%s: %lld training and %lld test examples from %s; batch %lld, %s lr %g, "
                "backend %s\n",
                program, static_cast<long long>(n), static_cast<long long>(data.test.size()),
                f.data.c_str(), static_cast<long long>(f.batch), f.optimizer.c_str(), f.lr,
                backend.c_str());
    if (backend == "reference")
        std::fprintf(stderr, "note: the reference backend is an interpreter meant for tests; "
                             "training on it is very slow\n");
    std::fflush(stdout);
    nn::TrainingProgress progress(steps, f.epochs);
    std::vector<double> losses;
    double accuracy = 0.0, train_seconds = 0.0;
    for (std::int64_t epoch = 1; epoch <= f.epochs; ++epoch) {
        auto order = fixed_order.empty()
                         ? nn::shuffled_indices(n, f.seed, static_cast<std::uint64_t>(epoch - 1))
                         : fixed_order;
        auto compiling = [&] {
            return step.compile_seconds() + (parallel ? parallel->local().compile_seconds() : 0.0);
        };
        const double compile_before = compiling();
        const auto start = clock::now();
        progress.begin_epoch(epoch);
        double epoch_loss = 0.0;
        for (std::int64_t s = 0; s < steps; ++s) {
            auto batch = nn::mnist_batch(data.train, order, s, f.batch, step.example_shape());
            const double compiled = compiling();
            const double loss = parallel ? parallel->step({batch.images, batch.labels}, f.lr)
                                         : step.step(batch.images, batch.labels);
            progress.exclude_seconds(compiling() - compiled);
            if (!std::isfinite(loss))
                throw Error("training diverged: the loss is " + std::to_string(loss) +
                            " at epoch " + std::to_string(epoch) + " step " + std::to_string(s));
            losses.push_back(loss);
            epoch_loss += loss;
            progress.step(s, loss, batch.labels.size());
        }
        progress.end_epoch();
        if (parallel) step.set_params(parallel->local().params()); // for the evaluation
        const double compile = compiling() - compile_before;
        const double seconds =
            std::chrono::duration<double>(clock::now() - start).count() - compile;
        train_seconds += seconds;
        const auto eval_start = clock::now();
        accuracy = test_accuracy(step, data.test, *comm);
        const double eval = std::chrono::duration<double>(clock::now() - eval_start).count();
        std::printf("epoch %lld/%lld: mean loss %.4f, test accuracy %.4f, training %.2f s "
                    "(compiling %.2f s more), evaluation %.2f s\n",
                    static_cast<long long>(epoch), static_cast<long long>(f.epochs),
                    epoch_loss / static_cast<double>(steps), accuracy, seconds, compile, eval);
        std::fflush(stdout);
    }
    if (!f.csv.empty() && comm->rank() == 0) {
        nn::write_loss_csv(f.csv, losses, steps);
        const std::string png = png_path_for(f.csv);
        const bool plotted = nn::plot_loss_png(f.csv, png, std::string(program) + " training loss");
        std::printf("wrote %s%s\n", f.csv.c_str(), plotted ? (" and " + png).c_str() : "");
    }
    std::fflush(stderr);
    std::printf("test_accuracy=%.4f epoch_seconds=%.3f\n", accuracy,
                train_seconds / static_cast<double>(f.epochs));
    return 0;
}

// main() of an example: flags, then train(), with hedra::Error reported as one line.
inline int run(int argc, char** argv, const char* program, bool with_hidden,
               const ModelFactory& make_model, Flags defaults = {},
               const ExtraOptions& extra = {}) {
    Flags f = parse_flags(argc, argv, program, with_hidden, std::move(defaults), extra);
    try {
        return train(program, f, make_model);
    } catch (const Error& e) {
        std::fflush(stdout);
        std::fprintf(stderr, "%s: error: %s\n", program, e.what());
        return 1;
    }
}

} // namespace mnist_example
