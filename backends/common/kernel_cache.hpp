// The on-disk cache of compiled kernel objects, keyed by everything that decides the machine
// code (source, flags, host CPU, LLVM and hedra versions). A hit skips clang entirely: loading
// a cached object takes under a millisecond where compiling takes tens. Entries carry a header
// with their key, size and checksum; a truncated or corrupt entry is reported as a miss and
// overwritten, never trusted. When the directory cannot be written the cache keeps entries in
// memory instead, so compilation never fails because of the cache.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace hedra::backend {

struct CacheStats {
    std::uint64_t hits = 0;
    std::uint64_t misses = 0;
    std::uint64_t corrupt = 0;        // entries found but rejected (bad header, size, checksum)
    std::uint64_t store_failures = 0; // writes that failed (the entry went to memory instead)
};

class KernelCache {
public:
    // No directory: memory only. Entries are files <key><extension> in the directory.
    explicit KernelCache(std::optional<std::filesystem::path> directory,
                         std::string extension = ".o");

    // $HEDRA_CACHE_DIR, else $XDG_CACHE_HOME/hedra, else $HOME/.cache/hedra, else none.
    static std::optional<std::filesystem::path> default_directory();

    // The object stored under `key`, or nothing (counted as a miss; a rejected entry also
    // counts as corrupt). Thread-safe.
    std::optional<std::string> load(const std::string& key);

    // Stores atomically (temp file + rename); on any failure keeps the entry in memory.
    void store(const std::string& key, std::string_view object);

    // Where the entry for `key` lives on disk (whether or not it exists).
    std::filesystem::path entry_path(const std::string& key) const;

    // Where diagnostics artefacts (failing sources) go: the cache dir if writable, else /tmp.
    std::filesystem::path scratch_directory() const;

    const std::optional<std::filesystem::path>& directory() const { return directory_; }
    bool persistent() const { return directory_.has_value() && !disk_failed_.load(); }
    CacheStats stats() const;

private:
    std::optional<std::string> load_from_disk(const std::string& key);
    bool store_to_disk(const std::string& key, std::string_view object);

    std::optional<std::filesystem::path> directory_;
    std::string extension_;
    std::atomic<bool> disk_failed_{false};
    std::atomic<std::uint64_t> hits_{0}, misses_{0}, corrupt_{0}, store_failures_{0};
    mutable std::mutex memory_mutex_;
    std::unordered_map<std::string, std::string> memory_;
};

// A stable 64-bit FNV-1a checksum (entry integrity, not security).
std::uint64_t checksum64(std::string_view bytes);

// Encodes / decodes one entry: magic, format version, key, payload size, checksum, payload.
std::string encode_cache_entry(const std::string& key, std::string_view object);
std::optional<std::string> decode_cache_entry(const std::string& key, std::string_view entry);

} // namespace hedra::backend
