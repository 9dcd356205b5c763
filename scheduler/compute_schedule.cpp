// isl scheduling of one kernel with hoisted reduction inits and a quota (see the header).
#include "scheduler/compute_schedule.hpp"

#include <isl/ctx.h>
#include <isl/options.h>
#include <isl/schedule.h>
#include <isl/union_map.h>
#include <isl/union_set.h>

#include <algorithm>

#include "core/error.hpp"
#include "scheduler/direct_schedule.hpp"
#include "scheduler/reduction_init.hpp"
#include "scheduler/schedule_io.hpp"

namespace hedra::sched {
namespace {

using poly::IslPtr;
using poly::take;

IslPtr<isl_union_map> restrict_to(const IslPtr<isl_union_map>& deps,
                                  const IslPtr<isl_union_set>& domain) {
    isl_union_map* m = isl_union_map_intersect_domain(deps.copy(), domain.copy());
    return take(isl_union_map_intersect_range(m, domain.copy()));
}

// What isl's scheduler is asked for `domain` (validity and coincidence: every dependence;
// proximity: the flow dependences).
IslPtr<isl_schedule_constraints> constraints_of(const poly::Dependences& deps,
                                                const IslPtr<isl_union_set>& domain) {
    IslPtr<isl_union_map> all = restrict_to(deps.all(), domain);
    IslPtr<isl_union_map> flow = restrict_to(deps.flow, domain);
    isl_schedule_constraints* sc = isl_schedule_constraints_on_domain(domain.copy());
    sc = isl_schedule_constraints_set_validity(sc, all.copy());
    sc = isl_schedule_constraints_set_coincidence(sc, all.copy());
    sc = isl_schedule_constraints_set_proximity(sc, flow.copy());
    return take(sc);
}

// isl's schedule of `domain`, or null when the quota ran out.
IslPtr<isl_schedule> isl_schedule_of(poly::IslContext& ctx, const poly::Dependences& deps,
                                     const IslPtr<isl_union_set>& domain, int statements,
                                     const ScheduleOptions& options,
                                     IslPtr<isl_schedule_constraints>& constraints) {
    constraints = constraints_of(deps, domain);
    isl_schedule_constraints* sc = isl_schedule_constraints_copy(constraints.get());
    isl_ctx* c = ctx.get();
    isl_options_set_schedule_serialize_sccs(c, statements > options.serialize_sccs_above);
    ctx.reset_error();
    ctx.set_max_operations(options.base_operations + options.operations_per_statement *
                                                         static_cast<unsigned long>(statements));
    IslPtr<isl_schedule> s = take(isl_schedule_constraints_compute_schedule(sc));
    ctx.set_max_operations(0);
    ctx.reset_error();
    return s;
}

} // namespace

KernelSchedule compute_schedule(poly::IslContext& ctx, const poly::Scop& scop,
                                const poly::Dependences& deps, const ScheduleOptions& options) {
    KernelSchedule out;
    const auto& statements = scop.kernel->statements;
    std::vector<int> inits = hoistable_reduction_inits(scop, deps);
    IslPtr<isl_union_set> rest = scop.domain;
    for (int i : inits)
        rest = take(isl_union_set_subtract(
            rest.release(), isl_union_set_from_set(scop.statement_domains[i].copy())));
    int n_rest = static_cast<int>(statements.size() - inits.size());
    IslPtr<isl_schedule> main;
    // Row-local buffers hold one row per thread, windows a few rows: only the direct schedule
    // keeps them live while they are read.
    const bool row_local = has_contracted_storage(scop);
    if (n_rest > 0 && (options.direct || row_local)) {
        std::vector<int> rest_statements;
        for (int i = 0; i < static_cast<int>(statements.size()); ++i)
            if (std::find(inits.begin(), inits.end(), i) == inits.end())
                rest_statements.push_back(i);
        int absorbed = -1;
        main = direct_schedule(scop, deps, rest_statements, inits, absorbed, options.cpu);
        if (main) out.constraints = constraints_of(deps, rest); // for dumps: what isl was spared
        if (main && absorbed >= 0) inits.erase(std::find(inits.begin(), inits.end(), absorbed));
        HEDRA_INTERNAL_CHECK(main || !row_local, "compute_schedule: kernel " + scop.kernel->name +
                                                     " has row-local buffers but no row schedule");
        // The stream's legality is argued in stencil_stream.hpp; isl confirms it.
        HEDRA_INTERNAL_CHECK(!poly::is_stream(*scop.kernel) ||
                                 is_empty(violated_dependences(deps, main)),
                             "compute_schedule: the stencil stream of kernel " + scop.kernel->name +
                                 " violates a dependence");
    }
    if (n_rest > 0 && !main) {
        main = isl_schedule_of(ctx, deps, rest, n_rest, options, out.constraints);
        if (!main) {
            out.fell_back = true;
            out.schedule = scop.program_order;
            return out;
        }
    }
    IslPtr<isl_schedule> result;
    for (int i : inits) {
        IslPtr<isl_schedule> nest = poly::statement_program_order(scop, i);
        result = result ? take(isl_schedule_sequence(result.release(), nest.release())) : nest;
    }
    if (main)
        result = result ? take(isl_schedule_sequence(result.release(), main.release())) : main;
    out.schedule = result ? result : scop.program_order;
    return out;
}

bool has_contracted_storage(const poly::Scop& scop) {
    if (poly::is_stream(*scop.kernel)) return true;
    for (const poly::Statement& st : scop.kernel->statements) {
        if (scop.program->buffers.at(static_cast<std::size_t>(st.write_buffer)).row_local > 0)
            return true;
        for (const poly::Read& r : st.reads)
            if (r.buffer >= 0 &&
                scop.program->buffers.at(static_cast<std::size_t>(r.buffer)).row_local > 0)
                return true;
    }
    return false;
}

} // namespace hedra::sched
