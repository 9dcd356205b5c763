// The built-in backends of the CUDA-only build (standalone/CMakeLists.txt): the reference
// interpreter (the default, and the tests' oracle) and cuda. The full build registers them in
// backends/builtin_backends.cpp, together with openmp, which this build lacks (no LLVM).
#include "hedra.hpp"

#include "backends/cuda/cuda_backend.hpp"
#include "backends/reference/reference_backend.hpp"

namespace hedra::detail {

bool register_builtin_backends() {
    static const bool registered = [] {
        register_backend("reference", [] { return std::make_shared<backend::ReferenceBackend>(); });
        register_backend("cuda", [] { return std::make_shared<backend::CudaBackend>(); });
        return true;
    }();
    return registered;
}

} // namespace hedra::detail
