// Second order: gradients are lazy graphs of primitives, so they can be differentiated again.
// A Hessian-vector product is checked against central differences of the gradient, and the
// gradient of ⟨∇f, v⟩ along a random direction with check_gradient.
#include "ad_test_util.hpp"
#include "models.hpp"

using namespace hedra;
using namespace hedra::test;

namespace {

// f(x) = Σ tanh(W x)² + Σ softplus-like terms, with x (3,4).
Array f(const Array& x, const Array& w) {
    Array h = tanh(matmul(w, x));
    return sum(h * h) + sum(log(exp(x) + 1.0) * x);
}

} // namespace

TEST_CASE("Hessian-vector product against finite differences of the gradient") {
    Shape s = Shape::of({3, 4});
    Array w = random_array(Shape::of({2, 3}), 1);
    HostArray x0 = random_host({3, 4}, 2), v = random_host({3, 4}, 3);
    Array x = array(x0, s), va = array(v, s);
    Array g = grad(f(x, w), x);
    Array hv = grad(sum(g * va), x);

    const double h = 1e-5;
    HostArray xp(x0.sizes(), DType::F64), xm(x0.sizes(), DType::F64);
    for (std::int64_t i = 0; i < x0.size(); ++i) {
        xp.set_flat(i, x0.flat(i) + h * v.flat(i));
        xm.set_flat(i, x0.flat(i) - h * v.flat(i));
    }
    Array ap = array(xp, s), am = array(xm, s);
    auto r = compute({hv, grad(f(ap, w), ap), grad(f(am, w), am)});
    for (std::int64_t i = 0; i < x0.size(); ++i) {
        double numeric = (r[1].flat(i) - r[2].flat(i)) / (2 * h);
        CHECK(r[0].flat(i) == doctest::Approx(numeric).epsilon(1e-6));
    }
}

TEST_CASE("grad of grad through views, reductions and stop_gradient") {
    Array v = random_array(Shape::of({3, 4}), 4);
    // x -> ⟨∇_x CE(x), v⟩ (softmax cross-entropy: max reduce, stop_gradient, exp/log).
    Array labels = array(std::vector<std::int64_t>{1, 3, 0}, Shape::of({3, 1}));
    HEDRA_CHECK_GRADIENT(check_gradient(
        [&](const std::vector<Array>& x) {
            return sum(grad(softmax_cross_entropy(x[0], labels), x[0]) * v);
        },
        {random_array(Shape::of({3, 4}), 5, -2, 2)}));
    // (x, w) -> ⟨∇_w conv2d loss, r⟩: the view gather differentiated again.
    Array r = random_array(Shape::of({1, 2, 2, 2}), 6);
    Array rw = random_array(Shape::of({2, 1, 3, 3}), 7);
    HEDRA_CHECK_GRADIENT(check_gradient(
        [&](const std::vector<Array>& x) {
            Array loss = sum(tanh(conv2d(x[0], x[1], 2, 1)) * r);
            return sum(grad(loss, x[1]) * rw) + sum(grad(loss, x[0]) * x[0]);
        },
        {random_array(Shape::of({1, 1, 4, 4}), 8), random_array(Shape::of({2, 1, 3, 3}), 9)}));
}
