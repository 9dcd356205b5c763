// Reference backend: constants, host data, maps (incl. multi-output), broadcasting, rank 0,
// empty shapes and index components, checked against hand values and naive loops.
#include <doctest/doctest.h>

#include <cmath>
#include <tuple>

#include "hedra.hpp"

using namespace hedra;

namespace {

HostArray ref(const Array& a) {
    ComputeOptions options;
    options.backend = "reference";
    return compute(a, options);
}

void check_values(const HostArray& h, const std::vector<std::int64_t>& sizes,
                  const std::vector<double>& expected, double eps = 1e-6) {
    REQUIRE(h.sizes() == sizes);
    auto got = h.to_doubles();
    REQUIRE(got.size() == expected.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
        INFO("element " << i);
        CHECK(got[i] == doctest::Approx(expected[i]).epsilon(eps));
    }
}

std::vector<float> sample(std::size_t n, int seed) {
    std::vector<float> v(n);
    for (std::size_t i = 0; i < n; ++i)
        v[i] = static_cast<float>((static_cast<long>(i) * 7919 + seed * 104729) % 2001) / 1000.0f -
               1.0f;
    return v;
}

} // namespace

TEST_CASE("reference: constants and full") {
    HostArray c = ref(constant(2.5));
    CHECK(c.rank() == 0);
    CHECK(c.dtype() == DType::F32);
    check_values(c, {}, {2.5});

    HostArray i = ref(constant(3, DType::I32));
    CHECK(i.dtype() == DType::I32);
    CHECK(i.values<std::int32_t>()[0] == 3);

    check_values(ref(full(Shape::of({2, 3}), 7.0)), {2, 3}, std::vector<double>(6, 7.0));
    check_values(ref(full(Shape{range(2, 5)}, -1.5, DType::F64)), {3}, {-1.5, -1.5, -1.5});
    check_values(ref(zeros(Shape::of({2}))), {2}, {0, 0});
    check_values(ref(ones(Shape::of({1, 2}), DType::I64)), {1, 2}, {1, 1});
}

TEST_CASE("reference: host data and unary maps") {
    std::vector<float> av = sample(6, 1);
    Array a = array(av, Shape::of({2, 3}));
    check_values(ref(a), {2, 3}, {av.begin(), av.end()});

    HostArray sq = ref(lazy([](auto x) { return x * x + 1; }, a));
    CHECK(sq.dtype() == DType::F32);
    std::vector<double> expect;
    for (float x : av)
        expect.push_back(x * x + 1.0f);
    check_values(sq, {2, 3}, expect);

    std::vector<float> pos{0.5f, 1.0f, 2.0f, 3.5f};
    Array p = array(pos, Shape::of({4}));
    std::vector<double> e_exp, e_log, e_sqrt, e_tanh, e_sig, e_pow;
    for (float x : pos) {
        e_exp.push_back(std::exp(x));
        e_log.push_back(std::log(x));
        e_sqrt.push_back(std::sqrt(x));
        e_tanh.push_back(std::tanh(x));
        e_sig.push_back(1.0 / (1.0 + std::exp(-x)));
        e_pow.push_back(std::pow(x, 1.5));
    }
    check_values(ref(exp(p)), {4}, e_exp, 1e-6);
    check_values(ref(log(p)), {4}, e_log, 1e-6);
    check_values(ref(sqrt(p)), {4}, e_sqrt, 1e-6);
    check_values(ref(tanh(p)), {4}, e_tanh, 1e-6);
    check_values(ref(sigmoid(p)), {4}, e_sig, 1e-6);
    check_values(ref(pow(p, 1.5)), {4}, e_pow, 1e-6);

    Array m = array(std::vector<double>{-2.0, -0.5, 0.0, 3.0}, Shape::of({4}));
    check_values(ref(abs(m)), {4}, {2.0, 0.5, 0.0, 3.0});
    check_values(ref(relu(m)), {4}, {0.0, 0.0, 0.0, 3.0});
    check_values(ref(-m), {4}, {2.0, 0.5, -0.0, -3.0});
    check_values(ref(cast(m, DType::I32)), {4}, {-2, 0, 0, 3});
}

TEST_CASE("reference: binary maps, select and promotion") {
    std::vector<float> av{1, 2, 3, 4, 5, 6}, bv{6, 5, 4, 3, 2, 1};
    Array a = array(av, Shape::of({2, 3})), b = array(bv, Shape::of({2, 3}));
    auto f = [](auto x, auto y) { return select(x < y, x, y * 2); };
    std::vector<double> expect;
    for (int i = 0; i < 6; ++i)
        expect.push_back(av[i] < bv[i] ? av[i] : bv[i] * 2);
    check_values(ref(lazy(f, a, b)), {2, 3}, expect);

    check_values(ref(a - b), {2, 3}, {-5, -3, -1, 1, 3, 5});
    check_values(ref(a / b), {2, 3}, {1.0 / 6, 2.0 / 5, 3.0 / 4, 4.0 / 3, 5.0 / 2, 6.0});
    check_values(ref(minimum(a, b)), {2, 3}, {1, 2, 3, 3, 2, 1});
    check_values(ref(maximum(a, 3.5)), {2, 3}, {3.5, 3.5, 3.5, 4, 5, 6});
    check_values(ref(where(a > b, a, 0.0)), {2, 3}, {0, 0, 0, 4, 5, 6});
    HostArray cmp = ref(a >= 3);
    CHECK(cmp.dtype() == DType::Bool);
    check_values(cmp, {2, 3}, {0, 0, 1, 1, 1, 1});
    check_values(ref(a == b), {2, 3}, {0, 0, 0, 0, 0, 0});
    check_values(ref(a != 4), {2, 3}, {1, 1, 1, 0, 1, 1});

    Array i = array(std::vector<std::int32_t>{7, -7, 9}, Shape::of({3}));
    HostArray idiv = ref(i / 2);
    CHECK(idiv.dtype() == DType::I32);
    check_values(idiv, {3}, {3, -3, 4});
    Array j = array(std::vector<std::int64_t>{1, 2, 3}, Shape::of({3}));
    HostArray mixed = ref(i + j);
    CHECK(mixed.dtype() == DType::I64);
    check_values(mixed, {3}, {8, -5, 12});
    Array x = array(std::vector<float>{0.5f, 0.25f, 2.0f}, Shape::of({3}));
    HostArray fl = ref(i * x);
    CHECK(fl.dtype() == DType::F32);
    check_values(fl, {3}, {3.5, -1.75, 18.0});
}

TEST_CASE("reference: rank 0 arrays") {
    check_values(ref(lazy([](auto x) { return x * 2 + 1; }, constant(3.0))), {}, {7.0});
    Array s = array(std::vector<double>{4.0}, Shape{});
    HostArray h = ref(s * s);
    CHECK(h.dtype() == DType::F64);
    check_values(h, {}, {16.0});
    Array m = array(std::vector<float>{1, 2, 3, 4}, Shape::of({2, 2}));
    check_values(ref(m + constant(10.0)), {2, 2}, {11, 12, 13, 14});
}

TEST_CASE("reference: empty shapes") {
    Array e = array(std::vector<float>{}, Shape::of({0, 3}));
    HostArray h = ref(e * 2 + 1);
    CHECK(h.sizes() == std::vector<std::int64_t>{0, 3});
    CHECK(h.size() == 0);
    Array s = full(Shape{range(5, 5)}, 1.0);
    CHECK(ref(s + 1).size() == 0);
    CHECK(ref(index_components(Shape::of({2, 0}), 1)).size() == 0);
}

TEST_CASE("reference: broadcasting in each axis") {
    std::vector<float> col{1, 2, 3}, row{10, 20, 30, 40};
    Array c = array(col, Shape::of({3, 1})), r = array(row, Shape::of({1, 4}));
    std::vector<double> expect;
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 4; ++j)
            expect.push_back(col[i] + row[j]);
    check_values(ref(c + r), {3, 4}, expect);

    std::vector<float> big = sample(24, 2), mid = sample(3, 3), last = sample(4, 4);
    Array a = array(big, Shape::of({2, 3, 4}));
    Array m = array(mid, Shape::of({3, 1}));
    Array l = array(last, Shape::of({4}));
    std::vector<double> e_mid, e_last;
    for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 3; ++j)
            for (int k = 0; k < 4; ++k) {
                e_mid.push_back(big[(i * 3 + j) * 4 + k] * mid[j]);
                e_last.push_back(big[(i * 3 + j) * 4 + k] - last[k]);
            }
    check_values(ref(a * m), {2, 3, 4}, e_mid);
    check_values(ref(a - l), {2, 3, 4}, e_last);

    std::vector<float> p = sample(8, 5), q = sample(6, 6);
    Array x = array(p, Shape::of({2, 1, 4})), y = array(q, Shape::of({2, 3, 1}));
    std::vector<double> e_xy;
    for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 3; ++j)
            for (int k = 0; k < 4; ++k)
                e_xy.push_back(p[i * 4 + k] + q[i * 3 + j]);
    check_values(ref(x + y), {2, 3, 4}, e_xy);

    Array shifted = array(std::vector<float>{1, 2, 3}, Shape{range(1, 4)});
    Array one = array(std::vector<float>{5}, Shape::of({1}));
    Array sum = shifted + one;
    CHECK(sum.shape() == Shape{range(1, 4)});
    check_values(ref(sum), {3}, {6, 7, 8});
}

TEST_CASE("reference: index components") {
    Shape s{range(2, 8, 3), range(-1, 2)};
    HostArray i0 = ref(index_components(s, 0));
    CHECK(i0.dtype() == DType::I64);
    check_values(i0, {2, 3}, {2, 2, 2, 5, 5, 5});
    check_values(ref(index_components(s, 1)), {2, 3}, {-1, 0, 1, -1, 0, 1});
    check_values(ref(index_components(Shape{range(4, 5)}, 0)), {1}, {4});

    Shape sq = Shape::of({3, 3});
    Array rows = index_components(sq, 0), cols = index_components(sq, 1);
    check_values(ref(rows == cols), {3, 3}, {1, 0, 0, 0, 1, 0, 0, 0, 1});
    check_values(ref(where(rows >= cols, 1.0, 0.0)), {3, 3}, {1, 0, 0, 1, 1, 0, 1, 1, 1});
}

TEST_CASE("reference: multi-output maps") {
    std::vector<float> av{1, 2, 3, 4}, bv{4, 3, 2, 1};
    Array a = array(av, Shape::of({2, 2})), b = array(bv, Shape::of({2, 2}));
    auto outs = lazy_multiple_value(
        [](auto x, auto y) { return std::make_tuple(x + y, x * y, x < y); }, a, b);
    REQUIRE(outs.size() == 3);
    CHECK(outs[2].dtype() == DType::Bool);
    ComputeOptions options;
    options.backend = "reference";
    auto hs = compute(outs, options);
    REQUIRE(hs.size() == 3);
    check_values(hs[0], {2, 2}, {5, 5, 5, 5});
    check_values(hs[1], {2, 2}, {4, 6, 6, 4});
    check_values(hs[2], {2, 2}, {1, 1, 0, 0});
}
