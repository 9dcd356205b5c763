// bench/embedding: an embedding's forward and backward at GPT-2's vocabulary (50,257 rows),
// hedra (nn::embedding: a gather, its gradient a scatter_add in index order) against libtorch's
// F.embedding (forward, then backward into a dense gradient), timed alternately in one process.
// Both sides write the whole vocab × dim gradient (zeros where no token points), so the work is
// that clear plus tokens × dim reads and adds; the one-hot form hedra used before did
// tokens × vocab × dim. Prints the gradients' largest relative difference as a check.
#include <random>

#include "bench/bench_common.hpp"
#include "bench/embedding_peer.hpp"
#include "hedra.hpp"
#include "nn/transformer.hpp"

using namespace hedra;

int main(int argc, char** argv) {
    bench::Args args = bench::parse_args(argc, argv);
    struct Size {
        std::int64_t vocab, dim, tokens;
    };
    std::vector<Size> sizes = args.quick ? std::vector<Size>{{1000, 16, 64}}
                                         : std::vector<Size>{{50257, 384, 2048}, {50257, 768, 2048}};
    for (const Size& s : sizes) {
        std::mt19937 gen(3);
        std::uniform_real_distribution<float> u(-1.0f, 1.0f);
        std::vector<float> table(static_cast<std::size_t>(s.vocab * s.dim)),
            cot(static_cast<std::size_t>(s.tokens * s.dim));
        for (float& v : table)
            v = u(gen);
        for (float& v : cot)
            v = u(gen);
        std::vector<std::int64_t> tokens(static_cast<std::size_t>(s.tokens));
        for (std::int64_t& t : tokens)
            t = static_cast<std::int64_t>(gen() % static_cast<std::uint64_t>(s.vocab));
        Array ptable = placeholder(Shape::of({s.vocab, s.dim}), DType::F32, "table");
        Array ptokens = placeholder(Shape::of({s.tokens}), DType::I64, "tokens");
        Array pcot = placeholder(Shape::of({s.tokens, s.dim}), DType::F32, "cotangent");
        Array out = nn::embedding(ptokens, ptable);
        Array g = grad(sum(out * pcot), ptable);
        std::vector<HostArray> inputs{HostArray::from(table, {s.vocab, s.dim}),
                                      HostArray::from(tokens, {s.tokens}),
                                      HostArray::from(cot, {s.tokens, s.dim})};
        for (int threads : args.threads) {
            ComputeOptions options;
            options.num_threads = threads;
            CompiledProgram program = compile({out, g}, {ptable, ptokens, pcot}, options);
            std::vector<HostArray> got = program(inputs);
            auto peer = bench::make_torch_embedding(s.vocab, s.dim, table.data(), tokens, cot.data(),
                                                    threads);
            double worst = 0;
            if (peer)
                worst = bench::max_relative_difference(got[1].values<float>().data(),
                                                       peer->forward_backward(), table.size());
            int reps = args.reps > 0 ? args.reps : args.quick ? 3 : 11;
            bench::select_clock(args, threads);
            bench::PairTimes t = bench::time_alternately([&] { got = program(inputs); },
                                                         [&] { peer->forward_backward(); },
                                                         peer != nullptr, 2, reps);
            char extra[160];
            std::snprintf(extra, sizeof extra, "vocab=%lld dim=%lld tokens=%lld grad_maxrel=%.2g",
                          (long long)s.vocab, (long long)s.dim, (long long)s.tokens, worst);
            bench::print_line("embedding_fwd_bwd", threads, t,
                              peer ? "libtorch" : "missing(libtorch)", extra);
        }
    }
    return 0;
}
