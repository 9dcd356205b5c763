// f32 exp, log, tanh and sigmoid (core/f32_math.hpp) against f64 libm: the ULP bounds that
// docs/api.md states, over a sample of every 4099th f32 bit pattern and densely where the
// algorithms switch (overflow, underflow, tanh's 0.625, log near 1), and the special values.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "hedra.hpp"

namespace hedra_f32_test {
#include "core/f32_math.hpp" // NOLINT: the definitions under test
} // namespace hedra_f32_test

namespace {

namespace m = hedra_f32_test;

float from_bits(std::uint32_t u) {
    float x;
    std::memcpy(&x, &u, 4);
    return x;
}

// |got - want| in units of the f32 spacing at want (the subnormal spacing below 2^-126).
double ulps(float got, double want) {
    if (std::isnan(want)) return std::isnan(got) ? 0 : 1e30;
    float wf = static_cast<float>(want);
    if (std::isinf(wf)) return std::isinf(got) && (got > 0) == (wf > 0) ? 0 : 1e30;
    double spacing = std::fabs(want) < std::ldexp(1.0, -126)
                         ? std::ldexp(1.0, -149)
                         : std::nextafter(std::fabs(wf), INFINITY) - std::fabs(wf);
    return std::fabs(static_cast<double>(got) - want) / spacing;
}

struct Function {
    const char* name;
    float (*f32)(float);
    double (*f64)(double);
    double bound; // ULP
};

const Function kFunctions[] = {
    {"exp", m::hd_exp_f32, [](double x) { return std::exp(x); }, 1.01},
    {"log", m::hd_log_f32, [](double x) { return std::log(x); }, 1.0},
    {"tanh", m::hd_tanh_f32, [](double x) { return std::tanh(x); }, 1.5},
    {"sigmoid", m::hd_sigmoid_f32, [](double x) { return 1.0 / (1.0 + std::exp(-x)); }, 2.5},
};

double worst_over(const Function& f, float lo, float hi, int steps) {
    double worst = 0;
    for (int i = 0; i <= steps; ++i) {
        float x = lo + (hi - lo) * static_cast<float>(i) / static_cast<float>(steps);
        worst = std::max(worst, ulps(f.f32(x), f.f64(x)));
    }
    return worst;
}

} // namespace

TEST_CASE("f32 math: within its ULP bound over the whole f32 range") {
    for (const Function& f : kFunctions) {
        CAPTURE(f.name);
        double worst = 0;
        float at = 0;
        for (std::uint64_t b = 0; b < (std::uint64_t{1} << 32); b += 4099) {
            float x = from_bits(static_cast<std::uint32_t>(b));
            if (std::isnan(x)) continue;
            double e = ulps(f.f32(x), f.f64(x));
            if (e > worst) {
                worst = e;
                at = x;
            }
        }
        CAPTURE(at);
        CHECK(worst <= f.bound);
        // Where the algorithms switch or the result leaves the normal range.
        CHECK(worst_over(f, -104.0f, -86.0f, 20000) <= f.bound);
        CHECK(worst_over(f, 86.0f, 89.0f, 5000) <= f.bound);
        CHECK(worst_over(f, -1.0f, 1.0f, 20000) <= f.bound);
        CHECK(worst_over(f, 0.5f, 2.0f, 20000) <= f.bound);
    }
}

TEST_CASE("f32 math: special values") {
    const float inf = std::numeric_limits<float>::infinity();
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const float tiny = std::numeric_limits<float>::denorm_min();
    CHECK(m::hd_exp_f32(0.0f) == 1.0f);
    CHECK(m::hd_exp_f32(-0.0f) == 1.0f);
    CHECK(m::hd_exp_f32(inf) == inf);
    CHECK(m::hd_exp_f32(-inf) == 0.0f);
    CHECK(m::hd_exp_f32(89.0f) == inf);
    CHECK(m::hd_exp_f32(-104.0f) == 0.0f);
    CHECK(m::hd_exp_f32(-100.0f) > 0.0f); // a subnormal result, not flushed
    CHECK(std::isnan(m::hd_exp_f32(nan)));
    // Every input around the overflow threshold ln(FLT_MAX): the largest finite value or inf.
    for (float x = 88.7227f; x < 88.7230f; x = std::nextafter(x, inf)) {
        CAPTURE(x);
        CHECK(ulps(m::hd_exp_f32(x), std::exp(static_cast<double>(x))) <= 1.01);
    }
    CHECK(m::hd_log_f32(1.0f) == 0.0f);
    CHECK(m::hd_log_f32(0.0f) == -inf);
    CHECK(m::hd_log_f32(-0.0f) == -inf);
    CHECK(m::hd_log_f32(inf) == inf);
    CHECK(std::isnan(m::hd_log_f32(-1.0f)));
    CHECK(std::isnan(m::hd_log_f32(-inf)));
    CHECK(std::isnan(m::hd_log_f32(nan)));
    CHECK(ulps(m::hd_log_f32(tiny), std::log(static_cast<double>(tiny))) <= 1.0);
    CHECK(m::hd_tanh_f32(inf) == 1.0f);
    CHECK(m::hd_tanh_f32(-inf) == -1.0f);
    CHECK(m::hd_tanh_f32(0.0f) == 0.0f);
    CHECK(std::signbit(m::hd_tanh_f32(-0.0f)));
    CHECK(m::hd_tanh_f32(tiny) == tiny);
    CHECK(std::isnan(m::hd_tanh_f32(nan)));
    CHECK(m::hd_sigmoid_f32(0.0f) == 0.5f);
    CHECK(m::hd_sigmoid_f32(inf) == 1.0f);
    CHECK(m::hd_sigmoid_f32(-inf) == 0.0f);
    CHECK(std::isnan(m::hd_sigmoid_f32(nan)));
}

TEST_CASE("f32 math: the interpreter and the compiled kernels agree bit for bit") {
    using namespace hedra;
    std::vector<float> xs;
    for (float x : {-100.0f, -88.9f, -20.0f, -3.4651163f, -0.637f, -0.625f, -1e-30f, -0.0f, 0.0f,
                    1e-38f, 0.3f, 0.625f, 0.7f, 1.0f, 2.5f, 30.0f, 88.7f, 89.0f})
        xs.push_back(x);
    for (int i = 0; i < 200; ++i)
        xs.push_back(-12.0f + 0.12f * static_cast<float>(i));
    Array x = array(xs, Shape::of({static_cast<std::int64_t>(xs.size())}));
    Array pos = abs(x) + 1e-30f;
    std::vector<Array> outs{exp(x), log(pos), tanh(x), sigmoid(x)};
    for (const std::string backend : {"openmp", "c"}) {
        CAPTURE(backend);
        ComputeOptions ref, got;
        ref.backend = "reference";
        got.backend = backend;
        std::vector<HostArray> want = compute(outs, ref), have = compute(outs, got);
        for (std::size_t k = 0; k < outs.size(); ++k)
            for (std::int64_t i = 0; i < want[k].size(); ++i) {
                CAPTURE(k);
                CAPTURE(xs[static_cast<std::size_t>(i)]);
                double w = want[k].flat(i), h = have[k].flat(i);
                CHECK((std::memcmp(&w, &h, sizeof w) == 0 || (std::isnan(w) && std::isnan(h))));
            }
    }
}
