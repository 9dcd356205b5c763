// generator: C++ functions that build a program, registered by name with HEDRA_AOT_GENERATOR
// (as Halide's generators are). An executable of generators linked with hedra::aot_main is
// hedra-aot with those names known: `my_generators --generator mlp_step -o DIR` writes the
// library (hedra_add_aot_library in CMake runs it at build time; docs/aot.md).
//
//   hedra::aot::Generated scale(const hedra::aot::GeneratorParams& params) {
//       auto x = hedra::placeholder(hedra::Shape{hedra::dynamic("n", params.integer("max", 1024))},
//                                   hedra::DType::F32, "x");
//       return {{x}, {x * 2.0f}, {"y"}};
//   }
//   HEDRA_AOT_GENERATOR(scale)
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/array.hpp"

namespace hedra::aot {

// What a generator returns: the placeholders in argument order, the outputs, and optionally
// the outputs' names (one per output).
struct Generated {
    std::vector<Array> inputs;
    std::vector<Array> outputs;
    std::vector<std::string> output_names;
};

// The generator's parameters, `--param key=value` on the command line (PARAMS in CMake).
class GeneratorParams {
public:
    GeneratorParams() = default;
    explicit GeneratorParams(std::map<std::string, std::string> values)
        : values_(std::move(values)) {}
    // The value of `key`, or `fallback` when it is not given; throws hedra::Error naming the key
    // when the value is no integer.
    std::int64_t integer(const std::string& key, std::int64_t fallback) const;
    std::string text(const std::string& key, const std::string& fallback) const;
    const std::map<std::string, std::string>& values() const { return values_; }

private:
    std::map<std::string, std::string> values_;
};

using GeneratorFunction = Generated (*)(const GeneratorParams&);

// The registered generators by name.
const std::map<std::string, GeneratorFunction>& generators();

struct GeneratorRegistration {
    GeneratorRegistration(const char* name, GeneratorFunction function);
};

} // namespace hedra::aot

#define HEDRA_AOT_GENERATOR(function)                                                              \
    static const ::hedra::aot::GeneratorRegistration hedra_aot_generator_##function(#function,     \
                                                                                    &function);
