// The shrinker: reduces a failing FuzzProgram to a small one that still fails, by greedy
// edits that each keep the program meaningful: drop outputs, replace an op by a data leaf
// holding its reference value (which cuts off everything upstream of it), turn placeholders
// into data, forward an op to one of its inputs, simplify map expressions and drop unused map
// operands. The result prints as C++ with to_cpp().
#pragma once

#include <functional>

#include "fuzz/lib/fuzz_program.hpp"

namespace hedra::fuzz {

// True when the program still fails in the way being reduced.
using FailurePredicate = std::function<bool(const FuzzProgram&)>;

struct ShrinkStats {
    int attempts = 0; // predicate calls
    int accepted = 0; // edits kept
};

FuzzProgram shrink(const FuzzProgram& failing, const FailurePredicate& still_fails,
                   int max_attempts = 300, ShrinkStats* stats = nullptr);

// Op i replaced by a data leaf with its value computed by the reference backend; nothing if the
// value cannot be computed (it depends on a placeholder).
std::optional<FuzzProgram> freeze_op(const FuzzProgram& p, int i);

} // namespace hedra::fuzz
