// Finds the reduction inits that can run as their own nest first (see reduction_init.hpp).
#include "scheduler/reduction_init.hpp"

#include <isl/set.h>
#include <isl/space.h>
#include <isl/union_map.h>
#include <isl/union_set.h>

namespace hedra::sched {
namespace {

bool is_reduction_init(const poly::Kernel& kernel, const poly::Statement& st) {
    if (st.kind != poly::StatementKind::Assign) return false;
    for (const poly::Statement& other : kernel.statements)
        if (other.kind == poly::StatementKind::Update && other.write_buffer == st.write_buffer)
            return true;
    return false;
}

} // namespace

std::vector<int> hoistable_reduction_inits(const poly::Scop& scop, const poly::Dependences& deps) {
    std::vector<int> out;
    const poly::Kernel& kernel = *scop.kernel;
    poly::IslPtr<isl_union_map> all = deps.all();
    for (std::size_t i = 0; i < kernel.statements.size(); ++i) {
        const poly::Statement& st = kernel.statements[i];
        // A row-local accumulator is one row per thread: its init stays in the row's loop.
        if (!is_reduction_init(kernel, st) ||
            scop.program->buffers.at(static_cast<std::size_t>(st.write_buffer)).row_local > 0)
            continue;
        poly::IslPtr<isl_union_set> self =
            poly::take(isl_union_set_from_set(scop.statement_domains[i].copy()));
        poly::IslPtr<isl_union_set> others =
            poly::take(isl_union_set_subtract(scop.domain.copy(), self.copy()));
        isl_union_map* into = isl_union_map_intersect_range(all.copy(), self.copy());
        into = isl_union_map_intersect_domain(into, others.copy());
        bool free = isl_union_map_is_empty(into) == isl_bool_true;
        isl_union_map_free(into);
        if (free) out.push_back(static_cast<int>(i));
    }
    return out;
}

} // namespace hedra::sched
