// SHA-256 (FIPS 180-4), for the keys of the PTX cache: a cache hit must never load code
// compiled from another source, and the CPU backend's hash comes from LLVM, which a CUDA-only
// build does not link.
#pragma once

#include <string>
#include <string_view>

namespace hedra::backend::cuda {

// Lower-case hex digest of `bytes`.
std::string sha256_hex(std::string_view bytes);

} // namespace hedra::backend::cuda
