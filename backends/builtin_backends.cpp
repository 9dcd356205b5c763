// Registers the backends built into the library. hedra.hpp calls this from an inline variable,
// so every program that includes it links the backends; the static makes it run once.
#include "hedra.hpp"

#include "backends/reference/reference_backend.hpp"

namespace hedra::detail {

bool register_builtin_backends() {
    static const bool registered = [] {
        register_backend("reference", [] { return std::make_shared<backend::ReferenceBackend>(); });
        return true;
    }();
    return registered;
}

} // namespace hedra::detail
