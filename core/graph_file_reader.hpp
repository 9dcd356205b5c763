// The graph-file reader's class, shared by the two files that implement it
// (graph_file_load.cpp: the document, fields and expressions; graph_file_nodes.cpp: the nodes
// and their checks). Internal to core.
#pragma once

#include <string>
#include <vector>

#include "core/graph_file.hpp"

namespace hedra::detail {

using json::Value;

class GraphReader {
public:
    GraphReader(const std::string& source, const GraphLoadOptions& options)
        : source_(source), options_(options) {}

    GraphFile read(const Value& doc);

    // Error and field helpers: every failure names the source, line:column and the entry.
    [[noreturn]] void fail(const Value& at, const std::string& what) const {
        std::string where = source_;
        if (at.line > 0) where += ":" + std::to_string(at.line) + ":" + std::to_string(at.column);
        throw Error(where + ": " + (context_.empty() ? "" : context_ + ": ") + what);
    }

    const Value& member(const Value& obj, const char* key) const {
        const Value* v = obj.find(key);
        if (!v) fail(obj, std::string("missing member '") + key + "'");
        return *v;
    }
    const Value& typed(const Value& v, Value::Kind kind, const char* key) const {
        if (v.kind() != kind)
            fail(v, std::string("'") + key + "' must be " +
                        (kind == Value::Kind::Array ? "an " : "a ") + json::kind_name(kind) +
                        ", found " + json::kind_name(v.kind()));
        return v;
    }
    std::int64_t integer(const Value& v, const char* key, std::int64_t lo, std::int64_t hi) const {
        std::int64_t out = 0;
        if (!v.to_int64(out))
            fail(v, std::string("'") + key + "' must be an integer, found " +
                        (v.is_number() ? v.text() : json::kind_name(v.kind())));
        if (out < lo || out > hi)
            fail(v, std::string("'") + key + "' is " + std::to_string(out) + ", outside [" +
                        std::to_string(lo) + ", " + std::to_string(hi) + "]");
        return out;
    }
    std::int64_t integer_member(const Value& obj, const char* key, std::int64_t lo,
                                std::int64_t hi) const {
        return integer(member(obj, key), key, lo, hi);
    }
    const std::string& string_member(const Value& obj, const char* key) const {
        return typed(member(obj, key), Value::Kind::String, key).text();
    }
    bool bool_member(const Value& obj, const char* key) const {
        return typed(member(obj, key), Value::Kind::Bool, key).as_bool();
    }
    DType dtype_member(const Value& obj) const {
        const Value& v = member(obj, "dtype");
        try {
            return parse_dtype(typed(v, Value::Kind::String, "dtype").text());
        } catch (const Error& e) {
            fail(v, e.what());
        }
    }

    Shape shape_member(const Value& obj) const;
    AffineMap access_member(const Value& obj, int in_rank, int out_rank) const;
    ScalarExpr expr_ref(const Value& obj, const char* key) const;
    NodePtr node_ref(const Value& v, std::size_t before) const;
    void read_expr(const Value& e);
    NodePtr read_node(const Value& n, std::size_t position);
    void check_map(const Value& n, const Node& node) const;
    void check_view(const Value& n, const Node& node) const;
    void check_reduce(const Value& n, const Node& node) const;
    void read_tuple_reduce(const Value& n, Node& node) const; // reduce_multiple_value
    void check_fuse(const Value& n, const Node& node) const;
    void check_inputs(const Value& n, const Node& node, std::size_t count) const;

private:
    std::string source_;
    GraphLoadOptions options_;
    std::string context_;
    std::vector<ScalarExpr> exprs_;
    std::vector<NodePtr> nodes_;
    std::vector<bool> omitted_data_;
};

} // namespace hedra::detail
