#include "core/error.hpp"

#include <string_view>

namespace hedra {

std::string location_string(const SourceLocation& loc) {
    std::string_view file = loc.file_name();
    if (auto slash = file.find_last_of('/'); slash != std::string_view::npos)
        file = file.substr(slash + 1);
    if (file.empty()) return "<unknown>";
    return std::string(file) + ":" + std::to_string(loc.line());
}

void internal_error(const std::string& what, SourceLocation loc) {
    throw Error("internal error in hedra (please report): " + what + " at " + location_string(loc));
}

} // namespace hedra
