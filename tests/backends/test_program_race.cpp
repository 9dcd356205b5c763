// Threads that compile the same program at once: one copy is stored and every thread runs it,
// the copy that lost the race stays loaded, and exceptions thrown afterwards unwind. Freeing the
// losing copy crashed the unwinder of a later exception now and then in the tensor-parallel
// tests, whose ranks compile the same pieces at once (tests/distributed/test_tensor_parallel:
// 3 crashes in 8 runs, none in 12 with the copy kept); this test runs the same race on its own.
#include <doctest/doctest.h>

#include <atomic>
#include <random>
#include <thread>

#include "core/expect_error.hpp"
#include "hedra.hpp"

using namespace hedra;

TEST_CASE("program race: threads compiling one program at once, then exceptions unwind") {
    // A constant no other test uses, so the program is new to this process.
    const float c = 1.0f + static_cast<float>(std::random_device{}() % 100000) * 1e-6f;
    for (int round = 0; round < 4; ++round) {
        const float k = c + static_cast<float>(round);
        std::atomic<int> ready{0};
        std::vector<double> got(4);
        std::vector<std::thread> threads;
        for (int t = 0; t < 4; ++t)
            threads.emplace_back([&, t] {
                Array x = placeholder(Shape::of({64}), DType::F32, "x");
                Array y = sum(tanh(x * k) + exp(x * 0.5f));
                ++ready;
                while (ready.load() < 4) { // start together, so the compiles overlap
                }
                ComputeOptions o;
                o.backend = "openmp";
                o.num_threads = 1;
                HostArray in({64}, DType::F32);
                got[std::size_t(t)] = compile({y}, {x}, o)({in})[0].flat(0);
            });
        for (std::thread& t : threads)
            t.join();
        for (double v : got)
            CHECK(v == doctest::Approx(64.0)); // tanh(0) + exp(0) per element
        for (int i = 0; i < 20; ++i)           // each throw walks every registered unwind table
            CHECK_ERROR(Array(placeholder(Shape::of({2}))) + placeholder(Shape::of({3})),
                        "broadcast");
    }
}
