// Registers the backends built into the library. hedra.hpp calls this from an inline variable,
// so every program that includes it links the backends; the static makes it run once.
#include "hedra.hpp"

#include "backends/c/c_backend.hpp"
#include "backends/openmp/openmp_backend.hpp"
#include "backends/reference/reference_backend.hpp"
#ifdef HEDRA_HAVE_CUDA
#include "backends/cuda/cuda_backend.hpp"
#endif

namespace hedra::detail {

bool register_builtin_backends() {
    static const bool registered = [] {
        register_backend("reference", [] { return std::make_shared<backend::ReferenceBackend>(); });
        register_backend("openmp", [] { return std::make_shared<backend::OpenMPBackend>(); });
        register_backend("c", [] { return std::make_shared<backend::CBackend>(); });
#ifdef HEDRA_HAVE_CUDA
        // Registered wherever it is built; without a device it throws "no CUDA device".
        register_backend("cuda", [] { return std::make_shared<backend::CudaBackend>(); });
#endif
        // Generated code is the default; the interpreter stays the oracle.
        set_builtin_default_backend("openmp");
        return true;
    }();
    return registered;
}

} // namespace hedra::detail
