// The generator registry (generator.hpp).
#include "aot/generator.hpp"

#include <charconv>

#include "core/error.hpp"

namespace hedra::aot {
namespace {

std::map<std::string, GeneratorFunction>& registry() {
    static std::map<std::string, GeneratorFunction> r;
    return r;
}

} // namespace

std::int64_t GeneratorParams::integer(const std::string& key, std::int64_t fallback) const {
    auto it = values_.find(key);
    if (it == values_.end()) return fallback;
    std::int64_t v = 0;
    const std::string& s = it->second;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size())
        throw Error("generator parameter '" + key + "' must be an integer, got '" + s + "'");
    return v;
}

std::string GeneratorParams::text(const std::string& key, const std::string& fallback) const {
    auto it = values_.find(key);
    return it == values_.end() ? fallback : it->second;
}

const std::map<std::string, GeneratorFunction>& generators() {
    return registry();
}

GeneratorRegistration::GeneratorRegistration(const char* name, GeneratorFunction function) {
    registry()[name] = function;
}

} // namespace hedra::aot
