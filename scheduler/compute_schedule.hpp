// compute_schedule: a new schedule for one kernel from isl's scheduler
// (isl_schedule_constraints_compute_schedule, Pluto-style): validity = every dependence,
// coincidence = every dependence (so "coincident" marks are true parallelism), proximity =
// the flow dependences. Reduction inits that can be hoisted run first, each in its own nest
// (reduction_init.hpp). Large kernels serialize their SCCs (isl's scheduler is superlinear:
// 1.05 s vs 48 ms on a 160-statement chain), and the scheduler runs under an operation quota
// scaled with the statement count; on quota the program (DSL) order is used, as Polly does.
// Kernels whose best nest follows from their shape (a lone contraction or reduction besides
// the hoisted inits, independent pieces of a fuse) skip isl's scheduler: direct_schedule.hpp.
#pragma once

#include "polyhedral/dependences.hpp"
#include "polyhedral/isl_context.hpp"
#include "polyhedral/scop.hpp"
#include "scheduler/target.hpp"

namespace hedra::sched {

struct ScheduleOptions {
    int serialize_sccs_above = 8;                    // statements; more: schedule_serialize_sccs
    unsigned long base_operations = 400000;          // isl operation quota: base +
    unsigned long operations_per_statement = 100000; // ... this per statement
    bool direct = true; // kernels of a known shape get direct_schedule.hpp's schedule
    CpuTarget cpu = cpu_target(); // what a contraction's schedule is planned for
};

struct KernelSchedule {
    poly::IslPtr<isl_schedule> schedule;
    bool fell_back = false; // the quota ran out: program order
    // What isl was asked to solve (null when no statement was left after the hoisted inits);
    // kept for dumps (HEDRA_DUMP, hedra-dump --dump=constraints).
    poly::IslPtr<isl_schedule_constraints> constraints;
};

// A kernel with row-local buffers or a stencil stream (kernel_ir.hpp) always gets its direct
// schedule (direct_schedule.hpp), whatever `options.direct` says: only it keeps each row's
// statements in one iteration of the row loop, or a window's rows live while read.
KernelSchedule compute_schedule(poly::IslContext& ctx, const poly::Scop& scop,
                                const poly::Dependences& deps, const ScheduleOptions& options = {});

// Whether the kernel is a stencil stream or a statement of it touches a row-local buffer.
bool has_contracted_storage(const poly::Scop& scop);

} // namespace hedra::sched
