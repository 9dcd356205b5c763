// The writer (compact where it fits, indented otherwise), member lookup, integers and base64
// (see json.hpp); the reader is json_parse.cpp.
#include "core/json.hpp"

#include <charconv>
#include <cmath>
#include <limits>

#include "core/error.hpp"

namespace hedra::json {
namespace {

// nlohmann's escaping; bytes that are not UTF-8 become U+FFFD rather than an exception.
std::string quoted(const std::string& s) {
    return Value(s).dump(-1, ' ', false, Value::error_handler_t::replace);
}

void write_compact(const Value& v, std::string& out) {
    if (v.is_number_float()) {
        double d = v.get<double>();
        if (!std::isfinite(d))
            throw Error("json: cannot write the non-finite number " + std::to_string(d));
        char buf[64];
        out.append(buf, std::to_chars(buf, buf + sizeof buf, d).ptr);
    } else if (v.is_array()) {
        out += '[';
        for (std::size_t i = 0; i < v.size(); ++i) {
            if (i) out += ", ";
            write_compact(v[i], out);
        }
        out += ']';
    } else if (v.is_object()) {
        out += '{';
        for (auto it = v.begin(); it != v.end(); ++it) {
            if (it != v.begin()) out += ", ";
            out += quoted(it.key()) + ": ";
            write_compact(it.value(), out);
        }
        out += '}';
    } else {
        out += v.dump(-1, ' ', false, Value::error_handler_t::replace);
    }
}

// `used`: the columns already taken on the current line (indentation and a member name).
void write_pretty(const Value& v, int indent, int used, int width, int compact_depth,
                  std::string& out) {
    std::string compact;
    write_compact(v, compact);
    if (!v.is_structured() || static_cast<int>(compact.size()) + used <= width ||
        indent / 2 >= compact_depth) {
        out += compact;
        return;
    }
    std::string pad(static_cast<std::size_t>(indent + 2), ' ');
    out += v.is_array() ? "[\n" : "{\n";
    std::size_t i = 0;
    for (auto it = v.begin(); it != v.end(); ++it) {
        out += pad;
        int taken = indent + 2;
        if (v.is_object()) {
            std::string key = quoted(it.key());
            out += key + ": ";
            taken += static_cast<int>(key.size()) + 2;
        }
        write_pretty(it.value(), indent + 2, taken + 1, width, compact_depth, out);
        out += ++i < v.size() ? ",\n" : "\n";
    }
    out += std::string(static_cast<std::size_t>(indent), ' ') + (v.is_array() ? "]" : "}");
}

} // namespace

const Value* find(const Value& obj, std::string_view key) {
    if (!obj.is_object()) return nullptr;
    auto it = obj.find(key);
    return it == obj.end() ? nullptr : &*it;
}

bool to_int64(const Value& v, std::int64_t& out) {
    if (v.is_number_unsigned()) {
        auto u = v.get<std::uint64_t>();
        if (u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) return false;
        out = static_cast<std::int64_t>(u);
        return true;
    }
    if (v.is_number_integer()) {
        out = v.get<std::int64_t>();
        return true;
    }
    if (!v.is_number_float()) return false;
    double d = v.get<double>(); // "2.0", "1e3"
    if (!(d >= -9.2233720368547758e18 && d < 9.2233720368547758e18) || d != std::floor(d))
        return false;
    out = static_cast<std::int64_t>(d);
    return true;
}

std::string write(const Value& v, int width, int compact_depth) {
    std::string out;
    write_pretty(v, 0, 0, width, compact_depth, out);
    return out;
}

std::string base64_encode(const void* data, std::size_t size) {
    static const char* alphabet =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const auto* p = static_cast<const unsigned char*>(data);
    std::string out;
    out.reserve((size + 2) / 3 * 4);
    for (std::size_t i = 0; i < size; i += 3) {
        unsigned v = p[i] << 16;
        if (i + 1 < size) v |= p[i + 1] << 8;
        if (i + 2 < size) v |= p[i + 2];
        out += alphabet[(v >> 18) & 63];
        out += alphabet[(v >> 12) & 63];
        out += i + 1 < size ? alphabet[(v >> 6) & 63] : '=';
        out += i + 2 < size ? alphabet[v & 63] : '=';
    }
    return out;
}

std::vector<unsigned char> base64_decode(std::string_view text, const std::string& what) {
    auto digit = [](char c) -> int {
        if (c >= 'A' && c <= 'Z') return c - 'A';
        if (c >= 'a' && c <= 'z') return c - 'a' + 26;
        if (c >= '0' && c <= '9') return c - '0' + 52;
        if (c == '+') return 62;
        if (c == '/') return 63;
        return -1;
    };
    if (text.size() % 4 != 0)
        throw Error(what + " is not valid base64: its length " + std::to_string(text.size()) +
                    " is not a multiple of 4");
    std::vector<unsigned char> out;
    out.reserve(text.size() / 4 * 3);
    for (std::size_t i = 0; i < text.size(); i += 4) {
        int pad = 0;
        unsigned v = 0;
        for (std::size_t j = 0; j < 4; ++j) {
            char c = text[i + j];
            bool last_group = i + 4 == text.size();
            if (c == '=' && last_group && j >= 2 && (j == 3 || text[i + 3] == '=')) {
                ++pad;
                v <<= 6;
                continue;
            }
            int d = digit(c);
            if (d < 0 || pad > 0)
                throw Error(what + " is not valid base64: unexpected character at offset " +
                            std::to_string(i + j));
            v = (v << 6) | static_cast<unsigned>(d);
        }
        out.push_back(static_cast<unsigned char>(v >> 16));
        if (pad < 2) out.push_back(static_cast<unsigned char>(v >> 8));
        if (pad < 1) out.push_back(static_cast<unsigned char>(v));
    }
    return out;
}

} // namespace hedra::json
