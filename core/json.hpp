// A small JSON reader and writer for hedra's own files (graph files, saved schedules, tool
// output). Objects keep their members in insertion order and numbers keep their source text, so
// a value read and written again is unchanged and output is byte-identical across runs.
// Parse errors throw hedra::Error naming the source, the line and column, and what is wrong.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace hedra::json {

class Value {
public:
    enum class Kind : std::uint8_t { Null, Bool, Number, String, Array, Object };

    Value() = default; // null
    static Value boolean(bool b);
    static Value number(std::int64_t n);
    static Value number(double d); // finite; the shortest text that reads back exactly
    // A number written as `digits` (the caller guarantees JSON number syntax).
    static Value number_text(std::string digits);
    static Value string(std::string s);
    static Value array(std::vector<Value> items = {});
    static Value object();

    Kind kind() const { return kind_; }
    bool is_null() const { return kind_ == Kind::Null; }
    bool is_bool() const { return kind_ == Kind::Bool; }
    bool is_number() const { return kind_ == Kind::Number; }
    bool is_string() const { return kind_ == Kind::String; }
    bool is_array() const { return kind_ == Kind::Array; }
    bool is_object() const { return kind_ == Kind::Object; }

    // Unchecked in kind (callers check first): the value as each type.
    bool as_bool() const { return bool_; }
    const std::string& text() const { return text_; } // String: the text; Number: its digits
    const std::vector<Value>& items() const { return items_; }
    const std::vector<std::pair<std::string, Value>>& members() const { return members_; }

    // Number conversions; nothing when the text is not an exact integer in range.
    bool to_int64(std::int64_t& out) const;
    double to_double() const;

    // Array: append. Object: set a member (replacing one of that key, else appending).
    Value& push(Value v);
    Value& set(const std::string& key, Value v);
    // Object member or nullptr.
    const Value* find(std::string_view key) const;

    // Where the value started in the parsed text (1-based; 0 for a value built in code).
    int line = 0;
    int column = 0;

private:
    Kind kind_ = Kind::Null;
    bool bool_ = false;
    std::string text_;
    std::vector<Value> items_;
    std::vector<std::pair<std::string, Value>> members_;
};

const char* kind_name(Value::Kind k); // "null", "boolean", "number", ...

// Parses one JSON document. `source` names it in errors ("model.json:3:14: expected ','").
Value parse(std::string_view text, const std::string& source);

// Writes `v` with two-space indentation; an array or object stays on one line when it fits in
// `width` columns or is nested `compact_depth` levels deep or more (graph files: one node per
// line). Ends without a newline.
std::string write(const Value& v, int width = 100, int compact_depth = 1 << 30);

// Standard base64 (RFC 4648, with padding).
std::string base64_encode(const void* data, std::size_t size);
// Throws hedra::Error("... not valid base64 ...") naming `what`.
std::vector<unsigned char> base64_decode(std::string_view text, const std::string& what);

} // namespace hedra::json
