// Float64 central differences along a random direction for every differentiable scalar
// function (as used through lazy arrays, with broadcasting) and every reduction, plus the
// exact values at ties (max/min split evenly) and zeros (prod).
#include "ad_test_util.hpp"

using namespace hedra;
using namespace hedra::test;

namespace {

void check_1(const std::function<Array(const Array&)>& f, const Array& at) {
    HEDRA_CHECK_GRADIENT(
        check_gradient([&](const std::vector<Array>& x) { return sum(f(x[0])); }, {at}));
}

void check_2(const std::function<Array(const Array&, const Array&)>& f, const Array& a,
             const Array& b) {
    HEDRA_CHECK_GRADIENT(
        check_gradient([&](const std::vector<Array>& x) { return sum(f(x[0], x[1])); }, {a, b}));
}

std::vector<double> grad_values(const std::function<Array(const Array&)>& f,
                                const std::vector<double>& x) {
    Array a = array(x, Shape::of({static_cast<std::int64_t>(x.size())}));
    return values_of(grad(f(a), a));
}

} // namespace

TEST_CASE("finite differences: elementwise functions") {
    Shape s{range(2), range(3)};
    Array x = random_array(s, 1), pos = random_array(s, 2, 0.2, 2.0);
    SUBCASE("exp") {
        check_1([](const Array& a) { return exp(a); }, x);
    }
    SUBCASE("log") {
        check_1([](const Array& a) { return log(a); }, pos);
    }
    SUBCASE("sqrt") {
        check_1([](const Array& a) { return sqrt(a); }, pos);
    }
    SUBCASE("tanh") {
        check_1([](const Array& a) { return tanh(a); }, x);
    }
    SUBCASE("sigmoid") {
        check_1([](const Array& a) { return sigmoid(a); }, x);
    }
    SUBCASE("abs") {
        check_1([](const Array& a) { return abs(a); }, x);
    }
    SUBCASE("sin and cos") {
        check_1([](const Array& a) { return sin(a) * cos(a * 2.0); }, x);
    }
    SUBCASE("erf") {
        check_1([](const Array& a) { return erf(a * 1.5); }, x);
    }
    SUBCASE("log1p and expm1") {
        check_1([](const Array& a) { return log1p(a * a) + expm1(a); }, x);
    }
    SUBCASE("mod") {
        check_2([](const Array& a, const Array& b) { return (a * 5.0) % (b + 3.0); }, x, pos);
    }
    SUBCASE("floor, ceil and round have no gradient") {
        CHECK(grad_values([](const Array& a) { return sum(floor(a) + ceil(a) + round(a)); },
                          {0.3, -1.7, 2.5}) == std::vector<double>{0, 0, 0});
    }
    SUBCASE("neg") {
        check_1([](const Array& a) { return -a * a; }, x);
    }
    SUBCASE("relu") {
        check_1([](const Array& a) { return relu(a) * a; }, x);
    }
    SUBCASE("pow const") {
        check_1([](const Array& a) { return pow(a, 3.0); }, x);
    }
    SUBCASE("traced lambda") {
        check_1(
            [](const Array& a) {
                return lazy([](auto v) { return select(v > 0.1, v * exp(-v), log(v * v + 1.0)); },
                            a);
            },
            x);
    }
    SUBCASE("casts") {
        // Through f32 the function is a staircase at f32 resolution: a wide step, and a
        // quadratic so that central differences are exact but for the f32 rounding.
        GradientCheckOptions o;
        o.step = 1e-2;
        o.rtol = 1e-5;
        HEDRA_CHECK_GRADIENT(check_gradient(
            [](const std::vector<Array>& a) {
                return sum(cast(cast(a[0], DType::F32), DType::F64) * a[0]);
            },
            {x}, o));
    }
}

TEST_CASE("finite differences: binary functions with broadcasting") {
    Array a = random_array(Shape{range(2), range(3)}, 3);
    Array b = random_array(Shape{range(3)}, 4, 0.5, 1.5);
    Array c = random_array(Shape{range(2), range(1)}, 5);
    SUBCASE("add/sub/mul") {
        check_2([](const Array& x, const Array& y) { return (x + y) * (x - y) * y; }, a, b);
    }
    SUBCASE("div") {
        check_2([](const Array& x, const Array& y) { return x / y; }, a, b);
    }
    SUBCASE("pow") {
        check_2([](const Array& x, const Array& y) { return pow(y, x); }, a, b);
    }
    SUBCASE("minimum/maximum") {
        check_2([](const Array& x, const Array& y) { return maximum(x, y) - minimum(x, y * x); }, a,
                c);
    }
    SUBCASE("where") {
        check_2([](const Array& x, const Array& y) { return where(x > y, x * y, y - x); }, a, c);
    }
}

TEST_CASE("finite differences: reductions") {
    Array x = random_array(Shape{range(3), range(1, 5)}, 9);
    SUBCASE("sum") {
        check_1([](const Array& a) { return sum(a, {0}) * sum(a, {1}, true); }, x);
    }
    SUBCASE("mean") {
        check_1([](const Array& a) { return mean(a * a, {1}); }, x);
    }
    SUBCASE("max") {
        check_1([](const Array& a) { return max(a, {1}) * max(a); }, x);
    }
    SUBCASE("min") {
        check_1([](const Array& a) { return min(a, {0}, true) * a; }, x);
    }
    SUBCASE("prod") {
        check_1([](const Array& a) { return reduce(ReduceOp::Prod, a, {1}); }, x);
    }
}

TEST_CASE("reductions: ties split evenly, zeros in products") {
    auto maxf = [](const Array& a) { return max(a); };
    auto minf = [](const Array& a) { return min(a); };
    auto prodf = [](const Array& a) { return reduce(ReduceOp::Prod, a); };
    CHECK(grad_values(maxf, {1, 3, 3, 2}) == std::vector<double>{0, 0.5, 0.5, 0});
    CHECK(grad_values(minf, {1, 3, 1, 1}) == std::vector<double>{1.0 / 3, 0, 1.0 / 3, 1.0 / 3});
    CHECK(grad_values(prodf, {2, 5, 3}) == std::vector<double>{15, 6, 10});
    CHECK(grad_values(prodf, {2, 0, 3}) == std::vector<double>{0, 6, 0});
    CHECK(grad_values(prodf, {0, 4, 0}) == std::vector<double>{0, 0, 0});
    // relu is max(x, 0): the tie at 0 splits, so relu'(0) = 0.5; abs'(0) = 0.
    auto relus = [](const Array& a) { return sum(relu(a)); };
    auto abss = [](const Array& a) { return sum(abs(a)); };
    CHECK(grad_values(relus, {-1, 0, 2}) == std::vector<double>{0, 0.5, 1});
    CHECK(grad_values(abss, {-1, 0, 2}) == std::vector<double>{-1, 0, 1});
}

TEST_CASE("sigmoid and tanh adjoints read the forward value instead of evaluating it again") {
    // d sigmoid = y(1 - y), d tanh = 1 - y²: the gradient map reads the forward node y (which
    // the partition stores where several kernels read it, as an LSTM's gates), and its
    // expression has no sigmoid or tanh of its own.
    Shape s{range(3), range(5)};
    for (ScalarOp op : {ScalarOp::Sigmoid, ScalarOp::Tanh}) {
        CAPTURE(static_cast<int>(op));
        Array x = cast(random_array(s, 7, -4.0, 4.0), DType::F32);
        Array y = op == ScalarOp::Sigmoid ? sigmoid(x) : tanh(x);
        Array dx = grad(sum(y * 3.0f), x);
        const Node& d = *dx.node();
        REQUIRE(d.kind == NodeKind::Map);
        bool reads_y = false;
        for (const NodePtr& in : d.inputs)
            reads_y = reads_y || in == y.node();
        CHECK(reads_y);
        CHECK(to_string(d.expr).find(op == ScalarOp::Sigmoid ? "sigmoid" : "tanh") ==
              std::string::npos);
        std::vector<double> got = values_of(dx), ys = values_of(y);
        for (std::size_t i = 0; i < got.size(); ++i) {
            const float v = static_cast<float>(ys[i]);
            const float want =
                op == ScalarOp::Sigmoid ? 3.0f * (v * (1.0f - v)) : 3.0f * (1.0f - v * v);
            CHECK(got[i] == doctest::Approx(want).epsilon(1e-6));
        }
    }
}
