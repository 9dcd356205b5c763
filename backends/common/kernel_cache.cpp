// The on-disk kernel object cache: entry format, atomic writes, and the in-memory fallback.
#include "backends/common/kernel_cache.hpp"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace hedra::backend {

namespace {

constexpr std::string_view kMagic = "HEDRAOBJ";
constexpr std::uint32_t kFormatVersion = 1;

void append_u64(std::string& out, std::uint64_t value) {
    for (int i = 0; i < 8; ++i)
        out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

bool read_u64(std::string_view& in, std::uint64_t& value) {
    if (in.size() < 8) return false;
    value = 0;
    for (int i = 0; i < 8; ++i)
        value |= static_cast<std::uint64_t>(static_cast<unsigned char>(in[i])) << (8 * i);
    in.remove_prefix(8);
    return true;
}

std::optional<std::string> read_file(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return std::nullopt;
    std::ostringstream bytes;
    bytes << in.rdbuf();
    if (in.bad()) return std::nullopt;
    return std::move(bytes).str();
}

std::optional<std::filesystem::path> env_path(const char* name) {
    const char* value = std::getenv(name);
    if (value == nullptr || *value == '\0') return std::nullopt;
    return std::filesystem::path(value);
}

} // namespace

std::uint64_t checksum64(std::string_view bytes) {
    std::uint64_t hash = 0xcbf29ce484222325ull;
    for (char c : bytes) {
        hash ^= static_cast<unsigned char>(c);
        hash *= 0x100000001b3ull;
    }
    return hash;
}

std::string encode_cache_entry(const std::string& key, std::string_view object) {
    std::string out(kMagic);
    append_u64(out, kFormatVersion);
    append_u64(out, key.size());
    out += key;
    append_u64(out, object.size());
    append_u64(out, checksum64(object));
    out += object;
    return out;
}

std::optional<std::string> decode_cache_entry(const std::string& key, std::string_view entry) {
    if (entry.substr(0, kMagic.size()) != kMagic) return std::nullopt;
    entry.remove_prefix(kMagic.size());
    std::uint64_t version = 0, key_size = 0, size = 0, checksum = 0;
    if (!read_u64(entry, version) || version != kFormatVersion) return std::nullopt;
    if (!read_u64(entry, key_size) || key_size != key.size() || entry.size() < key_size)
        return std::nullopt;
    if (entry.substr(0, key_size) != key) return std::nullopt;
    entry.remove_prefix(key_size);
    if (!read_u64(entry, size) || !read_u64(entry, checksum)) return std::nullopt;
    if (entry.size() != size || checksum64(entry) != checksum) return std::nullopt;
    return std::string(entry);
}

KernelCache::KernelCache(std::optional<std::filesystem::path> directory, std::string extension)
    : directory_(std::move(directory)), extension_(std::move(extension)) {}

std::optional<std::filesystem::path> KernelCache::default_directory() {
    if (auto dir = env_path("HEDRA_CACHE_DIR")) return dir;
    if (auto dir = env_path("XDG_CACHE_HOME")) return *dir / "hedra";
    if (auto home = env_path("HOME")) return *home / ".cache" / "hedra";
    return std::nullopt;
}

std::filesystem::path KernelCache::entry_path(const std::string& key) const {
    if (!directory_) return {};
    return *directory_ / (key + extension_);
}

std::filesystem::path KernelCache::scratch_directory() const {
    if (persistent()) return *directory_;
    return std::filesystem::temp_directory_path();
}

CacheStats KernelCache::stats() const {
    return {hits_.load(), misses_.load(), corrupt_.load(), store_failures_.load()};
}

std::optional<std::string> KernelCache::load(const std::string& key) {
    {
        std::lock_guard lock(memory_mutex_);
        if (auto it = memory_.find(key); it != memory_.end()) {
            ++hits_;
            return it->second;
        }
    }
    if (auto object = load_from_disk(key)) {
        ++hits_;
        return object;
    }
    ++misses_;
    return std::nullopt;
}

std::optional<std::string> KernelCache::load_from_disk(const std::string& key) {
    if (!directory_) return std::nullopt;
    auto entry = read_file(entry_path(key));
    if (!entry) return std::nullopt;
    auto object = decode_cache_entry(key, *entry);
    if (!object) ++corrupt_;
    return object;
}

void KernelCache::store(const std::string& key, std::string_view object) {
    if (directory_ && !disk_failed_.load() && store_to_disk(key, object)) return;
    if (directory_) ++store_failures_;
    std::lock_guard lock(memory_mutex_);
    memory_.emplace(key, std::string(object));
}

bool KernelCache::store_to_disk(const std::string& key, std::string_view object) {
    namespace fs = std::filesystem;
    static std::atomic<std::uint64_t> temp_counter{0};
    std::error_code ec;
    fs::create_directories(*directory_, ec);
    if (ec && !fs::is_directory(*directory_)) {
        disk_failed_ = true;
        return false;
    }
    fs::path temp = *directory_ / (key + ".tmp." + std::to_string(::getpid()) + "." +
                                   std::to_string(temp_counter.fetch_add(1)));
    {
        std::ofstream out(temp, std::ios::binary | std::ios::trunc);
        if (!out) {
            disk_failed_ = true;
            return false;
        }
        std::string entry = encode_cache_entry(key, object);
        out.write(entry.data(), static_cast<std::streamsize>(entry.size()));
        out.close();
        if (!out) {
            fs::remove(temp, ec);
            return false;
        }
    }
    fs::rename(temp, entry_path(key), ec);
    if (ec) {
        fs::remove(temp, ec);
        return false;
    }
    return true;
}

} // namespace hedra::backend
