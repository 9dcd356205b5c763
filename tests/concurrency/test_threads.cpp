// Concurrency: several host threads building, computing, compiling and differentiating graphs
// that share nodes, on the openmp backend (whose kernels start OpenMP teams of their own). Run
// under ThreadSanitizer by scripts/sanitize.sh. Every result is checked against the reference
// interpreter's, computed before the threads start (with evaluate: no memoization).
#include <doctest/doctest.h>

#include <atomic>
#include <thread>

#include "backends/openmp/jit_compiler.hpp"
#include "backends/openmp/openmp_backend.hpp"
#include "hedra.hpp"

using namespace hedra;

namespace {

constexpr int kThreads = 4;

ComputeOptions openmp(int threads = 2) {
    static const bool registered = [] {
        bool known = false;
        for (const std::string& n : backend_names())
            known = known || n == "openmp";
        if (!known)
            register_backend("openmp", [] { return std::make_shared<backend::OpenMPBackend>(); });
        return true;
    }();
    (void)registered;
    ComputeOptions o;
    o.backend = "openmp";
    o.num_threads = threads;
    return o;
}

std::vector<float> values(std::size_t n, int salt) {
    std::vector<float> v(n);
    for (std::size_t i = 0; i < n; ++i)
        v[i] = static_cast<float>((static_cast<int>(i) * 5 + salt) % 13) / 8.0f - 0.75f;
    return v;
}

// Two structures (by `kind`) over shared leaves: a matmul-like contraction with a window view,
// and a softmax-like normalization.
Array program(const Array& x, const Array& w, int kind) {
    if (kind == 0) {
        Array win = view(x, Shape::of({6, 4, 3}), AffineMap(3, 2, {1, 0, 0, 0, 1, 1}, {0, 0}));
        return sum(win * reshape(w, Shape{range(1), range(1), range(3)}), {2});
    }
    Array e = exp(x - max(x, {1}, true));
    return e / sum(e, {1}, true) + sum(w);
}

std::vector<double> reference(const Array& a) {
    return get_backend("reference")->evaluate({a.node()}, {}).at(0).to_doubles();
}

bool close(const HostArray& got, const std::vector<double>& want) {
    std::vector<double> g = got.to_doubles();
    if (g.size() != want.size()) return false;
    for (std::size_t i = 0; i < g.size(); ++i)
        if (!(std::abs(g[i] - want[i]) <= 1e-5 * (1 + std::abs(want[i])))) return false;
    return true;
}

template <class F>
void in_threads(F body) {
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
        threads.emplace_back(body, t);
    for (std::thread& t : threads)
        t.join();
}

} // namespace

TEST_CASE("concurrency: threads build equal graphs into the same interned nodes") {
    Array x = array(values(48, 1), Shape::of({6, 8}));
    Array w = array(values(3, 2), Shape::of({3}));
    std::vector<Array> built(kThreads * 2); // kept alive: interning holds nodes weakly
    in_threads([&](int t) {
        for (int kind = 0; kind < 2; ++kind)
            built[static_cast<std::size_t>(t * 2 + kind)] = program(x, w, kind);
    });
    for (int t = 1; t < kThreads; ++t)
        for (int kind = 0; kind < 2; ++kind)
            CHECK(built[static_cast<std::size_t>(t * 2 + kind)].node() ==
                  built[static_cast<std::size_t>(kind)].node());
}

TEST_CASE("concurrency: compute from several threads on shared graphs") {
    Array x = array(values(48, 3), Shape::of({6, 8}));
    Array w = array(values(3, 4), Shape::of({3}));
    std::vector<std::vector<double>> want = {reference(program(x, w, 0)),
                                             reference(program(x, w, 1))};
    std::atomic<int> bad{0};
    in_threads([&](int t) {
        for (int round = 0; round < 3; ++round) {
            int kind = (t + round) % 2;
            // A fresh graph over the shared leaves: the same interned nodes in every thread;
            // the first compute memoizes them, the others may race with it.
            Array y = program(x, w, kind);
            if (!close(compute(y, openmp(1 + t % 2)), want[static_cast<std::size_t>(kind)])) ++bad;
        }
    });
    CHECK(bad == 0);
    // Fresh leaves per thread: nothing memoized, every thread runs compiled code.
    std::vector<std::vector<double>> own(kThreads);
    std::vector<Array> outs;
    for (int t = 0; t < kThreads; ++t) {
        Array xt = array(values(48, 10 + t), Shape::of({6, 8}));
        outs.push_back(program(xt, w, t % 2));
        own[static_cast<std::size_t>(t)] = reference(outs.back());
    }
    in_threads([&](int t) {
        if (!close(compute(outs[static_cast<std::size_t>(t)], openmp()),
                   own[static_cast<std::size_t>(t)]))
            ++bad;
    });
    CHECK(bad == 0);
}

TEST_CASE("concurrency: one compiled program run from several threads") {
    Array x = placeholder(Shape::of({6, 8}), DType::F32, "x");
    Array w = array(values(3, 5), Shape::of({3}));
    Array y = program(x, w, 0) + sum(program(x, w, 1));
    CompiledProgram p = compile({y}, {x}, openmp());
    ComputeOptions ref;
    ref.backend = "reference";
    CompiledProgram r = compile({y}, {x}, ref);
    std::vector<HostArray> inputs;
    std::vector<std::vector<double>> want;
    for (int t = 0; t < kThreads; ++t) {
        inputs.push_back(HostArray::from(values(48, 20 + t), {6, 8}));
        want.push_back(r({inputs.back()}).at(0).to_doubles());
    }
    std::atomic<int> bad{0};
    in_threads([&](int t) {
        for (int round = 0; round < 5; ++round) // the shared arena is busy: private ones
            if (!close(p({inputs[static_cast<std::size_t>(t)]}).at(0),
                       want[static_cast<std::size_t>(t)]))
                ++bad;
    });
    CHECK(bad == 0);
}

TEST_CASE("concurrency: compile equal and different graphs from several threads") {
    Array w = array(values(3, 6), Shape::of({3}));
    HostArray input = HostArray::from(values(48, 30), {6, 8});
    std::vector<std::vector<double>> want;
    for (int kind = 0; kind < 2; ++kind) {
        Array x = placeholder(Shape::of({6, 8}), DType::F32, "x");
        ComputeOptions ref;
        ref.backend = "reference";
        want.push_back(compile({program(x, w, kind) * 3.0f}, {x}, ref)({input}).at(0).to_doubles());
    }
    std::atomic<int> bad{0};
    in_threads([&](int t) {
        // Each thread its own placeholder: equal structures, distinct graphs.
        Array x = placeholder(Shape::of({6, 8}), DType::F32, "x");
        CompiledProgram p = compile({program(x, w, t % 2) * 3.0f}, {x}, openmp());
        if (!close(p({input}).at(0), want[static_cast<std::size_t>(t % 2)])) ++bad;
    });
    CHECK(bad == 0);
}

TEST_CASE("concurrency: gradients from several threads") {
    Array w = array(values(3, 7), Shape::of({3}));
    std::vector<Array> xs, grads;
    std::vector<std::vector<double>> want;
    for (int t = 0; t < kThreads; ++t) {
        xs.push_back(array(values(48, 40 + t), Shape::of({6, 8})));
        Array g =
            grad(sum(program(xs.back(), w, t % 2) * sum(program(xs.back(), w, 0))), xs.back());
        want.push_back(reference(g));
    }
    std::atomic<int> bad{0};
    in_threads([&](int t) {
        // Build the gradient again in the thread (shared interned nodes) and compute it.
        const Array& x = xs[static_cast<std::size_t>(t)];
        Array g = grad(sum(program(x, w, t % 2) * sum(program(x, w, 0))), x);
        if (!close(compute(g, openmp()), want[static_cast<std::size_t>(t)])) ++bad;
    });
    CHECK(bad == 0);
}

TEST_CASE("concurrency: the JIT compiles and loads from several threads") {
    std::atomic<int> bad{0};
    in_threads([&](int t) {
        for (int round = 0; round < 3; ++round) {
            int n = (t + round) % 3;
            std::string source = "extern \"C\" int hedra_concurrency_k() { return " +
                                 std::to_string(100 + n) + "; }\n";
            auto module = backend::JitCompiler::instance().compile(source);
            if (module->function<int()>("hedra_concurrency_k")() != 100 + n) ++bad;
        }
    });
    CHECK(bad == 0);
}
