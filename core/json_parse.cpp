// The JSON reader: recursive descent with line/column tracking and a nesting limit (see
// json.hpp). Numbers keep their source text; errors name the source, line and column.
#include "core/json.hpp"

#include <cstdio>

#include "core/error.hpp"

namespace hedra::json {
namespace {

constexpr int kMaxDepth = 256;

class Parser {
public:
    Parser(std::string_view text, const std::string& source) : text_(text), source_(source) {}

    Value document() {
        skip_space();
        Value v = value(0);
        skip_space();
        if (pos_ < text_.size()) fail("unexpected " + describe_here() + " after the document");
        return v;
    }

private:
    [[noreturn]] void fail(const std::string& what) const {
        throw Error(source_ + ":" + std::to_string(line_) + ":" + std::to_string(column()) + ": " +
                    what);
    }
    int column() const { return static_cast<int>(pos_ - line_start_) + 1; }

    std::string describe_here() const {
        if (pos_ >= text_.size()) return "end of file";
        unsigned char c = static_cast<unsigned char>(text_[pos_]);
        if (c >= 0x20 && c < 0x7f) return std::string("'") + static_cast<char>(c) + "'";
        char buf[16];
        std::snprintf(buf, sizeof buf, "byte 0x%02x", c);
        return buf;
    }

    void advance() {
        if (text_[pos_] == '\n') {
            ++line_;
            line_start_ = pos_ + 1;
        }
        ++pos_;
    }

    void skip_space() {
        while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                       text_[pos_] == '\n' || text_[pos_] == '\r'))
            advance();
    }

    void expect(char c, const char* context) {
        skip_space();
        if (pos_ >= text_.size() || text_[pos_] != c)
            fail(std::string("expected '") + c + "' " + context + ", found " + describe_here());
        advance();
    }

    Value value(int depth) {
        if (depth > kMaxDepth) fail("nesting deeper than " + std::to_string(kMaxDepth) + " levels");
        skip_space();
        int line = line_, col = column();
        Value v;
        if (pos_ >= text_.size()) fail("expected a value, found end of file");
        char c = text_[pos_];
        if (c == '{')
            v = object(depth);
        else if (c == '[')
            v = array(depth);
        else if (c == '"')
            v = Value::string(string());
        else if (c == '-' || (c >= '0' && c <= '9'))
            v = number();
        else if (word("true"))
            v = Value::boolean(true);
        else if (word("false"))
            v = Value::boolean(false);
        else if (word("null"))
            v = Value();
        else
            fail("expected a value, found " + describe_here());
        v.line = line;
        v.column = col;
        return v;
    }

    bool word(std::string_view w) {
        if (text_.substr(pos_, w.size()) != w) return false;
        pos_ += w.size();
        return true;
    }

    Value object(int depth) {
        advance(); // {
        Value v = Value::object();
        skip_space();
        if (pos_ < text_.size() && text_[pos_] == '}') {
            advance();
            return v;
        }
        while (true) {
            skip_space();
            if (pos_ >= text_.size() || text_[pos_] != '"')
                fail("expected a member name in quotes, found " + describe_here());
            int line = line_, col = column();
            std::string key = string();
            if (v.find(key))
                throw Error(source_ + ":" + std::to_string(line) + ":" + std::to_string(col) +
                            ": member '" + key + "' appears twice in one object");
            expect(':', "after a member name");
            v.set(key, value(depth + 1));
            skip_space();
            if (pos_ < text_.size() && text_[pos_] == ',') {
                advance();
                continue;
            }
            expect('}', "or ',' in an object");
            return v;
        }
    }

    Value array(int depth) {
        advance(); // [
        Value v = Value::array();
        skip_space();
        if (pos_ < text_.size() && text_[pos_] == ']') {
            advance();
            return v;
        }
        while (true) {
            v.push(value(depth + 1));
            skip_space();
            if (pos_ < text_.size() && text_[pos_] == ',') {
                advance();
                continue;
            }
            expect(']', "or ',' in an array");
            return v;
        }
    }

    Value number() {
        std::size_t start = pos_;
        auto digits = [&] {
            std::size_t from = pos_;
            while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9')
                ++pos_;
            return pos_ > from;
        };
        if (text_[pos_] == '-') ++pos_;
        if (pos_ < text_.size() && text_[pos_] == '0')
            ++pos_;
        else if (!digits())
            fail("expected digits in a number, found " + describe_here());
        if (pos_ < text_.size() && text_[pos_] == '.') {
            ++pos_;
            if (!digits()) fail("expected digits after '.' in a number, found " + describe_here());
        }
        if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
            ++pos_;
            if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) ++pos_;
            if (!digits()) fail("expected digits in an exponent, found " + describe_here());
        }
        return Value::number_text(std::string(text_.substr(start, pos_ - start)));
    }

    unsigned hex4() {
        unsigned u = 0;
        for (int i = 0; i < 4; ++i) {
            if (pos_ >= text_.size()) fail("unterminated \\u escape");
            char c = text_[pos_];
            int d = c >= '0' && c <= '9'   ? c - '0'
                    : c >= 'a' && c <= 'f' ? c - 'a' + 10
                    : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                           : -1;
            if (d < 0) fail("expected a hex digit in a \\u escape, found " + describe_here());
            u = u * 16 + static_cast<unsigned>(d);
            ++pos_;
        }
        return u;
    }

    static void append_utf8(std::string& s, unsigned cp) {
        if (cp < 0x80) {
            s += static_cast<char>(cp);
        } else if (cp < 0x800) {
            s += static_cast<char>(0xc0 | (cp >> 6));
            s += static_cast<char>(0x80 | (cp & 0x3f));
        } else if (cp < 0x10000) {
            s += static_cast<char>(0xe0 | (cp >> 12));
            s += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
            s += static_cast<char>(0x80 | (cp & 0x3f));
        } else {
            s += static_cast<char>(0xf0 | (cp >> 18));
            s += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
            s += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
            s += static_cast<char>(0x80 | (cp & 0x3f));
        }
    }

    std::string string() {
        advance(); // "
        std::string s;
        while (true) {
            if (pos_ >= text_.size()) fail("unterminated string");
            char c = text_[pos_];
            if (c == '"') {
                ++pos_;
                return s;
            }
            if (static_cast<unsigned char>(c) < 0x20)
                fail("control character " + describe_here() + " in a string (escape it)");
            if (c != '\\') {
                s += c;
                ++pos_;
                continue;
            }
            ++pos_;
            if (pos_ >= text_.size()) fail("unterminated string");
            char e = text_[pos_++];
            switch (e) {
            case '"':
                s += '"';
                break;
            case '\\':
                s += '\\';
                break;
            case '/':
                s += '/';
                break;
            case 'b':
                s += '\b';
                break;
            case 'f':
                s += '\f';
                break;
            case 'n':
                s += '\n';
                break;
            case 'r':
                s += '\r';
                break;
            case 't':
                s += '\t';
                break;
            case 'u': {
                unsigned cp = hex4();
                if (cp >= 0xd800 && cp < 0xdc00 && text_.substr(pos_, 2) == "\\u") {
                    pos_ += 2;
                    unsigned low = hex4();
                    if (low < 0xdc00 || low >= 0xe000) fail("invalid surrogate pair in \\u escape");
                    cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
                }
                append_utf8(s, cp);
                break;
            }
            default:
                --pos_;
                fail("invalid escape '\\" + std::string(1, e) + "' in a string");
            }
        }
    }

    std::string_view text_;
    const std::string& source_;
    std::size_t pos_ = 0;
    std::size_t line_start_ = 0;
    int line_ = 1;
};

} // namespace

Value parse(std::string_view text, const std::string& source) {
    return Parser(text, source).document();
}

} // namespace hedra::json
