// Schedules in and out of hedra: isl block YAML (readable by isl's own tools, e.g.
// `isl_schedule -` or isl_schedule_read_from_str), the flat schedule map of each statement (for
// JSCoP), and the checks a schedule from outside (hedra-dump --load-schedule) must pass before
// it replaces the computed one: it schedules exactly the kernel's instances and respects every
// dependence (as Polly checks an imported JSCoP).
#pragma once

#include <string>
#include <vector>

#include "polyhedral/dependences.hpp"
#include "polyhedral/isl_context.hpp"
#include "polyhedral/isl_ptr.hpp"
#include "polyhedral/scop.hpp"

namespace hedra::sched {

// isl's YAML in block style (one key per line), ending in a newline.
std::string schedule_yaml(const poly::IslPtr<isl_schedule>& schedule);
std::string constraints_yaml(const poly::IslPtr<isl_schedule_constraints>& constraints);

// The schedule as a map per statement, in kernel statement order ("{ S0[i0, i1] -> [0, i0, i1] }"),
// as isl_schedule_get_map gives it.
std::vector<std::string> statement_schedule_maps(const poly::Scop& scop,
                                                 const poly::IslPtr<isl_schedule>& schedule);

// Parses an isl schedule (YAML, block or flow); throws hedra::Error naming `what` with isl's
// message if it cannot.
poly::IslPtr<isl_schedule> parse_schedule(poly::IslContext& ctx, const std::string& text,
                                          const std::string& what);

// "" when `schedule` covers exactly the scop's instances, else what differs.
std::string domain_mismatch(const poly::Scop& scop, const poly::IslPtr<isl_schedule>& schedule);

// The dependences (source -> sink) that `schedule` does not run in order: empty when legal.
poly::IslPtr<isl_union_map> violated_dependences(const poly::Dependences& deps,
                                                 const poly::IslPtr<isl_schedule>& schedule);
bool is_empty(const poly::IslPtr<isl_union_map>& map);

} // namespace hedra::sched
