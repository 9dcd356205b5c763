// The openmp backend's program cache: a graph rebuilt with the same structure (new host data of
// the same shapes) reuses the compiled program and reads the new data; compile() programs run
// many times with new inputs; a different shape or tile size compiles anew.
#include "differential/differential.hpp"

using namespace hedra;

namespace {

backend::OpenMPStats stats() {
    auto b = std::dynamic_pointer_cast<backend::OpenMPBackend>(test::openmp_backend());
    REQUIRE(b != nullptr);
    return b->stats();
}

// A graph of a few maps and a reduction over fresh host data.
Array step(const std::vector<float>& x, const std::vector<float>& w, std::int64_t n) {
    Array xs = array(x, Shape::of({n, 3}));
    Array ws = array(w, Shape::of({3}));
    return sum(tanh(xs * ws) + 1.0f, {1});
}

std::vector<double> naive_step(const std::vector<float>& x, const std::vector<float>& w,
                               std::int64_t n) {
    std::vector<double> out;
    for (std::int64_t i = 0; i < n; ++i) {
        double s = 0;
        for (int j = 0; j < 3; ++j)
            s += std::tanh(double(x[i * 3 + j] * w[j])) + 1.0;
        out.push_back(s);
    }
    return out;
}

} // namespace

TEST_CASE("program cache: a rebuilt graph reuses the program and binds the new data") {
    ComputeOptions options;
    options.backend = "openmp";
    test::openmp_backend();
    std::int64_t n = 37;
    auto first = stats();
    for (int iteration = 0; iteration < 4; ++iteration) {
        auto x = test::random_values(std::size_t(n * 3), 100 + iteration);
        auto w = test::random_values(3, 200 + iteration);
        HostArray got = compute(step(x, w, n), options);
        auto want = naive_step(x, w, n);
        for (std::int64_t i = 0; i < n; ++i)
            REQUIRE(got.flat(i) == doctest::Approx(want[i]));
    }
    auto last = stats();
    CHECK(last.programs_compiled - first.programs_compiled <= 1);
    CHECK(last.program_cache_hits - first.program_cache_hits >= 3);

    // Another size is another program.
    auto x = test::random_values(5 * 3, 7), w = test::random_values(3, 8);
    HostArray other = compute(step(x, w, 5), options);
    CHECK(stats().programs_compiled == last.programs_compiled + 1);
    auto want = naive_step(x, w, 5);
    for (int i = 0; i < 5; ++i)
        CHECK(other.flat(i) == doctest::Approx(want[i]));
}

TEST_CASE("program cache: compile() runs with new inputs, at 1 and 2 threads") {
    test::openmp_backend();
    Array a = placeholder(Shape::of({9, 4}), DType::F32, "a");
    Array b = placeholder(Shape::of({4}), DType::F32, "b");
    for (int threads : {1, 2}) {
        ComputeOptions options;
        options.backend = "openmp";
        options.num_threads = threads;
        CompiledProgram prog = compile({a * b + 1.0f, sum(a, {0})}, {a, b}, options);
        for (int run = 0; run < 3; ++run) {
            auto av = test::random_values(36, unsigned(run)), bv = test::random_values(4, 9);
            auto out = prog({HostArray::from(av, {9, 4}), HostArray::from(bv, {4})});
            for (int i = 0; i < 9; ++i)
                for (int j = 0; j < 4; ++j)
                    CHECK(out[0].flat(i * 4 + j) == av[i * 4 + j] * bv[j] + 1.0f);
            for (int j = 0; j < 4; ++j) {
                double s = 0;
                for (int i = 0; i < 9; ++i)
                    s += av[i * 4 + j];
                CHECK(out[1].flat(j) == doctest::Approx(s));
            }
        }
    }
}

TEST_CASE("program cache: the same placeholder twice in the graph and a leaf output") {
    test::openmp_backend();
    Array a = placeholder(Shape::of({6}), DType::I32, "a");
    Array d = array(std::vector<std::int32_t>{1, 2, 3, 4, 5, 6}, Shape::of({6}));
    ComputeOptions options;
    options.backend = "openmp";
    CompiledProgram prog = compile({a * a + d, d}, {a}, options);
    auto out = prog({HostArray::from(std::vector<std::int32_t>{1, -2, 3, -4, 5, -6}, {6})});
    std::vector<double> want = {2, 6, 12, 20, 30, 42};
    for (int i = 0; i < 6; ++i) {
        CHECK(out[0].flat(i) == want[i]);
        CHECK(out[1].flat(i) == i + 1);
    }
}
