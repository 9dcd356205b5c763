// The built-in example programs of hedra-dump (matmul, conv2d, jacobi, softmax, mlp_step):
// small, fixed-size graphs over placeholders, the same in every run, so their dumps can be
// golden-tested (tests/tools/golden/) and walked through in docs/dumps.md.
#pragma once

#include <string>
#include <vector>

#include "core/array.hpp"

namespace hedra::tools {

struct ExampleGraph {
    std::vector<Array> outputs;
    std::vector<Array> placeholders; // the program's inputs, in order
};

struct Example {
    const char* name;
    const char* description;
    ExampleGraph (*build)();
};

const std::vector<Example>& examples();
// The example called `name`, or nullptr.
const Example* find_example(const std::string& name);
// "matmul, conv2d, jacobi, softmax, mlp_step"
std::string example_names();

} // namespace hedra::tools
