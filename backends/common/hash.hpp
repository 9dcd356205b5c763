// SHA-256 for the keys of the on-disk caches (compiled kernels, PTX, autotuning choices): a hit
// must never load what was made from other input. OpenSSL's libcrypto computes it; LLVM's would
// do too, but a CUDA-only build does not link LLVM.
#pragma once

#include <string>
#include <string_view>

namespace hedra::backend {

// Lower-case hex digest of `bytes` (64 characters).
std::string sha256_hex(std::string_view bytes);

} // namespace hedra::backend
