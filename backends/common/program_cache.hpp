// program_cache: a backend's compiled programs within the process, by the text of their key
// (the graph's structure, graph_key.hpp, and the options that change the code), so compute() on
// a rebuilt identical graph binds the new leaves to the old code without lowering or compiling.
// One table per backend instance, safe to use from several threads; every code-generating
// backend (openmp, c, cuda) keeps its programs in one.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/node.hpp"

namespace hedra::backend {

template <class Code>
class ProgramCache {
public:
    // The code stored under `key` (counted as a hit), or null.
    std::shared_ptr<const Code> find(const std::string& key) {
        std::lock_guard<std::mutex> lock(mutex_);
        auto it = map_.find(key);
        if (it == map_.end()) return nullptr;
        ++hits_;
        return it->second;
    }
    // Stores `code` under `key`, unless a thread that built the same program at the same time
    // stored its code first; returns the code stored. The copy that lost is kept too, never
    // freed, as the stored ones are: freeing a JIT-loaded module left its unwind tables
    // registered with the process, and the next exception thrown anywhere walked freed memory.
    std::shared_ptr<const Code> insert(std::string key, std::shared_ptr<const Code> code) {
        std::lock_guard<std::mutex> lock(mutex_);
        auto [it, fresh] = map_.emplace(std::move(key), code);
        if (!fresh) kept_.push_back(std::move(code));
        return it->second;
    }
    std::uint64_t hits() const {
        std::lock_guard<std::mutex> lock(mutex_);
        return hits_;
    }

private:
    mutable std::mutex mutex_;
    std::unordered_map<std::string, std::shared_ptr<const Code>> map_;
    std::vector<std::shared_ptr<const Code>> kept_; // the copies that lost a race
    std::uint64_t hits_ = 0;
};

// The part of a program's key that CompileOptions::tile_sizes gives: "tiles:32,32,|".
inline std::string tile_sizes_key(const std::vector<std::int64_t>& tile_sizes) {
    std::string s = "tiles:";
    for (std::int64_t t : tile_sizes)
        s += std::to_string(t) + ",";
    return s + "|";
}

// The part that CompileOptions::donate gives ("" without donation: keys stay as they were).
inline std::string donate_key(const std::vector<int>& donate) {
    if (donate.empty()) return "";
    std::string s = "donate:";
    for (int d : donate)
        s += std::to_string(d) + ",";
    return s + "|";
}

// The placeholders at CompileOptions::donate's positions.
inline std::vector<NodePtr> donated_placeholders(const std::vector<NodePtr>& placeholders,
                                                 const std::vector<int>& donate) {
    std::vector<NodePtr> nodes;
    for (int d : donate)
        nodes.push_back(placeholders.at(static_cast<std::size_t>(d)));
    return nodes;
}

} // namespace hedra::backend
