// Dataflow dependences of a kernel (see dependences.hpp). As in PPCG, the false dependences come
// from one analysis with the writes as sinks, the writes as must-sources and the reads as
// may-sources: a write kills older accesses, so only the nearest ones are reported.
#include "polyhedral/dependences.hpp"

#include <isl/flow.h>
#include <isl/schedule.h>
#include <isl/union_map.h>

#include "core/error.hpp"

namespace hedra::poly {

IslPtr<isl_union_map> Dependences::all() const {
    isl_union_map* u = isl_union_map_union(flow.copy(), output.copy());
    return take(isl_union_map_union(u, anti.copy()));
}

Dependences compute_dependences(const Scop& scop) {
    Dependences deps;
    isl_union_access_info* raw = isl_union_access_info_from_sink(scop.reads.copy());
    raw = isl_union_access_info_set_must_source(raw, scop.writes.copy());
    raw = isl_union_access_info_set_schedule(raw, scop.program_order.copy());
    isl_union_flow* raw_flow = isl_union_access_info_compute_flow(raw);
    HEDRA_INTERNAL_CHECK(raw_flow != nullptr, "dependences: isl flow analysis failed");
    deps.flow = take(isl_union_flow_get_may_dependence(raw_flow));
    isl_union_flow_free(raw_flow);

    isl_union_access_info* fal = isl_union_access_info_from_sink(scop.writes.copy());
    fal = isl_union_access_info_set_must_source(fal, scop.writes.copy());
    fal = isl_union_access_info_set_may_source(fal, scop.reads.copy());
    fal = isl_union_access_info_set_schedule(fal, scop.program_order.copy());
    isl_union_flow* fal_flow = isl_union_access_info_compute_flow(fal);
    HEDRA_INTERNAL_CHECK(fal_flow != nullptr, "dependences: isl false-dependence analysis failed");
    deps.output = take(isl_union_flow_get_must_dependence(fal_flow));
    IslPtr<isl_union_map> may = take(isl_union_flow_get_may_dependence(fal_flow));
    isl_union_flow_free(fal_flow);
    deps.anti = take(isl_union_map_subtract(may.release(), deps.output.copy()));
    return deps;
}

} // namespace hedra::poly
