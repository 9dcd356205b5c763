// hedra::SourceLocation: std::source_location where the compiler provides it, else a minimal
// stand-in with the same members built from __builtin_FILE/LINE/FUNCTION. Clang 14 with
// libstdc++ 12 lacks __builtin_source_location, so <source_location> declares nothing there;
// the stand-in lets hedra build with clang 14 (the libFuzzer target, tests/fuzz/libfuzzer/).
#pragma once

#include <cstdint>
#include <source_location>

namespace hedra {

#if defined(__cpp_lib_source_location)
using SourceLocation = std::source_location;
#else
class SourceLocation {
public:
    constexpr SourceLocation() noexcept = default;

    // As a default argument, the builtins give the caller's site (also when nested).
    static constexpr SourceLocation current(const char* file = __builtin_FILE(),
                                            const char* function = __builtin_FUNCTION(),
                                            std::uint_least32_t line = __builtin_LINE()) noexcept {
        SourceLocation loc;
        loc.file_ = file;
        loc.function_ = function;
        loc.line_ = line;
        return loc;
    }

    constexpr std::uint_least32_t line() const noexcept { return line_; }
    constexpr std::uint_least32_t column() const noexcept { return 0; }
    constexpr const char* file_name() const noexcept { return file_; }
    constexpr const char* function_name() const noexcept { return function_; }

private:
    const char* file_ = "";
    const char* function_ = "";
    std::uint_least32_t line_ = 0;
};
#endif

} // namespace hedra
