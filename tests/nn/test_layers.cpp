// nn layers (nn/layers.hpp): values against naive loops in double on the reference backend,
// shapes, and the errors a user gets for mismatched operands.
#include "nn/layers.hpp"

#include "core/error.hpp"
#include "nn_layer_testing.hpp"

using namespace hedra;
using namespace hedra::nn;
using namespace hedra::nn::test;

namespace {

Array f64(const std::vector<double>& v, const std::vector<std::int64_t>& sizes) {
    return array(v, Shape::of(sizes));
}

} // namespace

TEST_CASE("nn linear: one feature axis, with and without bias") {
    auto xv = random_values(3 * 4, 1), wv = random_values(5 * 4, 2), bv = random_values(5, 3);
    Array x = f64(xv, {3, 4}), w = f64(wv, {5, 4}), b = f64(bv, {5});
    Array y = linear(x, w, b);
    CHECK(y.shape() == Shape::of({3, 5}));
    check_close(evaluate(y), naive_linear(xv, wv, bv, 3, 4, 5));
    check_close(evaluate(linear(x, w)), naive_linear(xv, wv, {}, 3, 4, 5));
}

TEST_CASE("nn linear: contracts over several feature axes as over their flattening") {
    auto xv = random_values(2 * 3 * 2 * 2, 4), wv = random_values(4 * 12, 5);
    auto bv = random_values(4, 6);
    Array y = linear(f64(xv, {2, 3, 2, 2}), f64(wv, {4, 3, 2, 2}), f64(bv, {4}));
    CHECK(y.shape() == Shape::of({2, 4}));
    check_close(evaluate(y), naive_linear(xv, wv, bv, 2, 12, 4));
}

TEST_CASE("nn linear: an input on a shifted index space") {
    auto xv = random_values(3 * 4, 7), wv = random_values(2 * 4, 8);
    Array x = reshape(f64(xv, {3, 4}), Transform::shift({5, -2}));
    check_close(evaluate(linear(x, f64(wv, {2, 4}))), naive_linear(xv, wv, {}, 3, 4, 2));
}

TEST_CASE("nn linear: leading batch axes, as PyTorch's nn.Linear on (B, T, C)") {
    auto xv = random_values(2 * 3 * 4, 9), wv = random_values(5 * 4, 10), bv = random_values(5, 11);
    Array y = linear(f64(xv, {2, 3, 4}), f64(wv, {5, 4}), f64(bv, {5}));
    CHECK(y.shape() == Shape::of({2, 3, 5}));
    check_close(evaluate(y), naive_linear(xv, wv, bv, 6, 4, 5));
    // Two feature axes after two batch axes: contracted as their flattening.
    auto w2 = random_values(5 * 3 * 4, 12);
    Array y2 = linear(f64(xv, {2, 3, 4}), f64(w2, {5, 3, 4}));
    CHECK(y2.shape() == Shape::of({2, 5}));
    check_close(evaluate(y2), naive_linear(xv, w2, {}, 2, 12, 5));
}

TEST_CASE("nn conv2d: stride and padding against a loop nest") {
    for (ConvSizes s :
         {ConvSizes{2, 3, 6, 5, 4, 3, 3, 1, 0}, ConvSizes{2, 3, 6, 5, 4, 3, 3, 1, 1},
          ConvSizes{1, 2, 7, 7, 3, 5, 5, 1, 2}, ConvSizes{2, 2, 7, 6, 3, 3, 2, 2, 1}}) {
        INFO("stride " << s.stride << " pad " << s.pad << " kernel " << s.kh << "x" << s.kw);
        auto xv = random_values(static_cast<std::size_t>(s.n * s.c * s.h * s.w), 11);
        auto wv = random_values(static_cast<std::size_t>(s.co * s.c * s.kh * s.kw), 12);
        auto bv = random_values(static_cast<std::size_t>(s.co), 13);
        Array y = conv2d(f64(xv, {s.n, s.c, s.h, s.w}), f64(wv, {s.co, s.c, s.kh, s.kw}),
                         f64(bv, {s.co}), s.stride, s.pad);
        CHECK(y.shape() == Shape::of({s.n, s.co, s.oh(), s.ow()}));
        check_close(evaluate(y), naive_conv2d(xv, wv, bv, s));
    }
}

TEST_CASE("nn maxpool2d: disjoint and overlapping windows") {
    auto xv = random_values(2 * 3 * 6 * 7, 21);
    Array x = f64(xv, {2, 3, 6, 7});
    Array p = maxpool2d(x, 2);
    CHECK(p.shape() == Shape::of({2, 3, 3, 3}));
    check_close(evaluate(p), naive_maxpool(xv, 2, 3, 6, 7, 2, 2));
    check_close(evaluate(maxpool2d(x, 3, 2)), naive_maxpool(xv, 2, 3, 6, 7, 3, 2));
}

TEST_CASE("nn softmax and log_softmax: rows of large values do not overflow") {
    auto zv = random_values(4 * 6, 31, -5.0, 5.0);
    zv[1] = 1000.0;
    zv[13] = -800.0;
    Array z = f64(zv, {4, 6});
    auto expect = naive_log_softmax(zv, 4, 6);
    check_close(evaluate(log_softmax(z)), expect);
    check_close(evaluate(log_softmax(z, 1)), expect);
    std::vector<double> probs;
    for (double v : expect)
        probs.push_back(std::exp(v));
    check_close(evaluate(softmax(z)), probs);
    // Over axis 0: the transpose's rows.
    std::vector<double> zt(24);
    for (int r = 0; r < 4; ++r)
        for (int c = 0; c < 6; ++c)
            zt[c * 4 + r] = zv[r * 6 + c];
    auto et = naive_log_softmax(zt, 6, 4);
    std::vector<double> back(24);
    for (int r = 0; r < 4; ++r)
        for (int c = 0; c < 6; ++c)
            back[r * 6 + c] = et[c * 4 + r];
    check_close(evaluate(log_softmax(z, 0)), back);
}

TEST_CASE("nn softmax_cross_entropy and count_correct against a loop") {
    const int rows = 5, classes = 4;
    auto zv = random_values(rows * classes, 41, -3.0, 3.0);
    std::vector<std::int32_t> labels{0, 3, 1, 1, 2};
    auto lp = naive_log_softmax(zv, rows, classes);
    double loss = 0.0;
    std::int64_t correct = 0;
    for (int r = 0; r < rows; ++r) {
        loss -= lp[r * classes + labels[r]] / rows;
        int best = 0;
        for (int c = 1; c < classes; ++c)
            if (zv[r * classes + c] > zv[r * classes + best]) best = c;
        correct += best == labels[r];
    }
    Array z = f64(zv, {rows, classes});
    Array y = array(labels, Shape::of({rows}));
    Array l = softmax_cross_entropy(z, y);
    CHECK(l.rank() == 0);
    CHECK(l.dtype() == DType::F64);
    check_close(evaluate(l), {loss});
    check_close(evaluate(count_correct(z, y)), {static_cast<double>(correct)});
    // f32 logits give an f32 loss; i64 labels work as well as i32.
    Array y64 = array(std::vector<std::int64_t>(labels.begin(), labels.end()), Shape::of({rows}));
    Array l32 = softmax_cross_entropy(cast(z, DType::F32), y64);
    CHECK(l32.dtype() == DType::F32);
    check_close(evaluate(l32), {loss}, 1e-5);
}

TEST_CASE("nn count_correct: a tie goes to the lowest class") {
    Array z = f64({1.0, 2.0, 2.0, 0.5, 0.5, 0.5}, {2, 3});
    check_close(evaluate(count_correct(z, array(std::vector<std::int32_t>{1, 0}, Shape::of({2})))),
                {2.0});
    check_close(evaluate(count_correct(z, array(std::vector<std::int32_t>{2, 1}, Shape::of({2})))),
                {0.0});
}

TEST_CASE("nn layers: mismatched operands throw hedra::Error naming the operation") {
    Array x = zeros(Shape::of({2, 4})), img = zeros(Shape::of({2, 3, 8, 8}));
    auto message = [](auto f) {
        try {
            f();
        } catch (const Error& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    std::string m = message([&] { linear(x, zeros(Shape::of({3, 5}))); });
    CHECK(m.find("linear: feature axis 1 has size 4 in x and 5 in weight") == 0);
    CHECK(m.find("test_layers.cpp") != std::string::npos);
    m = message([&] { linear(x, zeros(Shape::of({3, 4})), zeros(Shape::of({4}))); });
    CHECK(m.find("linear: bias must have shape (3)") == 0);
    m = message([&] { linear(zeros(Shape::of({2, 3, 4})), zeros(Shape::of({3, 5}))); });
    CHECK(m.find("linear: feature axis 2 has size 4 in x and 5 in weight (its axis 1)") == 0);
    m = message([&] { linear(x, zeros(Shape::of({3, 2, 4}))); });
    CHECK(m.find("linear: x must be (N..., features...) and weight (out, features...)") == 0);
    m = message([&] { conv2d(img, zeros(Shape::of({4, 2, 3, 3}))); });
    CHECK(m.find("conv2d: x has 3 channels (axis 1) but weight expects 2") == 0);
    m = message([&] { conv2d(img, zeros(Shape::of({4, 3, 9, 9}))); });
    CHECK(m.find("conv2d: a 9x9 kernel does not fit the padded 8x8 input") == 0);
    m = message([&] { maxpool2d(x, 2); });
    CHECK(m.find("maxpool2d: x must be (N, C, H, W)") == 0);
    m = message([&] { softmax_cross_entropy(x, zeros(Shape::of({2}))); });
    CHECK(m.find("softmax_cross_entropy: labels must be integers of shape (2)") == 0);
    m = message([&] { softmax_cross_entropy(x, zeros(Shape::of({3}), DType::I32)); });
    CHECK(m.find("softmax_cross_entropy: labels must be integers") == 0);
}
