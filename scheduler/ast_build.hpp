// ast_build: the loop nest of a scheduled kernel, from isl_ast_build, as a plain LoopAst.
// Each generated loop gets a dependence test (isl_ast_build_set_before_each_for, as PPCG does):
// the loop is parallel when every dependence between instances that share the enclosing loop
// iterations also shares this loop's iteration. The test runs on the loops isl actually
// generates, so a band member that isl turned into a one-iteration block cannot misplace a
// parallel pragma (a measured trap: wrong results on 2 threads).
#pragma once

#include "polyhedral/dependences.hpp"
#include "polyhedral/isl_ptr.hpp"
#include "polyhedral/scop.hpp"
#include "scheduler/loop_ast.hpp"

namespace hedra::sched {

// `context` (may be null): what is known of the symbolic extents' values (symbolic_context).
AstNode build_loop_ast(const poly::Scop& scop, const poly::Dependences& deps,
                       const poly::IslPtr<isl_schedule>& schedule,
                       const poly::IslPtr<isl_set>& context = {});

} // namespace hedra::sched
