// dead_writes: statement instances whose value nobody can observe. An instance is live when
// another instance of the kernel reads what it wrote (a flow dependence), or when it is the
// last write of its element (later kernels and the program's outputs see the final value).
// Everything else is overwritten before being read: overwrite(u, interior) first copies all
// of u, then the interior is replaced, so only the boundary copies are live. Removing dead
// instances turns the two passes of a Jacobi sweep into one.
#pragma once

#include <optional>

#include "polyhedral/dependences.hpp"
#include "polyhedral/scop.hpp"

namespace hedra::poly {

// The dead instances of the kernel (an empty set if none).
IslPtr<isl_union_set> dead_instances(const Scop& scop, const Dependences& deps);

// The scop restricted to `keep` (domains, accesses and program order).
Scop restrict_scop(const Scop& scop, const IslPtr<isl_union_set>& keep);

// The scop without its dead instances, or nothing when every instance is live.
std::optional<Scop> remove_dead_instances(const Scop& scop, const Dependences& deps);

} // namespace hedra::poly
