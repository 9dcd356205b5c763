// merge_scans: one loop for scans that compute the same steps. The adjoint of a scan stores the
// forward step's contractions as outputs of a larger scan (core/scan.hpp extend_scan): its body
// is the forward body with more outputs, over the same inputs. A program holding both would run
// the steps twice; this pass reads every component of the smaller scan from the larger one.
#pragma once

#include <vector>

#include "core/node.hpp"

namespace hedra::sched {

// `outputs` rebuilt so that no Scan node is left whose body another Scan node of the graph
// extends (same inputs, parameters, length and direction; its outputs a prefix of the other's).
std::vector<NodePtr> merge_scans(const std::vector<NodePtr>& outputs);

} // namespace hedra::sched
