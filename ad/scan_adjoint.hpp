// The adjoint of a scan (core/scan.hpp): the cotangents of its inputs (initial carries, scanned
// arrays, closures) from those of its components, as the components of a scan that runs the
// other way (see scan_adjoint.cpp).
#pragma once

#include <vector>

#include "core/array.hpp"

namespace hedra::ad {

// `cotangents`: per component of `scan` (ScanBody::Component order), its cotangent, or an
// invalid Array where it has none. Returns one entry per input of `scan`: its cotangent, or an
// invalid Array where `wanted` is false or it has none (an integer input).
std::vector<Array> scan_adjoint(const NodePtr& scan, const std::vector<Array>& cotangents,
                                const std::vector<bool>& wanted);

} // namespace hedra::ad
