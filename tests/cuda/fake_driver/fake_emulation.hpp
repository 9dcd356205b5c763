// The fake driver running what the cuda backend compiles: an image hook
// (backend::set_cuda_image_hook) that registers the CPU emulation of each program's source for
// the image the backend loads, so that the device tests run on the fake driver too, in the
// child processes of tests/cuda/test_fake_driver.cpp.
#pragma once

#include <dlfcn.h>

#include <cstdlib>
#include <string>

#include "backends/cuda/cuda_backend.hpp"
#include "cuda/emulator.hpp"
#include "cuda/fake_driver/fake_driver_path.hpp"

namespace hedra::test {

inline void register_fake_emulation(const std::string& source, const std::string& image) {
    static void* fake = dlopen(fake_driver_path().c_str(), RTLD_NOW | RTLD_GLOBAL);
    auto reg =
        reinterpret_cast<void (*)(const char*, void*)>(dlsym(fake, "hedra_fake_cuda_register"));
    reg(image.c_str(), emulation_library(source));
}

// In a child of test_fake_driver.cpp (the fake driver loaded): every program emulated.
inline void emulate_on_fake_driver() {
    if (std::getenv("HEDRA_FAKE_CUDA_CHILD")) backend::set_cuda_image_hook(register_fake_emulation);
}

} // namespace hedra::test
