// Canonical kernel texts (see shared_kernels.hpp).
#include "backends/common/shared_kernels.hpp"

#include <unordered_map>

namespace hedra::backend {
namespace {

bool word_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

bool digit(char c) {
    return c >= '0' && c <= '9';
}

} // namespace

std::string canonical_kernel_text(const std::string& text, const std::string& kernel,
                                  const std::vector<std::string>& buffers,
                                  const std::string& token) {
    std::unordered_map<std::string, std::string> renamed;
    for (std::size_t i = 0; i < buffers.size(); ++i)
        renamed.emplace(buffers[i], "a" + std::to_string(i));
    const std::string hd_kernel = "hd_" + kernel;
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size();) {
        char c = text[i];
        if (!word_char(c)) {
            out += c;
            ++i;
            continue;
        }
        std::size_t j = i;
        while (j < text.size() && word_char(text[j]))
            ++j;
        // A number (or a hex float's digits) is no identifier.
        if (digit(c) || (i > 0 && text[i - 1] == '.')) {
            out.append(text, i, j - i);
            i = j;
            continue;
        }
        std::string_view id(text.data() + i, j - i);
        auto starts = [&](const std::string& prefix) {
            return id.size() >= prefix.size() && id.compare(0, prefix.size(), prefix) == 0 &&
                   (id.size() == prefix.size() || id[prefix.size()] == '_');
        };
        if (id.size() > 1 && id[0] == 'b') {
            auto it = renamed.find(std::string(id));
            if (it != renamed.end()) {
                out += it->second;
                i = j;
                continue;
            }
        }
        if (starts(kernel)) {
            out += token;
            out.append(id.substr(kernel.size()));
        } else if (starts(hd_kernel)) {
            out += "hd_" + token;
            out.append(id.substr(hd_kernel.size()));
        } else {
            out.append(id);
        }
        i = j;
    }
    return out;
}

} // namespace hedra::backend
