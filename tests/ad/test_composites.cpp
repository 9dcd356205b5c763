// Gradients of small models: in float64 against central differences (check_gradient), and
// the float32 gradient against the float64 one.
#include "ad_test_util.hpp"
#include "models.hpp"

using namespace hedra;
using namespace hedra::test;

namespace {

Array as_f32(const Array& a) {
    if (!is_float(a.dtype())) return a;
    HostArray v = compute(a);
    HostArray f(v.sizes(), DType::F32);
    for (std::int64_t i = 0; i < v.size(); ++i)
        f.set_flat(i, v.flat(i));
    return array(f, a.shape());
}

// Checks the f64 gradient of `loss` at `at` with central differences, and the f32 gradient
// against the f64 one (relative to the largest f64 gradient entry).
void check_model(const ArrayFunction& loss, const std::vector<Array>& at, double tol32 = 2e-4) {
    HEDRA_CHECK_GRADIENT(check_gradient(loss, at));
    std::vector<Array> x64, x32, p64, p32;
    for (const Array& a : at) {
        x64.push_back(a);
        x32.push_back(as_f32(a));
        if (is_float(a.dtype())) {
            p64.push_back(x64.back());
            p32.push_back(x32.back());
        }
    }
    std::vector<Array> g64 = grad(loss(x64), p64), g32 = grad(loss(x32), p32);
    for (std::size_t i = 0; i < g64.size(); ++i) {
        CHECK(g32[i].dtype() == DType::F32);
        std::vector<double> a = values_of(g64[i]), b = values_of(g32[i]);
        double scale = 0.0;
        for (double v : a)
            scale = std::max(scale, std::abs(v));
        double worst = 0.0;
        for (std::size_t j = 0; j < a.size(); ++j)
            worst = std::max(worst, std::abs(a[j] - b[j]));
        INFO("parameter " << i << ": largest f32/f64 difference " << worst << " of scale "
                          << scale);
        CHECK(worst <= tol32 * std::max(scale, 1e-3));
    }
}

Array rnd(std::vector<std::int64_t> sizes, std::uint64_t seed, double lo = -1, double hi = 1) {
    return random_array(Shape::of(sizes), seed, lo, hi);
}

} // namespace

TEST_CASE("composite: matmul and batched matmul") {
    Array r = rnd({3, 5}, 11);
    check_model(
        [&](const std::vector<Array>& x) {
            return sum(matmul(x[0], x[1]) * cast(r, x[0].dtype()));
        },
        {rnd({3, 4}, 1), rnd({4, 5}, 2)});
    Array rb = rnd({2, 3, 5}, 12);
    check_model(
        [&](const std::vector<Array>& x) {
            return sum(matmul(x[0], x[1]) * cast(rb, x[0].dtype()));
        },
        {rnd({2, 3, 4}, 3), rnd({2, 4, 5}, 4)});
    // Batch broadcasting: (2,3,4) x (4,5).
    check_model(
        [&](const std::vector<Array>& x) {
            return sum(matmul(x[0], x[1]) * cast(rb, x[0].dtype()));
        },
        {rnd({2, 3, 4}, 5), rnd({4, 5}, 6)});
}

TEST_CASE("composite: conv2d with stride 1 and 2, padding 0 and 1") {
    for (std::int64_t s : {1, 2})
        for (std::int64_t p : {0, 1}) {
            INFO("stride " << s << " padding " << p);
            Array x = rnd({2, 2, 6, 5}, 20 + s * 2 + p), w = rnd({3, 2, 3, 3}, 30 + s * 2 + p);
            Shape ys = conv2d(x, w, s, p).shape();
            Array r = random_array(ys, 40);
            check_model(
                [&](const std::vector<Array>& a) {
                    return sum(conv2d(a[0], a[1], s, p) * cast(r, a[0].dtype()));
                },
                {x, w});
        }
}

TEST_CASE("composite: maxpool 2x2") {
    Array r = rnd({2, 2, 2, 3}, 50);
    check_model(
        [&](const std::vector<Array>& x) { return sum(maxpool2x2(x[0]) * cast(r, x[0].dtype())); },
        {rnd({2, 2, 4, 6}, 51)});
}

TEST_CASE("composite: softmax cross-entropy with a detached max") {
    Array labels = array(std::vector<std::int64_t>{2, 0, 3}, Shape::of({3, 1}));
    check_model([&](const std::vector<Array>& x) { return softmax_cross_entropy(x[0], x[1]); },
                {rnd({3, 4}, 60, -3, 3), labels});
}

TEST_CASE("composite: layer norm") {
    Array r = rnd({3, 5}, 70);
    check_model(
        [&](const std::vector<Array>& x) {
            return sum(layer_norm(x[0], x[1], x[2]) * cast(r, x[0].dtype()));
        },
        {rnd({3, 5}, 71), rnd({5}, 72), rnd({5}, 73)}, 1e-3);
}

TEST_CASE("composite: causal attention") {
    Array r = rnd({4, 3}, 80);
    check_model(
        [&](const std::vector<Array>& x) {
            return sum(causal_attention(x[0], x[1], x[2]) * cast(r, x[0].dtype()));
        },
        {rnd({4, 3}, 81), rnd({4, 3}, 82), rnd({4, 3}, 83)});
}

TEST_CASE("composite: two-layer MLP loss") {
    Array t = rnd({4, 2}, 90);
    check_model(
        [&](const std::vector<Array>& x) {
            return mlp_loss(x[0], x[1], x[2], x[3], x[4], cast(t, x[0].dtype()));
        },
        {rnd({4, 3}, 91), rnd({3, 5}, 92), rnd({5}, 93), rnd({5, 2}, 94), rnd({2}, 95)});
}
