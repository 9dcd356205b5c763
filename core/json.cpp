// The JSON value, the writer (compact where it fits, indented otherwise) and base64 (see
// json.hpp); the reader is json_parse.cpp.
#include "core/json.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>

#include "core/error.hpp"

namespace hedra::json {
namespace {

void write_string(const std::string& s, std::string& out) {
    out += '"';
    for (char ch : s) {
        unsigned char c = static_cast<unsigned char>(ch);
        switch (ch) {
        case '"':
            out += "\\\"";
            break;
        case '\\':
            out += "\\\\";
            break;
        case '\n':
            out += "\\n";
            break;
        case '\t':
            out += "\\t";
            break;
        case '\r':
            out += "\\r";
            break;
        default:
            if (c < 0x20) {
                char buf[8];
                std::snprintf(buf, sizeof buf, "\\u%04x", c);
                out += buf;
            } else {
                out += ch;
            }
        }
    }
    out += '"';
}

void write_compact(const Value& v, std::string& out) {
    switch (v.kind()) {
    case Value::Kind::Null:
        out += "null";
        return;
    case Value::Kind::Bool:
        out += v.as_bool() ? "true" : "false";
        return;
    case Value::Kind::Number:
        out += v.text();
        return;
    case Value::Kind::String:
        write_string(v.text(), out);
        return;
    case Value::Kind::Array:
        out += '[';
        for (std::size_t i = 0; i < v.items().size(); ++i) {
            if (i) out += ", ";
            write_compact(v.items()[i], out);
        }
        out += ']';
        return;
    case Value::Kind::Object:
        out += '{';
        for (std::size_t i = 0; i < v.members().size(); ++i) {
            if (i) out += ", ";
            write_string(v.members()[i].first, out);
            out += ": ";
            write_compact(v.members()[i].second, out);
        }
        out += '}';
        return;
    }
}

// `used`: the columns already taken on the current line (indentation and a member name).
void write_pretty(const Value& v, int indent, int used, int width, int compact_depth,
                  std::string& out) {
    std::string compact;
    write_compact(v, compact);
    bool container = v.is_array() || v.is_object();
    if (!container || static_cast<int>(compact.size()) + used <= width ||
        indent / 2 >= compact_depth) {
        out += compact;
        return;
    }
    bool array = v.is_array();
    std::size_t n = array ? v.items().size() : v.members().size();
    std::string pad(static_cast<std::size_t>(indent + 2), ' ');
    out += array ? "[\n" : "{\n";
    for (std::size_t i = 0; i < n; ++i) {
        out += pad;
        int taken = indent + 2;
        if (!array) {
            std::string key;
            write_string(v.members()[i].first, key);
            out += key + ": ";
            taken += static_cast<int>(key.size()) + 2;
        }
        write_pretty(array ? v.items()[i] : v.members()[i].second, indent + 2, taken + 1, width,
                     compact_depth, out);
        out += i + 1 < n ? ",\n" : "\n";
    }
    out += std::string(static_cast<std::size_t>(indent), ' ') + (array ? "]" : "}");
}

} // namespace

const char* kind_name(Value::Kind k) {
    switch (k) {
    case Value::Kind::Null:
        return "null";
    case Value::Kind::Bool:
        return "boolean";
    case Value::Kind::Number:
        return "number";
    case Value::Kind::String:
        return "string";
    case Value::Kind::Array:
        return "array";
    case Value::Kind::Object:
        return "object";
    }
    return "?";
}

Value Value::boolean(bool b) {
    Value v;
    v.kind_ = Kind::Bool;
    v.bool_ = b;
    return v;
}

Value Value::number(std::int64_t n) {
    Value v;
    v.kind_ = Kind::Number;
    v.text_ = std::to_string(n);
    return v;
}

Value Value::number(double d) {
    if (!std::isfinite(d))
        throw Error("json: cannot write the non-finite number " + std::to_string(d));
    char buf[64];
    auto r = std::to_chars(buf, buf + sizeof buf, d);
    Value v;
    v.kind_ = Kind::Number;
    v.text_.assign(buf, r.ptr);
    return v;
}

Value Value::number_text(std::string digits) {
    Value v;
    v.kind_ = Kind::Number;
    v.text_ = std::move(digits);
    return v;
}

Value Value::string(std::string s) {
    Value v;
    v.kind_ = Kind::String;
    v.text_ = std::move(s);
    return v;
}

Value Value::array(std::vector<Value> items) {
    Value v;
    v.kind_ = Kind::Array;
    v.items_ = std::move(items);
    return v;
}

Value Value::object() {
    Value v;
    v.kind_ = Kind::Object;
    return v;
}

bool Value::to_int64(std::int64_t& out) const {
    if (kind_ != Kind::Number) return false;
    const char* first = text_.data();
    const char* last = first + text_.size();
    auto r = std::from_chars(first, last, out);
    if (r.ec == std::errc() && r.ptr == last) return true;
    double d = to_double(); // "2.0", "1e3"
    if (!(d >= -9.2233720368547758e18 && d < 9.2233720368547758e18) || d != std::floor(d))
        return false;
    out = static_cast<std::int64_t>(d);
    return true;
}

double Value::to_double() const {
    double d = 0.0;
    std::from_chars(text_.data(), text_.data() + text_.size(), d);
    return d;
}

Value& Value::push(Value v) {
    items_.push_back(std::move(v));
    return items_.back();
}

Value& Value::set(const std::string& key, Value v) {
    for (auto& m : members_)
        if (m.first == key) return m.second = std::move(v);
    members_.emplace_back(key, std::move(v));
    return members_.back().second;
}

const Value* Value::find(std::string_view key) const {
    for (const auto& m : members_)
        if (m.first == key) return &m.second;
    return nullptr;
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
