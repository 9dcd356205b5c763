// shared_kernels: kernels that differ only in their buffers print once. The layers of a
// transformer, a forward and its repeated backward pieces are the same loop nests over other
// buffers; printed apart, each costs the compiler as much as the first (a 4-layer GPT step: 167
// kernels, 5.7 MB of C++, 80 s of clang). A kernel's text names its buffers (b12) and itself
// (k59, k59_p0, hd_k59_s3); its canonical text names the buffers by position among its
// parameters (a0, a1, ...) and itself by a fixed token, so two kernels with the same canonical
// text are one function, called with each kernel's own buffers.
#pragma once

#include <string>
#include <vector>

namespace hedra::backend {

// `text` with every identifier `b<digits>` that is buffers[i] replaced by "a<i>", and the
// identifier `kernel` (alone or as the prefix of `kernel_...` or `hd_kernel_...`) replaced by
// `token`. Identifiers are maximal runs of [A-Za-z0-9_] that start with a letter or '_'.
std::string canonical_kernel_text(const std::string& text, const std::string& kernel,
                                  const std::vector<std::string>& buffers,
                                  const std::string& token);

} // namespace hedra::backend
