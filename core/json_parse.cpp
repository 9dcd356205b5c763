// The reader (see json.hpp): nlohmann's SAX parser does the lexing and the grammar; the handler
// here builds the document, rejects repeated members and deep nesting, and records where each
// value starts. nlohmann reports a value without its position, so the text is read through an
// iterator that tells the handler how far the parser has read: a value starts at the first
// character after the previous event that is not a space, ',' or ':'.
#include <iterator>

#include "core/error.hpp"
#include "core/json.hpp"

namespace hedra::json {
namespace {

constexpr int kMaxDepth = 256;

// A character iterator that publishes its position in `*read` as it advances.
class CountingIterator {
public:
    using iterator_category = std::input_iterator_tag;
    using value_type = char;
    using difference_type = std::ptrdiff_t;
    using pointer = const char*;
    using reference = const char&;

    CountingIterator(const char* at, const char** read) : at_(at), read_(read) {}
    reference operator*() const { return *at_; }
    CountingIterator& operator++() {
        *read_ = ++at_;
        return *this;
    }
    CountingIterator operator++(int) {
        CountingIterator before = *this;
        ++*this;
        return before;
    }
    bool operator==(const CountingIterator& o) const { return at_ == o.at_; }
    bool operator!=(const CountingIterator& o) const { return at_ != o.at_; }

private:
    const char* at_;
    const char** read_;
};

class Builder {
public:
    Builder(std::string_view text, const std::string& source, Value& root)
        : text_(text), source_(source), root_(root), read_(text.data()) {}
    const char** read() { return &read_; }
    std::vector<std::pair<int, int>> starts; // see Document

    bool null() { return add(Value()); }
    bool boolean(bool b) { return add(Value(b)); }
    bool number_integer(Value::number_integer_t n) {
        std::size_t at = token_start(); // "-0" reads as 0: keep its sign, as a double
        insert(at, n == 0 && text_[at] == '-' ? Value(-0.0) : Value(n));
        return true;
    }
    bool number_unsigned(Value::number_unsigned_t n) { return add(Value(n)); }
    bool number_float(Value::number_float_t d, const std::string&) { return add(Value(d)); }
    bool string(std::string& s) { return add(Value(std::move(s))); }
    bool binary(Value::binary_t&) { return false; } // JSON text has none
    bool start_object(std::size_t) { return open(Value::object()); }
    bool start_array(std::size_t) { return open(Value::array()); }
    bool end_object() { return close(); }
    bool end_array() { return close(); }
    bool key(std::string& k) {
        std::size_t at = token_start();
        if (open_.back()->contains(k)) fail(at, "member '" + k + "' appears twice in one object");
        key_ = std::move(k);
        return true;
    }
    bool parse_error(std::size_t position, const std::string&, const Value::exception& e) {
        // `position` counts the characters read, the offending one last.
        std::string what = e.what();
        std::size_t colon = what.find(": ", what.find("column "));
        fail(position > 0 ? position - 1 : 0,
             colon == std::string::npos ? what : what.substr(colon + 2));
    }

private:
    [[noreturn]] void fail(std::size_t offset, const std::string& what) {
        auto [line, column] = position_of(offset);
        throw Error(source_ + ":" + std::to_string(line) + ":" + std::to_string(column) + ": " +
                    what);
    }

    // The line and column of `offset`, counted on from the last one (offsets only grow).
    std::pair<int, int> position_of(std::size_t offset) {
        offset = std::min(offset, text_.size());
        for (; scanned_ < offset; ++scanned_)
            if (text_[scanned_] == '\n') {
                ++line_;
                line_start_ = scanned_ + 1;
            }
        return {line_, static_cast<int>(offset - line_start_) + 1};
    }

    // Where the token just read starts; also marks the end of this event.
    std::size_t token_start() {
        std::size_t at = last_event_;
        while (at < text_.size() && (text_[at] == ' ' || text_[at] == '\t' || text_[at] == '\n' ||
                                     text_[at] == '\r' || text_[at] == ',' || text_[at] == ':'))
            ++at;
        last_event_ = static_cast<std::size_t>(read_ - text_.data());
        return at;
    }

    // Inserts `v` into the innermost open container (or makes it the root).
    Value* insert(std::size_t at, Value v) {
        starts.push_back(position_of(at));
        if (open_.empty()) return &(root_ = std::move(v));
        Value& parent = *open_.back();
        if (parent.is_array()) {
            parent.push_back(std::move(v));
            return &parent.back();
        }
        return &(parent[key_] = std::move(v));
    }
    bool add(Value v) {
        insert(token_start(), std::move(v));
        return true;
    }
    bool open(Value v) {
        std::size_t at = token_start();
        if (static_cast<int>(open_.size()) >= kMaxDepth)
            fail(at, "nesting deeper than " + std::to_string(kMaxDepth) + " levels");
        open_.push_back(insert(at, std::move(v)));
        return true;
    }
    bool close() {
        open_.pop_back();
        token_start();
        return true;
    }

    std::string_view text_;
    const std::string& source_;
    Value& root_;
    const char* read_;           // how far the parser has read
    std::size_t last_event_ = 0; // how far it had read at the previous event
    std::vector<Value*> open_;   // the containers being filled, innermost last
    std::string key_;            // the member name for the next value
    std::size_t scanned_ = 0, line_start_ = 0;
    int line_ = 1;
};

// The position of `target` in a walk of `v` in document order, counted on from `index`.
bool locate(const Value& v, const Value& target, std::size_t& index) {
    if (&v == &target) return true;
    ++index;
    if (v.is_structured())
        for (const Value& x : v)
            if (locate(x, target, index)) return true;
    return false;
}

} // namespace

Document parse(std::string_view text, const std::string& source) {
    Document doc;
    doc.source_ = source;
    Builder builder(text, source, doc.root);
    Value::sax_parse(CountingIterator(text.data(), builder.read()),
                     CountingIterator(text.data() + text.size(), builder.read()), &builder);
    doc.starts_ = std::move(builder.starts);
    return doc;
}

std::string Document::where(const Value& v) const {
    std::size_t index = 0;
    if (!locate(root, v, index) || index >= starts_.size()) return source_;
    return source_ + ":" + std::to_string(starts_[index].first) + ":" +
           std::to_string(starts_[index].second);
}

} // namespace hedra::json
