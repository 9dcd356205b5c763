// Allocation limits: hedra refuses a buffer larger than the machine's memory and swap before it
// asks the allocator. Such a request can never be met (hedra touches every byte it allocates:
// host arrays are zero-filled, program buffers written), and allocators answer it differently
// (malloc returns null; AddressSanitizer's allocator aborts unless told otherwise), so the
// out-of-memory error must not depend on them.
#pragma once

#include <cstddef>
#include <string>

namespace hedra {

// RAM plus swap in bytes, and at most the address-space limit (RLIMIT_AS); read once.
std::size_t allocation_limit_bytes();

// Throws hedra::Error ("out of memory: cannot allocate N bytes for WHAT: ...") if `bytes` is
// above allocation_limit_bytes().
void check_allocation(std::size_t bytes, const std::string& what);

} // namespace hedra
