// Learning-rate schedules: small value objects whose at(step) gives the learning rate of update
// `step` (0-based) on the host. A compiled training step takes the value as a run-time input
// (nn/trainer.hpp), so a schedule never recompiles.
#pragma once

#include <cstdint>

namespace hedra::nn {

struct ConstantLr {
    double lr = 1e-3;
    double at(std::int64_t step) const;
};

// nanoGPT's get_lr: a linear warm-up lr·(step+1)/(warmup+1) for step < warmup, then a cosine
// from lr down to min_lr at step decay_steps, and min_lr after:
// min_lr + ½(1 + cos(π·(step − warmup)/(decay_steps − warmup)))·(lr − min_lr).
// The arithmetic is the Python function's, in the same order, so the values agree bit for bit.
struct WarmupCosine {
    double lr = 1e-3;
    double min_lr = 1e-4;
    std::int64_t warmup = 100;       // warm-up steps
    std::int64_t decay_steps = 2000; // where the cosine ends (nanoGPT's lr_decay_iters)
    // Throws hedra::Error for a negative step or warmup, or decay_steps <= warmup.
    double at(std::int64_t step) const;
};

} // namespace hedra::nn
