// clip_grad_norm (nn/clip_grad.hpp) against the norm and scale computed naively in double:
// gradients under the bound pass unchanged, gradients over it are scaled to it.
#include "nn/clip_grad.hpp"

#include "core/error.hpp"
#include "nn_layer_testing.hpp"

using namespace hedra;
using namespace hedra::nn;
using namespace hedra::nn::test;

TEST_CASE("nn clip_grad_norm: the global norm, clipping and not clipping") {
    const std::vector<double> a = random_values(6, 21, -2, 2), b = random_values(4, 22, -2, 2),
                              c = random_values(1, 23, -2, 2);
    double squares = 0;
    for (const auto* g : {&a, &b, &c})
        for (double x : *g)
            squares += x * x;
    const double norm = std::sqrt(squares);
    for (double max_norm : {norm / 3, norm * 2}) {
        INFO("max_norm " << max_norm << " norm " << norm);
        ClippedGradients r = clip_grad_norm(
            {array(a, Shape::of({2, 3})), array(b, Shape::of({4})), array(c, Shape())}, max_norm);
        std::vector<HostArray> v =
            compute({r.total_norm, r.grads[0], r.grads[1], r.grads[2]}, reference_backend());
        CHECK(v[0].flat(0) == doctest::Approx(norm).epsilon(1e-14));
        const double scale = std::min(1.0, max_norm / (norm + 1e-6));
        if (max_norm > norm) CHECK(scale == 1.0);
        std::size_t k = 1;
        for (const auto* g : {&a, &b, &c}) {
            std::vector<double> expect;
            for (double x : *g)
                expect.push_back(x * scale);
            check_close(v[k++].to_doubles(), expect, 1e-14);
        }
        CHECK(r.grads[0].shape() == Shape::of({2, 3}));
    }
}

TEST_CASE("nn clip_grad_norm: f32 gradients stay f32; bad bounds throw") {
    ClippedGradients r = clip_grad_norm({ones(Shape::of({2}), DType::F32)}, 1.0);
    CHECK(r.grads[0].dtype() == DType::F32);
    CHECK(compute(r.grads[0], reference_backend()).flat(0) ==
          doctest::Approx(1.0 / (std::sqrt(2.0) + 1e-6)).epsilon(1e-6));
    CHECK_THROWS_WITH_AS(clip_grad_norm({ones(Shape::of({2}))}, 0.0),
                         doctest::Contains("max_norm must be positive"), Error);
    CHECK_THROWS_WITH_AS(clip_grad_norm({}, 1.0), doctest::Contains("no gradients"), Error);
    CHECK_THROWS_WITH_AS(clip_grad_norm({ones(Shape::of({2}), DType::I64)}, 1.0),
                         doctest::Contains("not a float array"), Error);
}
