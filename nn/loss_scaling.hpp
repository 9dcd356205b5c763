// Dynamic loss scaling for f16 training, as torch.amp.GradScaler does it, in the graph: the
// loss is multiplied by a scale before the backward pass so that small f16 gradients do not
// flush to zero, the gradients are divided by it again in f32, and a step whose gradients hold
// an inf or NaN changes nothing (parameters and optimizer state stay) and halves the scale;
// after `growth_interval` clean steps in a row the scale doubles. The scale and the count of
// clean steps are rank-0 f32 arrays threaded through the compiled step, so the host never reads
// them to decide.
#pragma once

#include <cstdint>
#include <vector>

#include "core/array.hpp"

namespace hedra::nn {

// GradScaler's defaults.
struct LossScaling {
    bool enabled = true;                 // false: no scaling (f16 gradients may underflow)
    double init_scale = 65536.0;         // 2^16
    double growth_factor = 2.0;          // the scale after growth_interval clean steps
    double backoff_factor = 0.5;         // the scale after a step with inf or NaN gradients
    std::int64_t growth_interval = 2000; // clean steps before the scale grows
};

// Throws hedra::Error naming the field and what it must be.
void check_loss_scaling(const LossScaling& options);

// A rank-0 bool: some element of some gradient is inf or NaN.
Array found_non_finite(const std::vector<Array>& grads);

struct ScaleUpdate {
    Array scale;          // rank 0 f32: the next step's scale
    Array growth_tracker; // rank 0 f32: clean steps in a row since the scale last changed
};

// The scale after a step: backed off when `found_inf`, grown after growth_interval clean
// steps (the tracker then restarts at 0), unchanged otherwise.
ScaleUpdate update_scale(const Array& found_inf, const Array& scale, const Array& growth_tracker,
                         const LossScaling& options);

} // namespace hedra::nn
