// What a backend may legitimately do differently from the reference, per value of a fuzz
// program, and so how the differential runner compares it:
// - Exact: bit for bit (any NaN equals any NaN). Elementwise maps, views, fuses, integer and
//   bool reductions: no freedom at all.
// - ZeroSign: equal as numbers (+0 == -0). Float max/min reductions may meet +0 and -0 in any
//   order, and the first one wins.
// - Approx: within `err` of the reference. Float sums and products may be reassociated; `err`
//   is a first-order bound carried through the program from the magnitude `mag` of every value.
// An operation that would amplify an Approx difference beyond any bound (a comparison, a cast
// to an integer, a division by it, log, pow...) is *invalid*: the generator never builds it,
// so a mismatch is always a bug, never noise.
#pragma once

#include <optional>
#include <vector>

#include "fuzz/lib/fuzz_program.hpp"

namespace hedra::fuzz {

enum class Frag : std::uint8_t { Exact, ZeroSign, Approx };

struct Meta {
    Frag frag = Frag::Exact;
    double mag = 0.0; // upper bound of |value| over finite values (inf: unknown)
    double err = 0.0; // Approx: bound of |backend - reference|
};

const char* frag_name(Frag f);

// The meta of op `i` given the metas of earlier ops and the built arrays (for shapes); nothing
// if the op is invalid in the sense above.
std::optional<Meta> analyze_op(const FuzzProgram& p, int i, const std::vector<Meta>& metas,
                               const std::vector<Array>& values);

// The meta of a map's expression over its operands' metas; nothing if invalid.
std::optional<Meta> analyze_expr(const Expr& e, const std::vector<Meta>& operands,
                                 const std::vector<Sym>& syms);

// All metas of a built program; nothing if some op is invalid.
std::optional<std::vector<Meta>> analyze(const FuzzProgram& p, const std::vector<Array>& values);

// The magnitude limit past which Approx values are not allowed (overflow would make the
// difference unbounded).
double approx_limit(DType t);

} // namespace hedra::fuzz
