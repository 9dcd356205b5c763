// Differential: scan (a loop carrying a state, its step traced once) on every backend against
// the reference interpreter and against naive loops: running sums, an Elman recurrence whose
// step is a matmul of closures, reverse scans, several carries and outputs, a step output that
// is also a carry, the carries of every step, scans along a middle axis, a scan inside a scan's
// step and programs compiled once and run on new inputs.
#include "differential/differential.hpp"

using namespace hedra;
using test::check_differential;

TEST_CASE("differential: scan keeps a running sum, its final carry and its steps' outputs") {
    Array xs = test::random_array(Shape::of({6, 5}), 1);
    Array init = test::random_array(Shape::of({5}), 2);
    auto [final, ys] = scan(
        [](const Array& c, const Array& x) {
            Array next = c + x;
            return std::pair{next, next * 2.0f};
        },
        init, xs);
    CHECK(final.shape() == Shape::of({5}));
    CHECK(ys.shape() == Shape::of({6, 5}));
    check_differential({final, ys}, test::Compare::Tolerance);
    // Against a naive loop.
    HostArray x = compute(xs), c0 = compute(init);
    std::vector<double> c(5);
    for (int j = 0; j < 5; ++j)
        c[j] = c0.flat(j);
    HostArray got = compute(ys);
    for (int t = 0; t < 6; ++t)
        for (int j = 0; j < 5; ++j) {
            c[j] += x.flat(t * 5 + j);
            CHECK(got.flat(t * 5 + j) == doctest::Approx(2 * c[j]).epsilon(1e-5));
        }
}

TEST_CASE("differential: an Elman recurrence whose step multiplies closures, with its states") {
    const std::int64_t T = 7, B = 4, D = 6, H = 8;
    Array xs = test::random_array(Shape::of({T, B, D}), 3);
    Array wx = test::random_array(Shape::of({D, H}), 4) * 0.5f;
    Array wh = test::random_array(Shape::of({H, H}), 5) * 0.5f;
    Array bias = test::random_array(Shape::of({H}), 6);
    Array h0 = zeros(Shape::of({B, H}));
    ScanResult r = scan(
        [&](const std::vector<Array>& c, const std::vector<Array>& x) {
            Array h = tanh(matmul(x[0], wx) + matmul(c[0], wh) + bias);
            return ScanStep{{h}, {h}};
        },
        {h0}, {xs});
    REQUIRE(r.ys.size() == 1);
    CHECK(r.ys[0].shape() == Shape::of({T, B, H}));
    CHECK(r.states[0].shape() == Shape::of({T, B, H}));
    check_differential({r.carries[0], r.ys[0], r.states[0]}, test::Compare::Tolerance);
    check_differential({r.carries[0]}, test::Compare::Tolerance); // only the last carry
    check_differential({sum(r.ys[0])}, test::Compare::Tolerance); // only the outputs
}

TEST_CASE("differential: reverse scans, two carries, outputs that are carries or inputs") {
    Array xs = test::random_array(Shape::of({5, 3}), 7);
    Array ys2 = test::random_array(Shape::of({5, 3}), 8);
    Array a0 = test::random_array(Shape::of({3}), 9);
    Array b0 = full(Shape::of({3}), 1.0f);
    for (bool reverse : {false, true}) {
        CAPTURE(reverse);
        ScanOptions o;
        o.reverse = reverse;
        ScanResult r = scan(
            [](const std::vector<Array>& c, const std::vector<Array>& x) {
                Array a = c[0] * 0.5f + x[0] * c[1];
                Array b = c[1] + x[1];
                return ScanStep{{a, b}, {a, x[0], c[1], a}};
            },
            {a0, b0}, {xs, ys2}, 0, o);
        std::vector<Array> all = r.carries;
        all.insert(all.end(), r.ys.begin(), r.ys.end());
        all.insert(all.end(), r.states.begin(), r.states.end());
        check_differential(all, test::Compare::Tolerance);
    }
}

TEST_CASE("differential: a scan along a middle axis, and a scan inside a scan's step") {
    Array xs = test::random_array(Shape::of({3, 6, 4}), 10); // scanned along axis 1
    Array init = zeros(Shape::of({3, 4}));
    auto [final, ys] = scan(
        [](const Array& c, const Array& x) {
            Array n = maximum(c, x) + 0.25f;
            return std::pair{n, n};
        },
        init, xs, 1);
    CHECK(ys.shape() == Shape::of({3, 6, 4}));
    check_differential({final, ys}, test::Compare::Tolerance);

    // The inner scan sums each step's row; the outer one accumulates those sums.
    Array grid = test::random_array(Shape::of({4, 5}), 11);
    auto [total, partial] = scan(
        [](const Array& c, const Array& row) {
            auto [s, inner] = scan(
                [](const Array& a, const Array& v) {
                    Array n = a + v;
                    return std::pair{n, n};
                },
                zeros(Shape()), row);
            Array n = c + s;
            return std::pair{n, inner};
        },
        zeros(Shape()), grid);
    CHECK(partial.shape() == Shape::of({4, 5}));
    check_differential({total, partial}, test::Compare::Tolerance);
}

TEST_CASE("differential: a compiled scan runs again on new inputs") {
    Array xs = placeholder(Shape::of({9, 4}), DType::F32, "xs");
    Array h0 = placeholder(Shape::of({4}), DType::F32, "h0");
    auto [final, ys] = scan(
        [](const Array& c, const Array& x) {
            Array n = c * 0.9f + x;
            return std::pair{n, n * n};
        },
        h0, xs);
    for (const std::string& name : test::generating_backends()) {
        CAPTURE(name);
        auto program =
            get_backend(name)->compile({final.node(), ys.node()}, {xs.node(), h0.node()}, {});
        for (unsigned seed : {1u, 2u}) {
            HostArray x = compute(test::random_array(Shape::of({9, 4}), seed));
            HostArray h = compute(test::random_array(Shape::of({4}), seed + 10));
            std::vector<HostArray> got = program->run({x, h});
            std::vector<HostArray> want =
                get_backend("reference")
                    ->compile({final.node(), ys.node()}, {xs.node(), h0.node()}, {})
                    ->run({x, h});
            for (std::size_t k = 0; k < 2; ++k)
                test::compare_arrays(got[k], want[k], test::Compare::Tolerance, {}, name);
        }
    }
}

TEST_CASE("differential: a scan over a symbolic number of steps, compiled once for every length") {
    Array xs = placeholder(Shape({dynamic("steps", 40), range(3)}), DType::F32, "xs");
    auto [final, ys] = scan(
        [](const Array& c, const Array& x) {
            Array n = c * 0.5f + x;
            return std::pair{n, n + 1.0f};
        },
        zeros(Shape::of({3})), xs);
    CompiledProgram program = compile({final, ys}, {xs});
    for (std::int64_t steps : {1, 5, 17, 40}) {
        CAPTURE(steps);
        HostArray x =
            compute(test::random_array(Shape::of({steps, 3}), static_cast<unsigned>(steps)));
        std::vector<HostArray> got = program({x});
        REQUIRE(got[1].sizes() == std::vector<std::int64_t>{steps, 3});
        // Against a naive loop.
        std::vector<double> c(3, 0.0);
        for (std::int64_t t = 0; t < steps; ++t)
            for (int j = 0; j < 3; ++j) {
                c[static_cast<std::size_t>(j)] =
                    c[static_cast<std::size_t>(j)] * 0.5 + x.flat(t * 3 + j);
                CHECK(got[1].flat(t * 3 + j) ==
                      doctest::Approx(c[static_cast<std::size_t>(j)] + 1.0).epsilon(1e-5));
            }
        for (int j = 0; j < 3; ++j)
            CHECK(got[0].flat(j) == doctest::Approx(c[static_cast<std::size_t>(j)]).epsilon(1e-5));
    }
}
