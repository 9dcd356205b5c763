// CompiledModule: symbol lookup with an actionable error, and dumping of a kernel's source.
#include "backends/common/compiled_module.hpp"

#include "core/error.hpp"

#include <filesystem>
#include <fstream>

namespace hedra::backend {

CompiledModule::CompiledModule(std::string key, std::string source, Resolver resolve,
                               std::shared_ptr<void> owner, bool from_cache)
    : key_(std::move(key)), source_(std::move(source)), resolve_(std::move(resolve)),
      owner_(std::move(owner)), from_cache_(from_cache) {}

void* CompiledModule::symbol(const std::string& name) const {
    if (void* address = resolve_(name)) return address;
    std::string path = dump_kernel_source("", key_, source_);
    throw Error("no symbol '" + name + "' in compiled kernel " + key_.substr(0, 16) +
                " (is it declared extern \"C\"?); source saved to " + path);
}

std::string dump_kernel_source(const std::string& directory, const std::string& key,
                               const std::string& source) {
    namespace fs = std::filesystem;
    std::string name = "hedra_kernel_" + key.substr(0, 16) + ".cpp";
    std::error_code ec;
    for (fs::path dir : {fs::path(directory), fs::temp_directory_path(ec)}) {
        if (dir.empty()) continue;
        fs::create_directories(dir, ec);
        fs::path path = dir / name;
        std::ofstream out(path, std::ios::binary | std::ios::trunc);
        out << source;
        out.close();
        if (out) return path.string();
    }
    return "<could not save the source>";
}

} // namespace hedra::backend
