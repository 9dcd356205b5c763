// Graph files: a lazy graph saved as JSON and loaded back (docs/graph_files.md documents the
// format). Placeholders are saved as placeholders; host data is embedded (base64) or omitted,
// in which case it comes back as a placeholder the caller binds. Loading rebuilds the nodes
// exactly as saved, so with `keep_ids` in the same process every loaded node is the very
// hash-consed node that was saved. Malformed files throw hedra::Error naming the file, the
// line and column, and what is wrong.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp> // the full header is costly, and hedra.hpp includes this one

#include "core/array.hpp"
#include "core/node.hpp"

namespace hedra {

struct GraphSaveOptions {
    bool embed_data = true; // false: host data is omitted and loads as a placeholder
};

struct GraphLoadOptions {
    // Reuse the saved identities of placeholders and data (same process: the same nodes).
    // Off by default: ids from another process could collide with this process's own.
    bool keep_ids = false;
};

struct GraphFile {
    std::vector<NodePtr> outputs;
    // The program's inputs in order: the saved "inputs" list, then the other placeholders in
    // node order, then the host data saved without its values.
    std::vector<NodePtr> placeholders;

    std::vector<Array> output_arrays() const;
    std::vector<Array> placeholder_arrays() const;
};

// The graph of `outputs` as a JSON value / text. `placeholders` (optional) fixes the order of
// the "inputs" list; other reachable placeholders follow in topological order.
// (nlohmann::ordered_json is hedra::json::Value, core/json.hpp.)
nlohmann::ordered_json graph_to_json(const std::vector<NodePtr>& outputs,
                                     const std::vector<NodePtr>& placeholders = {},
                                     const GraphSaveOptions& options = {});
std::string save_graph(const std::vector<NodePtr>& outputs,
                       const std::vector<NodePtr>& placeholders = {},
                       const GraphSaveOptions& options = {});
std::string save_graph(const std::vector<Array>& outputs,
                       const std::vector<Array>& placeholders = {},
                       const GraphSaveOptions& options = {});
// Writes save_graph's text (and a final newline) to `path`; throws hedra::Error if it cannot.
void save_graph_file(const std::string& path, const std::vector<Array>& outputs,
                     const std::vector<Array>& placeholders = {},
                     const GraphSaveOptions& options = {});

// `source` names the text in error messages.
GraphFile graph_from_json(const nlohmann::ordered_json& doc, const std::string& source,
                          const GraphLoadOptions& options = {});
GraphFile load_graph(std::string_view text, const std::string& source = "<graph>",
                     const GraphLoadOptions& options = {});
GraphFile load_graph_file(const std::string& path, const GraphLoadOptions& options = {});

} // namespace hedra
