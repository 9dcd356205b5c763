// Reference backend: reductions over each axis and several axes, keepdims, every built-in op,
// custom combiners, integer wrapping, empty and rank-0 inputs, against naive loops.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "hedra.hpp"

using namespace hedra;

namespace {

HostArray ref(const Array& a) {
    ComputeOptions options;
    options.backend = "reference";
    return compute(a, options);
}

void check_values(const HostArray& h, const std::vector<std::int64_t>& sizes,
                  const std::vector<double>& expected, double eps = 1e-9) {
    REQUIRE(h.sizes() == sizes);
    auto got = h.to_doubles();
    REQUIRE(got.size() == expected.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
        INFO("element " << i);
        CHECK(got[i] == doctest::Approx(expected[i]).epsilon(eps));
    }
}

constexpr int kDims[3] = {2, 3, 4};

std::vector<double> sample_values() {
    std::vector<double> v(24);
    for (int i = 0; i < 24; ++i)
        v[i] = std::sin(1.0 + 0.7 * i) * 3.0;
    return v;
}

// Naive reduction of a (2,3,4) array over the axes marked in `mask`: the result in row-major
// order over the kept axes, and its sizes (reduced axes as 1 when keepdims).
std::vector<double> naive(const std::vector<double>& v, std::vector<bool> mask, double init,
                          const std::function<double(double, double)>& f, bool keepdims,
                          std::vector<std::int64_t>& sizes) {
    sizes.clear();
    int out_size = 1;
    for (int d = 0; d < 3; ++d) {
        if (!mask[d])
            sizes.push_back(kDims[d]);
        else if (keepdims)
            sizes.push_back(1);
        if (!mask[d]) out_size *= kDims[d];
    }
    std::vector<double> out(out_size, init);
    for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 3; ++j)
            for (int k = 0; k < 4; ++k) {
                int idx[3] = {i, j, k}, o = 0;
                for (int d = 0; d < 3; ++d)
                    if (!mask[d]) o = o * kDims[d] + idx[d];
                out[o] = f(out[o], v[(i * 3 + j) * 4 + k]);
            }
    return out;
}

const std::vector<std::vector<int>> kAxisSets = {{0},    {1},    {2},       {0, 1},
                                                 {0, 2}, {1, 2}, {0, 1, 2}, {2, 0}};

std::vector<bool> mask_of(const std::vector<int>& axes) {
    std::vector<bool> m(3, false);
    for (int a : axes)
        m[a] = true;
    return m;
}

} // namespace

TEST_CASE("reference: sum over each axis and several axes") {
    auto v = sample_values();
    Array a = array(v, Shape::of({2, 3, 4}));
    auto add = [](double x, double y) { return x + y; };
    for (bool keepdims : {false, true})
        for (const auto& axes : kAxisSets) {
            INFO("axes " << axes.size() << " first " << axes[0] << " keepdims " << keepdims);
            std::vector<std::int64_t> sizes;
            auto expect = naive(v, mask_of(axes), 0.0, add, keepdims, sizes);
            HostArray h = ref(sum(a, axes, keepdims));
            CHECK(h.dtype() == DType::F64);
            check_values(h, sizes, expect);
        }
    std::vector<std::int64_t> sizes;
    check_values(ref(sum(a)), {}, naive(v, {true, true, true}, 0.0, add, false, sizes));
    check_values(ref(sum(a, {-1})), {2, 3}, naive(v, mask_of({2}), 0.0, add, false, sizes));
    check_values(ref(mean(a, {1})), {2, 4}, [&] {
        auto s = naive(v, mask_of({1}), 0.0, add, false, sizes);
        for (auto& x : s)
            x /= 3.0;
        return s;
    }());
}

TEST_CASE("reference: prod, max and min over axes") {
    auto v = sample_values();
    Array a = array(v, Shape::of({2, 3, 4}));
    double inf = std::numeric_limits<double>::infinity();
    auto mul = [](double x, double y) { return x * y; };
    auto mx = [](double x, double y) { return std::max(x, y); };
    auto mn = [](double x, double y) { return std::min(x, y); };
    for (const auto& axes : kAxisSets) {
        std::vector<std::int64_t> sizes;
        auto e_prod = naive(v, mask_of(axes), 1.0, mul, false, sizes);
        check_values(ref(reduce(ReduceOp::Prod, a, axes)), sizes, e_prod);
        auto e_max = naive(v, mask_of(axes), -inf, mx, false, sizes);
        check_values(ref(max(a, axes)), sizes, e_max);
        auto e_min = naive(v, mask_of(axes), inf, mn, true, sizes);
        check_values(ref(min(a, axes, true)), sizes, e_min);
    }
}

TEST_CASE("reference: reductions of f32 accumulate accurately") {
    Array a = array(std::vector<float>{1e8f, 1.0f, -1e8f, 0.5f}, Shape::of({4}));
    HostArray h = ref(sum(a));
    CHECK(h.dtype() == DType::F32);
    CHECK(h.values<float>()[0] == 1.5f);
    std::vector<float> many(1000, 0.1f);
    HostArray s = ref(sum(array(many, Shape::of({10, 100})), {0, 1}));
    CHECK(s.values<float>()[0] == static_cast<float>(1000 * static_cast<double>(0.1f)));
}

TEST_CASE("reference: integer and boolean reductions") {
    std::vector<std::int32_t> iv{3, -7, 12, 5, 0, -2};
    Array i = array(iv, Shape::of({2, 3}));
    HostArray s = ref(sum(i, {1}));
    CHECK(s.dtype() == DType::I64);
    CHECK(s.values<std::int64_t>()[0] == 8);
    CHECK(s.values<std::int64_t>()[1] == 3);
    HostArray p = ref(reduce(ReduceOp::Prod, i, {0}));
    CHECK(p.dtype() == DType::I64);
    check_values(p, {3}, {15, 0, -24});
    HostArray m = ref(max(i, {0}));
    CHECK(m.dtype() == DType::I32);
    check_values(m, {3}, {5, 0, 12});
    check_values(ref(min(i, {1})), {2}, {-7, -2});

    // Integer sums and products wrap (two's complement).
    std::int64_t big = std::numeric_limits<std::int64_t>::max();
    HostArray w = ref(sum(array(std::vector<std::int64_t>{big, 1}, Shape::of({2}))));
    CHECK(w.values<std::int64_t>()[0] == std::numeric_limits<std::int64_t>::min());
    HostArray z =
        ref(reduce(ReduceOp::Prod,
                   array(std::vector<std::int64_t>{std::int64_t{1} << 62, 4, 5}, Shape::of({3}))));
    CHECK(z.values<std::int64_t>()[0] == 0);

    Array mask = i > 0; // {1,0,1; 1,0,0}
    HostArray count = ref(sum(mask, {1}));
    CHECK(count.dtype() == DType::I64);
    check_values(count, {2}, {2, 1});
    HostArray all = ref(reduce(ReduceOp::And, mask, {0}));
    CHECK(all.dtype() == DType::Bool);
    check_values(all, {3}, {1, 0, 0});
    check_values(ref(reduce(ReduceOp::Or, mask, {0})), {3}, {1, 0, 1});
    check_values(ref(reduce(ReduceOp::Or, mask, {1}, true)), {2, 1}, {1, 1});
    check_values(ref(reduce(ReduceOp::And, mask)), {}, {0});
}

TEST_CASE("reference: custom reductions") {
    auto v = sample_values();
    Array a = array(v, Shape::of({2, 3, 4}));
    auto absmax = [](double x, double y) { return std::max(x, std::abs(y)); };
    for (const auto& axes : kAxisSets) {
        std::vector<std::int64_t> sizes;
        auto expect = naive(v, mask_of(axes), 0.0, absmax, true, sizes);
        Array r = reduce([](Sym acc, Sym x) { return max(acc, abs(x)); }, 0.0, a, axes, true);
        check_values(ref(r), sizes, expect);
    }
    std::vector<std::int64_t> sizes;
    auto e_prod = naive(
        v, mask_of({1}), 1.0, [](double x, double y) { return x * y; }, false, sizes);
    check_values(ref(reduce([](Sym acc, Sym x) { return acc * x; }, 1.0, a, {1})), sizes, e_prod);
    // The identity is used: a max with identity 2 clamps from below.
    Array clamp = reduce([](Sym acc, Sym x) { return max(acc, x); }, 2.0, a, {0, 1, 2});
    check_values(ref(clamp), {}, {std::max(2.0, *std::max_element(v.begin(), v.end()))});
}

TEST_CASE("reference: reductions on shifted strided shapes") {
    std::vector<double> v{1, 2, 3, 4, 5, 6};
    Array a = array(v, Shape{range(1, 7, 2), range(3, 5)});
    Array rows = sum(a, {1});
    CHECK(rows.shape() == Shape{range(1, 7, 2)});
    check_values(ref(rows), {3}, {3, 7, 11});
    Array cols = sum(a, {0}, true);
    check_values(ref(cols), {1, 2}, {9, 12});
    CHECK(cols.shape()[1] == range(3, 5));
    // Weighted by the index along axis 0 (1, 3, 5).
    check_values(ref(sum(a * index_components(a.shape(), 0), {0})), {2},
                 {1 * 1 + 3 * 3 + 5 * 5, 2 * 1 + 4 * 3 + 6 * 5});
}

TEST_CASE("reference: reductions of empty and rank-0 arrays") {
    Array e = array(std::vector<float>{}, Shape::of({0, 3}));
    check_values(ref(sum(e, {0})), {3}, {0, 0, 0});
    check_values(ref(sum(e)), {}, {0});
    check_values(ref(reduce(ReduceOp::Prod, e, {0})), {3}, {1, 1, 1});
    HostArray mx = ref(max(e, {0}));
    CHECK(mx.values<float>()[0] == -std::numeric_limits<float>::infinity());
    CHECK(ref(sum(e, {1})).size() == 0);
    Array ei = array(std::vector<std::int32_t>{}, Shape::of({2, 0}));
    HostArray mn = ref(min(ei, {1}));
    CHECK(mn.values<std::int32_t>()[0] == std::numeric_limits<std::int32_t>::max());
    CHECK(mn.values<std::int32_t>()[1] == std::numeric_limits<std::int32_t>::max());

    Array c = constant(4.5, DType::F64);
    check_values(ref(sum(c)), {}, {4.5});
    Array one = array(std::vector<double>{2.5}, Shape::of({1}));
    check_values(ref(sum(one, {0})), {}, {2.5});
}
