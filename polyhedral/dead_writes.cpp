// Dead statement instances from dataflow (see dead_writes.hpp). The last write of each element
// is found as the flow dependence into an artificial statement that runs after the kernel and
// reads every written element.
#include "polyhedral/dead_writes.hpp"

#include <isl/flow.h>
#include <isl/schedule.h>
#include <isl/set.h>
#include <isl/space.h>
#include <isl/union_map.h>
#include <isl/union_set.h>

namespace hedra::poly {

IslPtr<isl_union_set> dead_instances(const Scop& scop, const Dependences& deps) {
    isl_ctx* ctx = isl_union_set_get_ctx(scop.domain.get());
    isl_set* end = isl_set_read_from_str(ctx, "{ hedra_end[] }");
    // hedra_end[] -> every element written by the kernel.
    isl_union_set* written = isl_union_map_range(scop.writes.copy());
    isl_union_map* sink =
        isl_union_map_from_domain_and_range(isl_union_set_from_set(isl_set_copy(end)), written);
    isl_schedule* order = isl_schedule_sequence(
        scop.program_order.copy(), isl_schedule_from_domain(isl_union_set_from_set(end)));
    isl_union_access_info* info = isl_union_access_info_from_sink(sink);
    info = isl_union_access_info_set_must_source(info, scop.writes.copy());
    info = isl_union_access_info_set_schedule(info, order);
    isl_union_flow* flow = isl_union_access_info_compute_flow(info);
    isl_union_set* live = isl_union_map_domain(isl_union_flow_get_may_dependence(flow));
    isl_union_flow_free(flow);
    live = isl_union_set_union(live, isl_union_map_domain(deps.flow.copy()));
    return take(isl_union_set_subtract(scop.domain.copy(), live));
}

Scop restrict_scop(const Scop& scop, const IslPtr<isl_union_set>& keep) {
    Scop out = scop;
    out.domain = take(isl_union_set_intersect(scop.domain.copy(), keep.copy()));
    for (IslPtr<isl_set>& d : out.statement_domains) {
        isl_union_set* u = isl_union_set_intersect(isl_union_set_from_set(d.copy()), keep.copy());
        isl_space* space = isl_set_get_space(d.get());
        d = take(isl_union_set_extract_set(u, space));
        isl_union_set_free(u);
    }
    out.writes = take(isl_union_map_intersect_domain(scop.writes.copy(), keep.copy()));
    out.reads = take(isl_union_map_intersect_domain(scop.reads.copy(), keep.copy()));
    out.program_order = take(isl_schedule_intersect_domain(scop.program_order.copy(), keep.copy()));
    return out;
}

std::optional<Scop> remove_dead_instances(const Scop& scop, const Dependences& deps) {
    IslPtr<isl_union_set> dead = dead_instances(scop, deps);
    if (isl_union_set_is_empty(dead.get()) == isl_bool_true) return std::nullopt;
    return restrict_scop(scop, take(isl_union_set_subtract(scop.domain.copy(), dead.release())));
}

} // namespace hedra::poly
