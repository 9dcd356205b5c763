// The backend registry: backends register a factory under a name; the default is chosen by
// set_default_backend, else $HEDRA_BACKEND, else the built-in default ("reference" until a
// faster backend claims it). One instance per name is created on first use and reused, so a
// backend's caches live as long as the program.
#include "core/backend.hpp"

#include <cstdio>
#include <cstdlib>
#include <map>

namespace hedra {
namespace {

struct Registry {
    std::mutex mutex;
    std::map<std::string, BackendFactory> factories;
    std::map<std::string, std::shared_ptr<Backend>> instances;
    std::string chosen_default;
    std::string builtin_default = "reference";
};

Registry& registry() {
    static Registry* r = new Registry; // never destroyed: backends may be used at exit
    return *r;
}

} // namespace

std::string ProgramMemory::to_string() const {
    auto mb = [](std::size_t b) {
        char s[32];
        std::snprintf(s, sizeof s, "%.1f MB", static_cast<double>(b) / 1e6);
        return std::string(s);
    };
    std::string s = "arena " + mb(arena) + " (" + std::to_string(temporary_count) +
                    " temporaries in " + std::to_string(slots) + " slots; " + mb(temporaries) +
                    " unshared), results " + mb(results) + ", inputs " + mb(inputs);
    if (row_local > 0) s += ", " + std::to_string(row_local) + " row-local";
    if (donated > 0) s += ", " + mb(donated) + " donated";
    return s;
}

std::vector<HostArray> Program::run_notifying(const std::vector<HostArray>& inputs,
                                              const OutputHook& hook) {
    std::vector<HostArray> results = run(inputs);
    for (std::size_t i = 0; i < results.size(); ++i)
        if (hook.ready) hook.ready(hook.context, static_cast<int>(i), results[i].raw_mutable());
    return results;
}

std::vector<HostArray> Backend::evaluate(const std::vector<NodePtr>& outputs,
                                         const CompileOptions& options) {
    return compile(outputs, {}, options)->run({});
}

void register_backend(const std::string& name, BackendFactory factory) {
    if (name.empty()) throw Error("register_backend: the backend name is empty");
    if (!factory) throw Error("register_backend: no factory given for backend '" + name + "'");
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    r.factories[name] = std::move(factory);
    r.instances.erase(name);
}

std::vector<std::string> backend_names() {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    std::vector<std::string> names;
    for (const auto& [name, factory] : r.factories)
        names.push_back(name);
    return names;
}

std::shared_ptr<Backend> get_backend(const std::string& name) {
    Registry& r = registry();
    BackendFactory factory;
    {
        std::lock_guard<std::mutex> lock(r.mutex);
        if (auto it = r.instances.find(name); it != r.instances.end()) return it->second;
        auto it = r.factories.find(name);
        if (it == r.factories.end()) {
            std::string known;
            for (const auto& [n, f] : r.factories)
                known += (known.empty() ? "" : ", ") + n;
            throw Error("unknown backend '" + name + "'; registered backends: " +
                        (known.empty() ? "none (include hedra.hpp or link hedra::hedra)" : known));
        }
        factory = it->second;
    }
    // Created outside the lock: a factory may itself look up other backends.
    std::shared_ptr<Backend> backend = factory();
    if (!backend) throw Error("backend '" + name + "': its factory returned no backend");
    std::lock_guard<std::mutex> lock(r.mutex);
    return r.instances.emplace(name, std::move(backend)).first->second;
}

void set_default_backend(const std::string& name) {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    r.chosen_default = name;
}

std::string default_backend_name() {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    if (!r.chosen_default.empty()) return r.chosen_default;
    if (const char* env = std::getenv("HEDRA_BACKEND"); env && *env) return env;
    return r.builtin_default;
}

std::shared_ptr<Backend> default_backend() {
    return get_backend(default_backend_name());
}

void set_builtin_default_backend(const std::string& name) {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    r.builtin_default = name;
}

} // namespace hedra
