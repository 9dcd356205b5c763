// Dynamic loss scaling (loss_scaling.hpp) as graph functions.
#include "nn/loss_scaling.hpp"

#include <cmath>
#include <limits>
#include <string>

#include "core/error.hpp"
#include "core/library.hpp"
#include "core/primitives.hpp"

namespace hedra::nn {

void check_loss_scaling(const LossScaling& o) {
    auto fail = [](const std::string& what) { throw Error("LossScaling: " + what); };
    if (!(o.init_scale > 0.0) || !std::isfinite(o.init_scale))
        fail("init_scale " + std::to_string(o.init_scale) +
             " must be finite and > 0 (2^16 is "
             "GradScaler's default)");
    if (!(o.growth_factor > 1.0) || !std::isfinite(o.growth_factor))
        fail("growth_factor " + std::to_string(o.growth_factor) + " must be finite and > 1");
    if (!(o.backoff_factor > 0.0 && o.backoff_factor < 1.0))
        fail("backoff_factor " + std::to_string(o.backoff_factor) + " must lie in (0, 1)");
    if (o.growth_interval < 1 || o.growth_interval > (std::int64_t{1} << 24))
        fail("growth_interval " + std::to_string(o.growth_interval) +
             " must lie in [1, 2^24] (the count is an f32)");
}

Array found_non_finite(const std::vector<Array>& grads) {
    if (grads.empty()) throw Error("found_non_finite: no gradients given");
    // max(|g|) is NaN when some element is NaN (max propagates NaN) and inf when one is inf:
    // either fails `<= largest finite`.
    const double largest = std::numeric_limits<float>::max();
    Array found;
    for (const Array& g : grads) {
        Array bad = lazy([largest](Sym m) { return !(m <= largest); }, max(abs(g)));
        found = found.valid() ? (found | bad) : bad;
    }
    return found;
}

ScaleUpdate update_scale(const Array& found_inf, const Array& scale, const Array& growth_tracker,
                         const LossScaling& o) {
    Array clean = growth_tracker + 1.0;
    Array grow = clean >= static_cast<double>(o.growth_interval);
    ScaleUpdate u;
    u.scale =
        where(found_inf, scale * o.backoff_factor, where(grow, scale * o.growth_factor, scale));
    u.growth_tracker = where(found_inf, 0.0, where(grow, 0.0, clean));
    return u;
}

} // namespace hedra::nn
