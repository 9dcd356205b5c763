// What a kernel looks like to isl, as text for dumps (HEDRA_DUMP, hedra-dump): the iteration
// domain of each statement and each of its access relations, in isl's own notation and in
// kernel IR order, restricted to the instances the scop keeps (after dead-write removal), and
// the dependences. Structured first (describe_scop), so text, JSON and JSCoP share one source.
#pragma once

#include <string>
#include <vector>

#include "polyhedral/dependences.hpp"
#include "polyhedral/scop.hpp"

namespace hedra::poly {

struct AccessDescription {
    std::string kind;     // "write", "read", or "read-accumulator" (an Update's own element)
    std::string buffer;   // "b2"
    std::string relation; // "{ S0[i0, i1] -> b2[i1, 2i0 + 1] : 0 <= i0 <= 3 and ... }"
};

struct StatementDescription {
    std::string name;                        // "S0"
    std::string kind;                        // "assign" or "update"
    std::string domain;                      // "{ S0[i0, i1] : 0 <= i0 <= 3 and 0 <= i1 <= 4 }"
    std::vector<AccessDescription> accesses; // the write first, then the reads in order
};

std::vector<StatementDescription> describe_scop(const Scop& scop);

// "S0 := { S0[i0, i1] : ... }" per statement.
std::string domains_text(const std::vector<StatementDescription>& statements);
// "S0 write b2 := { ... }" per access.
std::string accesses_text(const std::vector<StatementDescription>& statements);
// "flow := { ... }", "output := ...", "anti := ..." (isl union maps).
std::string dependences_text(const Dependences& deps);

} // namespace hedra::poly
