// Where the CUDA tests find the fake driver (fake_libcuda.cpp): where the build put it, else next
// to the test executable (a build folder that was moved to another machine).
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>

namespace hedra::test {

inline std::string fake_driver_path() {
    if (std::filesystem::exists(HEDRA_FAKE_CUDA_LIBRARY)) return HEDRA_FAKE_CUDA_LIBRARY;
    char self[4096] = {0};
    if (readlink("/proc/self/exe", self, sizeof self - 1) <= 0) return HEDRA_FAKE_CUDA_LIBRARY;
    return (std::filesystem::path(self).parent_path() /
            std::filesystem::path(HEDRA_FAKE_CUDA_LIBRARY).filename())
        .string();
}

} // namespace hedra::test
