// The small GPT of the in-process tensor- and pipeline-parallel tests, its batches, and the
// grid of in-process ranks (threads) they run on.
#pragma once

#include <cstdint>
#include <thread>
#include <vector>

#include "core/host_array.hpp"
#include "distributed/in_process.hpp"
#include "distributed/process_grid.hpp"
#include "nn/gpt.hpp"

namespace hedra::distributed::test {

// Vocabulary 11 (padded to 12 on tp 2 and 4), context 8, 4 heads of width 4.
inline nn::GptConfig tiny_gpt(std::int64_t layers) {
    return {.vocab = 11, .block = 8, .layers = layers, .heads = 4, .embd = 16, .bias = true};
}

// `batch` rows of tokens and targets (batch, 8) from a fixed rule, the same for every seed on
// every rank.
inline std::vector<HostArray> tiny_batch(std::int64_t batch, unsigned seed) {
    HostArray x({batch, 8}, DType::I64), y({batch, 8}, DType::I64);
    std::uint64_t s = seed * 0x9e3779b97f4a7c15ULL + 7;
    for (std::int64_t i = 0; i < x.size(); ++i) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        x.set_flat(i, static_cast<double>(s % 11));
        y.set_flat(i, static_cast<double>((s / 11 + static_cast<std::uint64_t>(i)) % 11));
    }
    return {x, y};
}

// Runs f(grid, world rank) on every rank of a `shape` grid of in-process ranks, each on a
// thread of its own, and waits for all of them.
template <class F>
void on_grid(const GridShape& shape, F f) {
    auto world = in_process_group(shape.size());
    std::vector<std::thread> threads;
    for (int r = 0; r < shape.size(); ++r)
        threads.emplace_back([&, r] {
            ProcessGrid grid(world[static_cast<std::size_t>(r)], shape);
            f(grid, r);
        });
    for (std::thread& t : threads)
        t.join();
}

} // namespace hedra::distributed::test
