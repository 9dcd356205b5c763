// Near-identical variants of a program, for the compiled-program caches: the openmp backend
// reuses compiled code for graphs of equal structure (graph_key.hpp) and plans on disk
// (plan_cache.hpp), binding the new leaves' values at run time. A variant changes one thing:
// leaf values only (must reuse the code and read the new data), or one parameter (a literal,
// a view offset, a reduction's op or keepdims, an identity, a pad value, a cast's dtype...),
// which must *not* reuse the code. Running a program and then its variant in one process and
// comparing the variant with the reference catches a cache key that misses a field.
#pragma once

#include <optional>

#include "fuzz/lib/fuzz_program.hpp"

namespace hedra::fuzz {

// A variant of `p` chosen by `seed`, or nothing if none of the tried edits gave a valid
// program. `what` (optional) receives a description ("v3: literal 2 -> 2.5").
std::optional<FuzzProgram> variant(const FuzzProgram& p, std::uint64_t seed,
                                   std::string* what = nullptr);

} // namespace hedra::fuzz
