// The text of core/f32_math.hpp, which code generators paste into every program's prelude so
// that generated kernels compute f32 exp, log, tanh and sigmoid as the interpreter does.
#pragma once

namespace hedra {

const char* f32_math_source();

} // namespace hedra
