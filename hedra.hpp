// hedra: lazy arrays compiled by a polyhedral scheduler. The one header a user includes.
#pragma once

#include "ad/check.hpp"
#include "ad/grad.hpp"
#include "core/array.hpp"
#include "core/backend.hpp"
#include "core/collective.hpp"
#include "core/compute.hpp"
#include "core/graph_file.hpp"
#include "core/library.hpp"
#include "core/primitives.hpp"
#include "core/scan.hpp"
#include "core/sym.hpp"
#include "core/transform.hpp"

namespace hedra::detail {
// Registers the built-in backends (reference, and openmp/cuda where built). Defined in the
// backends layer; the inline variable makes every program that includes hedra.hpp link it.
bool register_builtin_backends();
inline const bool builtin_backends_registered = register_builtin_backends();
} // namespace hedra::detail
