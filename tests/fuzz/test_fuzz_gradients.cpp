// The fixed-seed gradient fuzz batch: random differentiable float64 programs checked against
// central differences along random directions, random linear programs against the dot-product
// identity, and both gradient graphs on openmp against the reference (grad_fuzz.hpp).
// Longer soaks: `hedra-fuzz --grad --count N` and `hedra-fuzz --linear --count N`.
#include <doctest/doctest.h>

#include "fuzz/lib/grad_fuzz.hpp"

using namespace hedra::fuzz;

namespace {

void run(bool linear, std::uint64_t first, std::uint64_t count) {
    int passed = 0;
    for (std::uint64_t seed = first; seed < first + count; ++seed) {
        GradResult r = linear ? check_linear_program(seed) : check_gradient_program(seed);
        if (r.status == GradStatus::Fail || r.status == GradStatus::Error)
            FAIL_CHECK((linear ? "linear" : "gradient")
                       << " fuzz seed " << seed << ": " << grad_status_name(r.status) << ": "
                       << r.message << "\n"
                       << r.reproducer);
        passed += r.status == GradStatus::Pass;
    }
    CHECK(passed >= static_cast<int>(count) * 3 / 4); // kinks and skips stay rare
}

} // namespace

TEST_CASE("fuzz: gradients of random programs against central differences") {
    run(false, 1, 40);
}

TEST_CASE("fuzz: vjp of random linear programs satisfies the dot-product identity") {
    run(true, 1, 40);
}
