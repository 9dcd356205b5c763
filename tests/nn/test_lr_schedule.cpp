// Learning-rate schedules (nn/lr_schedule.hpp): WarmupCosine against nanoGPT's get_lr written
// out at the points where its pieces meet.
#include "nn/lr_schedule.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <numbers>

#include "core/error.hpp"

using namespace hedra;
using namespace hedra::nn;

TEST_CASE("nn WarmupCosine: nanoGPT's get_lr at the W7 settings") {
    const WarmupCosine s{1e-3, 1e-4, 100, 2000};
    auto cosine = [](double i) {
        return 1e-4 + 0.5 * (1 + std::cos(std::numbers::pi * (i - 100) / 1900)) * (1e-3 - 1e-4);
    };
    CHECK(s.at(0) == 1e-3 * 1 / 101);
    CHECK(s.at(99) == 1e-3 * 100 / 101);
    CHECK(s.at(100) == doctest::Approx(1e-3).epsilon(1e-15));
    CHECK(s.at(100) == cosine(100));
    CHECK(s.at(1050) == doctest::Approx(5.5e-4).epsilon(1e-15));
    CHECK(s.at(1050) == cosine(1050));
    CHECK(s.at(2000) == doctest::Approx(1e-4).epsilon(1e-15));
    CHECK(s.at(2001) == 1e-4);
    CHECK(s.at(2500) == 1e-4);
    bool rises = true, falls = true; // up to the peak at 100, then down
    for (std::int64_t i = 1; i < 2500; ++i)
        (i <= 100 ? rises : falls) &= i <= 100 ? s.at(i) > s.at(i - 1) : s.at(i) <= s.at(i - 1);
    CHECK(rises);
    CHECK(falls);
}

TEST_CASE("nn ConstantLr and schedule errors") {
    CHECK(ConstantLr{0.25}.at(0) == 0.25);
    CHECK(ConstantLr{0.25}.at(1000) == 0.25);
    CHECK_THROWS_WITH_AS(ConstantLr{}.at(-1), doctest::Contains("step -1 is negative"), Error);
    CHECK_THROWS_WITH_AS((WarmupCosine{1e-3, 1e-4, 100, 100}.at(5)),
                         doctest::Contains("0 <= warmup < decay_steps"), Error);
}
