// Output hooks (CompileOptions::output_hooks, Program::run_notifying): an openmp program tells
// each output as soon as the kernel completing it has run, while later kernels still run; what
// the hook writes into an output's memory is the result; without hooks compiled in, every
// output is told at the end; the reference backend tells them after its run.
#include <doctest/doctest.h>

#include <vector>

#include "differential/differential.hpp"

using namespace hedra;

namespace {

struct Log {
    std::vector<int> ready;        // outputs in the order told
    std::vector<int> ticks_before; // kernels run (ticks) when each was told
    int ticks = 0;
};

void on_ready(void* context, int output, void* data) {
    auto* log = static_cast<Log*>(context);
    log->ready.push_back(output);
    log->ticks_before.push_back(log->ticks);
    if (output == 0) static_cast<float*>(data)[0] = 42.0f; // an in-place change is the result
}

void on_tick(void* context) {
    ++static_cast<Log*>(context)->ticks;
}

} // namespace

TEST_CASE("output hooks: each output is told when final, in place, during the run") {
    test::openmp_backend();
    Array x = placeholder(Shape::of({64, 32}), DType::F32, "x");
    Array early = sum(x, {1});                                    // one kernel, first
    Array late = sum(tanh(matmul(x, transpose(x, {1, 0}))), {0}); // needs more kernels after
    HostArray in(std::vector<std::int64_t>{64, 32}, DType::F32);
    for (std::int64_t i = 0; i < in.size(); ++i)
        in.set_flat(i, 0.01 * static_cast<double>(i % 17));
    for (std::string backend : {"openmp", "reference"})
        for (bool hooks : {true, false}) {
            INFO(backend << (hooks ? " with" : " without") << " hooks");
            ComputeOptions o;
            o.backend = backend;
            o.output_hooks = hooks;
            CompiledProgram p = compile({early, late}, {x}, o);
            const std::vector<HostArray> plain = p({in});
            Log log;
            std::vector<HostArray> got = p({in}, OutputHook{on_ready, &log, on_tick});
            REQUIRE(log.ready.size() == 2);
            CHECK(got[0].flat(0) == 42.0);
            for (std::int64_t i = 1; i < got[0].size(); ++i)
                CHECK(got[0].flat(i) == plain[0].flat(i));
            for (std::int64_t i = 0; i < got[1].size(); ++i)
                CHECK(got[1].flat(i) == plain[1].flat(i));
            const bool during = backend == "openmp" && hooks;
            if (during) {
                CHECK(log.ready[0] == 0);                         // the early sum first
                CHECK(log.ticks_before[0] < log.ticks_before[1]); // told before the rest ran
                CHECK(log.ticks > 1);
            } else {
                CHECK(log.ready == std::vector<int>{0, 1}); // all at the end, in order
                CHECK(log.ticks == 0);
            }
        }
}
