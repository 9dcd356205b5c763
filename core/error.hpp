// hedra::Error: the one exception type for user mistakes and environment faults.
// Messages follow LLVM style (lower-case, no final period) and name the operation,
// the user's shapes as ranges, the axis, and where the arrays were created.
#pragma once

#include <stdexcept>
#include <string>

#include "core/source_location.hpp"

namespace hedra {

class Error : public std::runtime_error {
public:
    explicit Error(const std::string& message) : std::runtime_error(message) {}
};

// "file.cpp:17" (file name without directories, to keep messages short).
std::string location_string(const SourceLocation& loc);

// Internal invariant violated: a bug in hedra, not in the user's program.
[[noreturn]] void internal_error(const std::string& what,
                                 SourceLocation loc = SourceLocation::current());

} // namespace hedra

#define HEDRA_INTERNAL_CHECK(cond, what)                                                           \
    do {                                                                                           \
        if (!(cond)) ::hedra::internal_error(what);                                                \
    } while (0)
