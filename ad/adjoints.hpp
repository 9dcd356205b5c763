// The adjoint rule of each kind of node of the lazy graph: given a node and the cotangent of
// its result, the cotangent contribution to each of its inputs.
#pragma once

#include <vector>

#include "core/array.hpp"

namespace hedra::ad {

// One entry per input of `node`: its cotangent contribution (the input's shape and dtype), or
// an empty Array where the contribution is zero or `wanted[k]` is false. Throws hedra::Error
// for a node that cannot be differentiated (a custom reduction).
std::vector<Array> adjoint(const NodePtr& node, const Array& ybar, const std::vector<bool>& wanted);

} // namespace hedra::ad
