// The adjoint of a View: x̄[i] = Σ { ȳ[k] : access(k) = i }, built as a gather over the
// preimage of each input index (never a scatter). See view_adjoint.cpp for the construction.
#pragma once

#include "core/array.hpp"

namespace hedra::ad {

// The cotangent of `view`'s input (shape and dtype of the input, dtype of `ybar`) given the
// cotangent `ybar` of the view (the view's shape).
Array view_adjoint(const NodePtr& view, const Array& ybar);

} // namespace hedra::ad
