// The text of the driver loader that hedra-aot writes into every cuda-target library
// (aot/runtime/cuda_driver_loader.hpp with its includes in place; made at configure time).
#pragma once

namespace hedra::aot {

const char* cuda_driver_loader_source();

} // namespace hedra::aot
