// hedra-fuzz: the soak runner. Generates programs from consecutive seeds, runs each on the
// reference and openmp backends (fuzz_runner.hpp), and for every failure prints the seed, the
// message and (with --shrink) a shrunk C++ reproducer. With --grad it runs gradient fuzzing,
// with --symbolic programs with a symbolic leading axis (one compile, three sizes).
//
//   hedra-fuzz --count 10000 --seed 1 [--shrink] [--grad] [--linear] [--symbolic] [--max-ops 16]
//              [--batch 8] [--max-elements 3000] [--rejections] [--print SEED]
//              [--save-graphs DIR] [--with KIND]
// --with KIND runs only the programs that hold an op of that kind (op_kind_name: "scan"...),
// --count of them, from the seeds that draw one (a soak of a new op kind).
// --save-graphs writes each program as a graph file (a corpus for hedra-graph-fuzzer).
// Programs run in batches of --batch (one compile per configuration for the whole batch); a
// failing program is run again alone, shrunk and printed.
// Exit status: 0 when every program passed, 1 otherwise.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>

#include "core/graph_file.hpp"
#include "fuzz/lib/fuzz_generator.hpp"
#include "fuzz/lib/fuzz_runner.hpp"
#include "fuzz/lib/fuzz_shrink.hpp"
#include "fuzz/lib/fuzz_variants.hpp"
#include "fuzz/lib/grad_fuzz.hpp"

using namespace hedra;
using namespace hedra::fuzz;

namespace {

struct Args {
    std::uint64_t count = 100, seed = 1;
    bool shrink = false, grad = false, linear = false, rejections = false, symbolic = false;
    int max_ops = 16;
    int batch = 8;
    long long max_elements = 3000;
    long long print = -1;
    std::string save_graphs; // directory: save each program as a graph file, run nothing
    std::string with;        // only programs with an op of this kind
};

bool has_kind(const FuzzProgram& p, const std::string& kind) {
    return kind.empty() || std::any_of(p.ops.begin(), p.ops.end(),
                                       [&](const Op& op) { return kind == op_kind_name(op.kind); });
}

// The next seed from `seed` on whose program (generated with `options`) has an op of `kind`.
std::uint64_t next_seed_with(std::uint64_t seed, const std::string& kind,
                             const GeneratorOptions& options) {
    while (!has_kind(generate(seed, options).program, kind))
        ++seed;
    return seed;
}

Args parse(int argc, char** argv) {
    Args a;
    for (int i = 1; i < argc; ++i) {
        std::string s = argv[i];
        auto next = [&]() -> const char* {
            if (i + 1 >= argc) {
                std::fprintf(stderr, "hedra-fuzz: %s needs a value\n", s.c_str());
                std::exit(2);
            }
            return argv[++i];
        };
        if (s == "--count")
            a.count = std::strtoull(next(), nullptr, 10);
        else if (s == "--seed")
            a.seed = std::strtoull(next(), nullptr, 10);
        else if (s == "--max-ops")
            a.max_ops = std::atoi(next());
        else if (s == "--batch")
            a.batch = std::max(1, std::atoi(next()));
        else if (s == "--max-elements")
            a.max_elements = std::atoll(next());
        else if (s == "--print")
            a.print = std::atoll(next());
        else if (s == "--save-graphs")
            a.save_graphs = next();
        else if (s == "--shrink")
            a.shrink = true;
        else if (s == "--grad")
            a.grad = true;
        else if (s == "--symbolic")
            a.symbolic = true;
        else if (s == "--linear")
            a.linear = true;
        else if (s == "--with")
            a.with = next();
        else if (s == "--rejections")
            a.rejections = true;
        else {
            std::fprintf(
                stderr, "usage: hedra-fuzz [--count N] [--seed S] [--shrink] [--grad] [--symbolic] "
                        "[--linear] [--max-ops K] [--batch B] [--max-elements E] [--rejections] "
                        "[--print SEED] "
                        "[--save-graphs DIR] [--with KIND]\n");
            std::exit(2);
        }
    }
    return a;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

int run_gradients(const Args& args) {
    auto t0 = std::chrono::steady_clock::now();
    std::map<std::string, int> tally;
    int failures = 0;
    std::uint64_t seed = args.seed - 1;
    for (std::uint64_t k = 0; k < args.count; ++k) {
        seed = next_seed_with(seed + 1, args.with, grad_generator_options(args.linear));
        GradResult r = args.linear ? check_linear_program(seed) : check_gradient_program(seed);
        ++tally[grad_status_name(r.status)];
        if (r.status == GradStatus::Fail || r.status == GradStatus::Error) {
            ++failures;
            std::printf("seed %llu: %s: %s\n", static_cast<unsigned long long>(seed),
                        grad_status_name(r.status), r.message.c_str());
            if (args.shrink) std::printf("%s\n", r.reproducer.c_str());
        }
        if ((k + 1) % 100 == 0)
            std::printf("[%llu programs, %.0f s]\n", static_cast<unsigned long long>(k + 1),
                        seconds_since(t0));
        std::fflush(stdout);
    }
    std::printf("%s gradient fuzzing: %llu programs in %.1f s:", args.linear ? "linear" : "",
                static_cast<unsigned long long>(args.count), seconds_since(t0));
    for (const auto& [name, n] : tally)
        std::printf(" %s %d", name.c_str(), n);
    std::printf("\n");
    return failures == 0 ? 0 : 1;
}

// Symbolic sizes: each program with a symbolic leading axis on one of its data arrays where
// hedra accepts one (run_symbolic), at three values against the reference.
int run_symbolic_sizes(const Args& args, const GeneratorOptions& gen) {
    auto t0 = std::chrono::steady_clock::now();
    std::map<std::string, int> tally;
    int failures = 0, drawn = 0;
    for (std::uint64_t k = 0; k < args.count; ++k) {
        std::uint64_t seed = args.seed + k;
        bool symbolic = false;
        RunResult r = run_symbolic(generate(seed, gen).program, symbolic);
        drawn += symbolic;
        ++tally[outcome_name(r.outcome)];
        if (r.outcome != Outcome::Pass && r.outcome != Outcome::BuildError &&
            r.outcome != Outcome::Invalid) {
            ++failures;
            std::printf("seed %llu: %s: %s\n", static_cast<unsigned long long>(seed),
                        outcome_name(r.outcome), r.message.c_str());
        }
        if ((k + 1) % 100 == 0)
            std::printf("[%llu programs, %d with a symbolic axis, %.0f s]\n",
                        static_cast<unsigned long long>(k + 1), drawn, seconds_since(t0));
        std::fflush(stdout);
    }
    std::printf("symbolic-size fuzzing: %llu programs, %d with a symbolic axis, in %.1f s:",
                static_cast<unsigned long long>(args.count), drawn, seconds_since(t0));
    for (const auto& [name, n] : tally)
        std::printf(" %s %d", name.c_str(), n);
    std::printf("\n");
    return failures == 0 ? 0 : 1;
}

} // namespace

int main(int argc, char** argv) {
    Args args = parse(argc, argv);
    if (args.grad || args.linear) return run_gradients(args);
    GeneratorOptions gen;
    gen.max_ops = args.max_ops;
    gen.max_elements = args.max_elements;
    if (args.symbolic) return run_symbolic_sizes(args, gen);
    if (args.print >= 0) {
        Generated g = generate(static_cast<std::uint64_t>(args.print), gen);
        std::printf("%s", to_cpp(g.program, "seed " + std::to_string(args.print)).c_str());
        for (const std::string& r : g.rejections)
            std::printf("// rejected: %s\n", r.c_str());
        for (const std::string& r : g.dropped)
            std::printf("// dropped: %s\n", r.c_str());
        return 0;
    }
    if (!args.save_graphs.empty()) {
        for (std::uint64_t k = 0; k < args.count; ++k) {
            FuzzProgram p = generate(args.seed + k, gen).program;
            for (Op& op : p.ops)
                op.placeholder = false;
            save_graph_file(args.save_graphs + "/seed" + std::to_string(args.seed + k) + ".json",
                            build(p).outputs);
        }
        return 0;
    }
    auto t0 = std::chrono::steady_clock::now();
    std::map<std::string, int> tally;
    std::map<std::string, int> rejections, dropped, kinds;
    int failures = 0;
    std::uint64_t ops = 0, variants = 0, next = args.seed;
    for (std::uint64_t k = 0; k < args.count; k += static_cast<std::uint64_t>(args.batch)) {
        std::uint64_t n =
            std::min<std::uint64_t>(static_cast<std::uint64_t>(args.batch), args.count - k);
        std::vector<FuzzProgram> programs;
        std::vector<std::uint64_t> seeds;
        for (std::uint64_t j = 0; j < n; ++j) {
            next = next_seed_with(next, args.with, gen);
            seeds.push_back(next);
            Generated g = generate(next++, gen);
            ops += g.program.ops.size();
            for (const std::string& r : g.rejections)
                ++rejections[r.substr(0, 160)];
            for (const std::string& r : g.dropped)
                ++dropped[r];
            for (const Op& op : g.program.ops)
                ++kinds[op_kind_name(op.kind)];
            programs.push_back(std::move(g.program));
        }
        RunnerOptions options; // memoization checks (one more compile) on every other batch
        options.memo_check = (k / static_cast<std::uint64_t>(args.batch)) % 2 == 0;
        std::vector<RunResult> results =
            run_differential_batch(programs, configs_for(args.seed + k), options);
        for (std::uint64_t j = 0; j < n; ++j) {
            const RunResult& r = results[j];
            std::uint64_t seed = seeds[j];
            ++tally[outcome_name(r.outcome)];
            if (r.outcome == Outcome::Pass) continue;
            ++failures;
            std::printf("seed %llu: %s [%s]: %s\n", static_cast<unsigned long long>(seed),
                        outcome_name(r.outcome), r.config.to_string().c_str(), r.message.c_str());
            std::vector<RunConfig> failing = {r.config};
            RunResult alone = run_differential(programs[j], failing, {false, false});
            if (alone.outcome == Outcome::Pass) {
                std::printf("  (passes alone: fails only within its batch)\n");
                continue;
            }
            if (!args.shrink) continue;
            Outcome kind = alone.outcome;
            ShrinkStats stats;
            FuzzProgram small = shrink(
                programs[j],
                [&](const FuzzProgram& p) {
                    return run_differential(p, failing, {false, false}).outcome == kind;
                },
                300, &stats);
            RunResult again = run_differential(small, failing, {false, false});
            std::printf("shrunk in %d attempts (%d edits) from %zu to %zu ops: %s\n%s\n",
                        stats.attempts, stats.accepted, programs[j].ops.size(), small.ops.size(),
                        again.message.c_str(),
                        to_cpp(small, "fuzz seed " + std::to_string(seed)).c_str());
        }
        // Cache keys: one program alone, then two near-identical variants in the same process
        // (every other batch).
        if ((k / static_cast<std::uint64_t>(args.batch)) % 2 == 1) {
            std::size_t j = (k / static_cast<std::uint64_t>(args.batch) / 2) % n;
            std::vector<RunConfig> one = {configs_for(args.seed + k).back()};
            RunnerOptions plain{false, false};
            if (run_differential(programs[j], one, plain).outcome == Outcome::Pass)
                for (std::uint64_t v = 0; v < 2; ++v) {
                    std::string what;
                    auto q = variant(programs[j], args.seed + k + v, &what);
                    if (!q) continue;
                    ++variants;
                    RunResult r = run_differential(*q, one, plain);
                    ++tally[std::string("variant ") + outcome_name(r.outcome)];
                    if (r.outcome == Outcome::Pass) continue;
                    ++failures;
                    std::printf(
                        "seed %llu, variant (%s), after the program ran: %s [%s]: %s\n%s\n%s\n",
                        static_cast<unsigned long long>(seeds[j]), what.c_str(),
                        outcome_name(r.outcome), r.config.to_string().c_str(), r.message.c_str(),
                        to_cpp(programs[j], "program").c_str(), to_cpp(*q, "variant").c_str());
                }
        }
        std::uint64_t done = k + n;
        if (done / 100 != k / 100 || done == args.count)
            std::printf("[%llu programs, %.0f s, %d failures]\n",
                        static_cast<unsigned long long>(done), seconds_since(t0), failures);
        std::fflush(stdout);
    }
    std::printf("differential fuzzing: %llu programs (%llu ops) in %.1f s:",
                static_cast<unsigned long long>(args.count), static_cast<unsigned long long>(ops),
                seconds_since(t0));
    for (const auto& [name, n] : tally)
        std::printf(" %s %d", name.c_str(), n);
    std::printf(" (seeds %llu-%llu)\n", static_cast<unsigned long long>(args.seed),
                static_cast<unsigned long long>(next - 1));
    int total_rejections = 0;
    for (const auto& [msg, n] : rejections)
        total_rejections += n;
    std::printf("variants run after their program (cache keys): %llu\n",
                static_cast<unsigned long long>(variants));
    std::printf("ops rejected by hedra while generating: %d (%zu distinct)\n", total_rejections,
                rejections.size());
    if (args.rejections) {
        for (const auto& [msg, n] : rejections)
            std::printf("  %5d  %s\n", n, msg.c_str());
        std::printf("dropped while generating:");
        for (const auto& [msg, n] : dropped)
            std::printf(" [%s] %d", msg.c_str(), n);
        std::printf("\nops by kind:");
        for (const auto& [name, n] : kinds)
            std::printf(" %s %d", name.c_str(), n);
        std::printf("\n");
    }
    return failures == 0 ? 0 : 1;
}
