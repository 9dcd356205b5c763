// The Autocast scope (autocast.hpp): a thread-local half type read by the nn layers.
#include "nn/autocast.hpp"

#include <string>

#include "core/error.hpp"
#include "core/library.hpp"

namespace hedra::nn {
namespace {

thread_local DType autocast_half_type = DType::F32;

} // namespace

Autocast::Autocast(DType half) : previous_(autocast_half_type) {
    if (half != DType::F32 && !is_half(half))
        throw Error("Autocast: precision " + std::string(dtype_name(half)) +
                    " is not a mixed precision; use DType::BF16 or DType::F16 (or DType::F32 for "
                    "none)");
    autocast_half_type = half;
}

Autocast::~Autocast() {
    autocast_half_type = previous_;
}

DType autocast_dtype() {
    return autocast_half_type;
}

Array autocast_half(const Array& x, SourceLocation loc) {
    const DType half = autocast_half_type;
    if (half == DType::F32 || x.dtype() != DType::F32) return x;
    return cast(x, half, loc);
}

Array autocast_f32(const Array& x, SourceLocation loc) {
    if (autocast_half_type == DType::F32 || !is_half(x.dtype())) return x;
    return cast(x, DType::F32, loc);
}

} // namespace hedra::nn
