// Dependences between the statement instances of one kernel, from isl's dataflow analysis
// (isl_union_access_info_compute_flow) under the program (DSL) order:
// - flow (read after write): the last write of each element before each read;
// - output (write after write) and anti (write after read): the previous accesses a write must
//   stay behind, which matter where a buffer is written twice (a reduction's init and updates,
//   overwrite). Together they are the validity constraints of any new schedule.
#pragma once

#include "polyhedral/isl_ptr.hpp"
#include "polyhedral/scop.hpp"

namespace hedra::poly {

struct Dependences {
    IslPtr<isl_union_map> flow;   // RAW: source instance -> sink instance
    IslPtr<isl_union_map> output; // WAW
    IslPtr<isl_union_map> anti;   // WAR
    // flow ∪ output ∪ anti.
    IslPtr<isl_union_map> all() const;
};

Dependences compute_dependences(const Scop& scop);

} // namespace hedra::poly
