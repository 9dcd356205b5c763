// A compiled kernel module: the handle that keeps generated machine code alive and maps symbol
// names to addresses. Whoever compiled it (the in-process JIT or an external compiler with
// dlopen) supplies the resolver and the owner whose destruction unloads the code.
#pragma once

#include <functional>
#include <memory>
#include <string>

namespace hedra::backend {

class CompiledModule {
public:
    using Resolver = std::function<void*(const std::string& name)>; // nullptr when absent

    CompiledModule(std::string key, std::string source, Resolver resolve,
                   std::shared_ptr<void> owner, bool from_cache);

    // The address of an `extern "C"` symbol; throws hedra::Error if the module has none.
    void* symbol(const std::string& name) const;

    // The symbol as a typed function pointer, e.g. function<float(const float*, int)>("sum").
    template <typename Signature>
    Signature* function(const std::string& name) const {
        return reinterpret_cast<Signature*>(symbol(name));
    }

    // The cache key (a hex digest of source, flags, host CPU and versions).
    const std::string& key() const { return key_; }
    const std::string& source() const { return source_; }
    // True when the machine code came from the object cache instead of a compiler run.
    bool from_cache() const { return from_cache_; }

private:
    std::string key_;
    std::string source_;
    Resolver resolve_;
    std::shared_ptr<void> owner_;
    bool from_cache_;
};

// Writes `source` to `<directory>/hedra_kernel_<key>.cpp` (falling back to the temp directory)
// and returns the path, so error messages can point at the code that failed.
std::string dump_kernel_source(const std::string& directory, const std::string& key,
                               const std::string& source);

} // namespace hedra::backend
