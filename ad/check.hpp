// Gradient checks a user can run on their own functions:
// - check_gradient: float64 central differences along a random direction v against the
//   gradient, ⟨u, (f(x + h v) − f(x − h v)) / 2h⟩ ≈ ⟨vjp(u), v⟩ (u random for non-scalar f);
// - check_linear: the dot-product identity ⟨L x, y⟩ = ⟨x, Lᵀ y⟩ for a linear function L,
//   which checks an adjoint rule exactly (up to rounding) rather than approximately.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/array.hpp"
#include "core/compute.hpp"

namespace hedra {

using ArrayFunction = std::function<Array(const std::vector<Array>& inputs)>;

struct GradientCheckOptions {
    double step = 1e-5; // h of the central difference (check_gradient)
    double rtol = 1e-6; // passes when |a − b| <= atol + rtol · max(|a|, |b|)
    double atol = 1e-10;
    std::uint64_t seed = 1; // of the random direction, cotangent and (check_linear) point
    ComputeOptions compute; // the backend to evaluate with
};

struct GradientCheckResult {
    double analytic = 0.0; // from the gradient (vjp)
    double numeric = 0.0;  // from finite differences (check_gradient) or from f (check_linear)
    double error = 0.0;    // |analytic − numeric|
    bool ok = false;
    std::string to_string() const; // "analytic 1.25 numeric 1.2500001 error 1e-07: ok"
};

// Checks the derivative of f at `at`: the float inputs are converted to f64 (their values and
// shapes kept), so f must accept f64 arrays; non-float inputs are passed through unchanged.
GradientCheckResult check_gradient(const ArrayFunction& f, const std::vector<Array>& at,
                                   const GradientCheckOptions& options = {});

// Checks ⟨f(x), y⟩ = ⟨x, vjp(f)(y)⟩ at random f64 inputs x shaped like `like` and a random y;
// f must be linear in all of its inputs.
GradientCheckResult check_linear(const ArrayFunction& f, const std::vector<Array>& like,
                                 const GradientCheckOptions& options = {});

} // namespace hedra
