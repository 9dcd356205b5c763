// Whole-file reads and gzip decompression (zlib) shared by the IDX, NumPy and safetensors
// readers. Every failure throws hedra::Error through a FileContext, so each reader's messages name
// its file and say how to get a good one, while the byte handling lives in one place.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace hedra::nn {

// How a reader words its errors: "<prefix>: <reason><suffix>", e.g.
// "cannot read idx file 'x.gz': truncated gzip stream; install ...".
struct FileContext {
    std::string prefix;
    std::string suffix;
    [[noreturn]] void fail(const std::string& reason) const;
};

// The bytes of the file at `path`; a missing or unreadable file fails through `ctx`.
std::vector<unsigned char> read_file_bytes(const std::string& path, const FileContext& ctx);

// True when `bytes` start with the gzip magic 0x1f 0x8b.
bool is_gzip(std::span<const unsigned char> bytes);

// The decompressed contents of a gzip stream (several members are concatenated, as gzip does).
std::vector<unsigned char> gunzip(std::span<const unsigned char> bytes, const FileContext& ctx);

} // namespace hedra::nn
