// Reverse-mode automatic differentiation over the lazy graph. Gradients are ordinary lazy
// arrays built from the same primitives as the forward pass (maps, views, reductions, fuses),
// so they are scheduled and fused by the same compiler, computed together with the forward
// pass they share its work, and they can be differentiated again (grad of grad).
// The rules are summarized in docs/ad.md.
#pragma once

#include <vector>

#include "core/array.hpp"
#include "core/source_location.hpp"

namespace hedra {

// The gradient of the rank-0 float array `loss` with respect to each of `params` (float arrays
// of any kind: leaves or intermediate arrays), each with its parameter's shape and dtype. A
// parameter the loss does not depend on gets zeros.
std::vector<Array> grad(const Array& loss, const std::vector<Array>& params,
                        SourceLocation loc = SourceLocation::current());
Array grad(const Array& loss, const Array& param, SourceLocation loc = SourceLocation::current());

// The vector-Jacobian product: Σ_o ⟨cotangents[o], d outputs[o] / d inputs[i]⟩ for each input,
// i.e. the cotangents pulled back to the inputs. cotangents[o] has the shape of outputs[o]
// (its dtype is converted to the output's).
std::vector<Array> vjp(const std::vector<Array>& outputs, const std::vector<Array>& cotangents,
                       const std::vector<Array>& inputs,
                       SourceLocation loc = SourceLocation::current());

// The value of `a`, through which no gradient flows (the derivative is taken as zero).
Array stop_gradient(const Array& a, SourceLocation loc = SourceLocation::current());

namespace ad {
// Whether `node` is the identity map that stop_gradient builds.
bool is_stop_gradient(const Node& node);
} // namespace ad

} // namespace hedra
