// Whole-file reads and zlib decompression for the nn data readers (see file_bytes.hpp).
#include "nn/io/file_bytes.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>

#include <zlib.h>

#include "core/error.hpp"

namespace hedra::nn {

namespace {

// Owns a z_stream for the lifetime of one decompression.
class Inflater {
public:
    Inflater(int window_bits, const FileContext& ctx) : ctx_(ctx) {
        if (inflateInit2(&stream_, window_bits) != Z_OK) ctx_.fail("zlib cannot start inflating");
    }
    ~Inflater() { inflateEnd(&stream_); }
    Inflater(const Inflater&) = delete;
    Inflater& operator=(const Inflater&) = delete;

    // Feeds `in` and appends output to `out` until the stream ends or the input runs out.
    // Returns the number of input bytes consumed and whether the stream ended.
    std::pair<std::size_t, bool> run(std::span<const unsigned char> in,
                                     std::vector<unsigned char>& out, const char* kind) {
        constexpr std::size_t kMaxChunk = std::numeric_limits<uInt>::max() / 2;
        std::size_t used = 0;
        for (;;) {
            std::size_t chunk = std::min(in.size() - used, kMaxChunk);
            stream_.next_in = const_cast<Bytef*>(in.data() + used);
            stream_.avail_in = static_cast<uInt>(chunk);
            if (out.size() == out.capacity())
                out.reserve(std::max<std::size_t>(out.size() * 2, 1 << 16));
            std::size_t before = out.size();
            std::size_t room = std::min(out.capacity() - before, kMaxChunk);
            out.resize(before + room);
            stream_.next_out = out.data() + before;
            stream_.avail_out = static_cast<uInt>(room);
            int rc = inflate(&stream_, Z_NO_FLUSH);
            out.resize(before + (room - stream_.avail_out));
            used += chunk - stream_.avail_in;
            if (rc == Z_STREAM_END) return {used, true};
            if (rc == Z_DATA_ERROR || rc == Z_NEED_DICT)
                ctx_.fail(std::string("corrupt ") + kind + " data (" +
                          (stream_.msg ? stream_.msg : "zlib data error") + ")");
            if (rc == Z_MEM_ERROR) ctx_.fail("out of memory while inflating");
            if (used == in.size() && (stream_.avail_out != 0 || rc == Z_BUF_ERROR))
                return {used, false};
            if (rc == Z_BUF_ERROR)
                ctx_.fail("zlib made no progress inflating " + std::string(kind));
        }
    }
    void reset() { inflateReset(&stream_); }

private:
    const FileContext& ctx_;
    z_stream stream_{};
};

} // namespace

void FileContext::fail(const std::string& reason) const {
    throw Error(prefix + ": " + reason + suffix);
}

std::vector<unsigned char> read_file_bytes(const std::string& path, const FileContext& ctx) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) ctx.fail("no such file");
    if (std::filesystem::is_directory(path, ec)) ctx.fail("it is a directory, not a file");
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    if (!in) {
        std::string reason = std::strerror(errno);
        if (!reason.empty()) reason[0] = static_cast<char>(std::tolower(reason[0]));
        ctx.fail("cannot open it (" + reason + ")");
    }
    std::streamoff length = in.tellg();
    if (length < 0) ctx.fail("cannot determine the file's length");
    std::vector<unsigned char> bytes(static_cast<std::size_t>(length));
    in.seekg(0);
    if (!in.read(reinterpret_cast<char*>(bytes.data()), length)) ctx.fail("read error");
    return bytes;
}

bool is_gzip(std::span<const unsigned char> bytes) {
    return bytes.size() >= 2 && bytes[0] == 0x1f && bytes[1] == 0x8b;
}

std::vector<unsigned char> gunzip(std::span<const unsigned char> bytes, const FileContext& ctx) {
    std::vector<unsigned char> out;
    if (bytes.size() >= 4) {
        // The trailer's ISIZE (the size mod 2^32) as a hint, bounded in case the file is corrupt.
        std::size_t n = bytes.size();
        std::size_t isize = bytes[n - 4] | bytes[n - 3] << 8 | bytes[n - 2] << 16 |
                            static_cast<std::size_t>(bytes[n - 1]) << 24;
        out.reserve(std::min(isize, 64 * n));
    }
    Inflater inflater(16 + MAX_WBITS, ctx);
    std::size_t pos = 0;
    while (pos < bytes.size()) {
        auto [used, ended] = inflater.run(bytes.subspan(pos), out, "gzip");
        pos += used;
        if (!ended) ctx.fail("truncated gzip stream (it ends before its end marker)");
        if (!is_gzip(bytes.subspan(pos))) break; // trailing padding after the last member
        inflater.reset();
    }
    return out;
}

} // namespace hedra::nn
