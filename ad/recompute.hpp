// recompute: activation recomputation. The gradients grad() builds read forward values where
// their adjoints need them (a GELU's output for its weight's gradient, softmax probabilities
// for the scores'), so those values stay in memory from the forward pass to the backward pass.
// recompute_maps gives the backward its own copies of the forward's elementwise maps (through
// the views it reads them by), computed again from what the maps read: the forward's copy then
// lives only while the forward reads it, and the backward's while the backward does. Each copy
// is a distinct node (a fresh identity), so hash-consing does not merge it back; its inputs are
// the forward's, so reductions (matmul results, normalization statistics) are not recomputed.
#pragma once

#include <vector>

#include "core/array.hpp"

namespace hedra::ad {

// `backward` (gradients of `forward`'s values) rebuilt so that each elementwise map of the
// forward graph they read is computed anew for them. Values are unchanged.
std::vector<Array> recompute_maps(const std::vector<Array>& forward,
                                  const std::vector<Array>& backward);

} // namespace hedra::ad
