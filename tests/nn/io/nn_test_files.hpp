// Helpers for the nn data-reader tests: a scratch directory removed at the end of a test, and
// files written byte by byte (plain, gzip, or raw deflate through zlib), so every test builds
// its inputs independently of the readers under test.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <unistd.h>
#include <zlib.h>

namespace hedra::nn::test {

using Bytes = std::vector<unsigned char>;

class ScratchDir {
public:
    explicit ScratchDir(const std::string& name)
        : path_(std::filesystem::temp_directory_path() /
                ("hedra_nn_" + name + "_" + std::to_string(::getpid()))) {
        std::filesystem::remove_all(path_);
        std::filesystem::create_directories(path_);
    }
    ~ScratchDir() {
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }
    ScratchDir(const ScratchDir&) = delete;
    ScratchDir& operator=(const ScratchDir&) = delete;
    std::string dir() const { return path_.string(); }
    std::string file(const std::string& name) const { return (path_ / name).string(); }

private:
    std::filesystem::path path_;
};

inline void write_file(const std::string& path, const Bytes& bytes) {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
    if (!out) throw std::runtime_error("test could not write " + path);
}

inline void put_be32(Bytes& b, std::uint32_t v) {
    for (int shift = 24; shift >= 0; shift -= 8)
        b.push_back(static_cast<unsigned char>(v >> shift));
}
inline void put_le(Bytes& b, std::uint64_t v, int n) {
    for (int i = 0; i < n; ++i)
        b.push_back(static_cast<unsigned char>(v >> (8 * i)));
}

// An IDX file: magic 0x0000<type><rank>, big-endian sizes, then `payload` as given.
inline Bytes idx_bytes(unsigned char type, const std::vector<std::uint32_t>& sizes,
                       const Bytes& payload) {
    Bytes b{0, 0, type, static_cast<unsigned char>(sizes.size())};
    for (std::uint32_t s : sizes)
        put_be32(b, s);
    b.insert(b.end(), payload.begin(), payload.end());
    return b;
}

// zlib deflate with the given window bits: 16 + 15 writes gzip, -15 raw deflate.
inline Bytes deflate_bytes(const Bytes& in, int window_bits) {
    z_stream s{};
    if (deflateInit2(&s, Z_BEST_COMPRESSION, Z_DEFLATED, window_bits, 8, Z_DEFAULT_STRATEGY) !=
        Z_OK)
        throw std::runtime_error("deflateInit2 failed");
    Bytes out(deflateBound(&s, static_cast<uLong>(in.size())) + 32);
    s.next_in = const_cast<Bytef*>(in.data());
    s.avail_in = static_cast<uInt>(in.size());
    s.next_out = out.data();
    s.avail_out = static_cast<uInt>(out.size());
    int rc = deflate(&s, Z_FINISH);
    out.resize(s.total_out);
    deflateEnd(&s);
    if (rc != Z_STREAM_END) throw std::runtime_error("deflate did not finish");
    return out;
}
inline Bytes gzip_bytes(const Bytes& in) {
    return deflate_bytes(in, 16 + 15);
}
inline Bytes raw_deflate_bytes(const Bytes& in) {
    return deflate_bytes(in, -15);
}

} // namespace hedra::nn::test
