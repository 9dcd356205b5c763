// Scop: one kernel of the kernel IR as isl sees it (PPCG's "scop"): the iteration domain of
// every statement, its write and read access relations into buffer spaces named by the buffer
// names, and the program (DSL) order as a schedule. Statement S over extents (4,5) has the
// domain { S[i0, i1] : 0 <= i0 <= 3 and 0 <= i1 <= 4 }; an access through an AffineMap m is
// { S[i] -> b[m(i)] } restricted to that domain. A Read of the index expression itself
// (Read::buffer == -1) touches no memory and has no access relation.
#pragma once

#include <string>
#include <vector>

#include "polyhedral/isl_context.hpp"
#include "polyhedral/isl_ptr.hpp"
#include "polyhedral/kernel_ir.hpp"

namespace hedra::poly {

struct Scop {
    const ProgramIR* program = nullptr;             // not owned; outlives the Scop
    const Kernel* kernel = nullptr;                 // not owned
    IslPtr<isl_union_set> domain;                   // every statement instance of the kernel
    std::vector<IslPtr<isl_set>> statement_domains; // per kernel statement, in order
    IslPtr<isl_union_map> writes;       // statement instance -> buffer element (must writes)
    IslPtr<isl_union_map> reads;        // including the accumulator read of an Update
    IslPtr<isl_schedule> program_order; // statements in sequence, counters lexicographically

    // The index of the kernel statement called `name`, or -1.
    int statement_index(const std::string& name) const;
};

Scop build_scop(IslContext& ctx, const ProgramIR& program, const Kernel& kernel);

// With symbolic extents (ProgramIR::params): every statement instance of the kernel that runs
// for given values, "[hd_n0] -> { S0[i0, i1] : i0 < hd_n0 }" (each Statement::param_bounds;
// statements without are unbounded), and what is known of the values, "[hd_n0] -> { : 1 <= hd_n0
// }". hd_n<k> is the value of params[k]. Null without symbolic extents.
IslPtr<isl_union_set> symbolic_instances(IslContext& ctx, const Scop& scop);
IslPtr<isl_set> symbolic_context(IslContext& ctx, const ProgramIR& program);

// One statement alone in program order: its counters lexicographically.
IslPtr<isl_schedule> statement_program_order(const Scop& scop, int statement);

// isl notation of a statement's domain: "{ S0[i0, i1] : 0 <= i0 < 4 and 0 <= i1 < 5 }".
std::string iteration_domain_string(const Statement& statement);
// isl notation of an access: "{ S0[i0, i1] -> b2[i1, 2*i0 + 1] }" (not yet restricted to the
// domain). An access with indirect inputs (Read::indirect) relates each instance to every
// element those inputs may select: "{ S0[i0] -> b2[o0] : exists (i1 : o0 = i1 and
// 0 <= i1 < 50) }".
std::string access_relation_string(const Statement& statement, const AffineMap& access,
                                   const std::string& buffer_name,
                                   const std::vector<std::int64_t>& indirect_extent = {});
// The same for a read, its indirect inputs included.
std::string access_relation_string(const Statement& statement, const Read& read,
                                   const std::string& buffer_name);

} // namespace hedra::poly
