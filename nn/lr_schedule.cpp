// ConstantLr and WarmupCosine (lr_schedule.hpp).
#include "nn/lr_schedule.hpp"

#include <cmath>
#include <numbers>
#include <string>

#include "core/error.hpp"

namespace hedra::nn {

namespace {

void check_step(const char* op, std::int64_t step) {
    if (step < 0)
        throw Error(std::string(op) + "::at: step " + std::to_string(step) +
                    " is negative; steps count updates from 0");
}

} // namespace

double ConstantLr::at(std::int64_t step) const {
    check_step("ConstantLr", step);
    return lr;
}

double WarmupCosine::at(std::int64_t step) const {
    check_step("WarmupCosine", step);
    if (warmup < 0 || decay_steps <= warmup)
        throw Error("WarmupCosine::at: needs 0 <= warmup < decay_steps, got warmup " +
                    std::to_string(warmup) + " and decay_steps " + std::to_string(decay_steps));
    if (step < warmup) return lr * static_cast<double>(step + 1) / static_cast<double>(warmup + 1);
    if (step > decay_steps) return min_lr;
    const double ratio =
        static_cast<double>(step - warmup) / static_cast<double>(decay_steps - warmup);
    const double coeff = 0.5 * (1.0 + std::cos(std::numbers::pi * ratio));
    return min_lr + coeff * (lr - min_lr);
}

} // namespace hedra::nn
