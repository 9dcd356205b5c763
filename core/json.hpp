// hedra's JSON files (graph files, saved schedules, tool output) are nlohmann's ordered_json,
// which keeps members in insertion order so that output is byte-identical across runs. This adds
// what hedra needs on top: errors that name the source, line and column (of a syntax error, or
// of any parsed value a reader rejects), a writer that keeps short containers on one line, and
// base64.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace hedra::json {

using Value = nlohmann::ordered_json;

// A parsed document and where each of its values starts.
class Document {
public:
    Value root;
    // "source:line:column" (1-based) where `v`, a value inside `root`, starts; "source" for any
    // other value.
    std::string where(const Value& v) const;

private:
    friend Document parse(std::string_view text, const std::string& source);
    std::string source_;
    std::vector<std::pair<int, int>> starts_; // line and column of each value, in document order
};

// Parses one JSON document; malformed text, a member twice in one object and nesting deeper
// than 256 levels throw hedra::Error ("model.json:3:14: syntax error ... expected ':'").
Document parse(std::string_view text, const std::string& source);

// The member `key` of `obj`, or nullptr (also when `obj` is not an object).
const Value* find(const Value& obj, std::string_view key);
// A number with an integral value that fits: `out` is set and true returned ("3.0" counts).
bool to_int64(const Value& v, std::int64_t& out);

// Writes `v` with two-space indentation; an array or object stays on one line when it fits in
// `width` columns or is nested `compact_depth` levels deep or more (graph files: one node per
// line). Floating-point numbers are written as the shortest text that reads back exactly
// (std::to_chars: 2.0 is "2"); a non-finite one throws hedra::Error. Ends without a newline.
std::string write(const Value& v, int width = 100, int compact_depth = 1 << 30);

// Standard base64 (RFC 4648, with padding).
std::string base64_encode(const void* data, std::size_t size);
// Throws hedra::Error("... not valid base64 ...") naming `what`.
std::vector<unsigned char> base64_decode(std::string_view text, const std::string& what);

} // namespace hedra::json
