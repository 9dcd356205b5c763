// Reader for the IDX format of MNIST and Fashion-MNIST (http://yann.lecun.com/exdb/mnist/):
// a big-endian header (two zero bytes, an element-type byte, the rank, then one 32-bit size per
// axis) followed by the elements in row-major order. Files may be plain or gzip-compressed; the
// two are told apart by their first bytes, not by their names. Every missing, truncated or
// malformed file throws hedra::Error naming the file, what is wrong and how to get good data.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/dtype.hpp"
#include "core/host_array.hpp"

namespace hedra::nn {

// The element-type byte of an IDX header.
enum class IdxElement : std::uint8_t {
    U8 = 0x08,
    I8 = 0x09,
    I16 = 0x0B,
    I32 = 0x0C,
    F32 = 0x0D,
    F64 = 0x0E
};

// An IDX file as stored: its sizes, element type, and payload (big-endian elements).
struct IdxContents {
    std::vector<std::int64_t> sizes;
    IdxElement element = IdxElement::U8;
    std::vector<unsigned char> payload;
};

// What to do when MNIST data is missing: the hint every IDX error ends with.
std::string mnist_data_hint();

// Reads and validates an IDX file (magic number, element type, sizes, exact length). With
// `expected_rank` >= 0 the file must have that many axes.
IdxContents read_idx_contents(const std::string& path, int expected_rank = -1);

// An IDX file's values converted to `dtype` as a C++ cast would convert them.
HostArray read_idx(const std::string& path, DType dtype, int expected_rank = -1);

// Unsigned-byte pixels as f32 in [0, 1] (pixel / 255, computed in f32 as PyTorch's ToTensor does).
HostArray unit_scaled_f32(std::span<const std::uint8_t> pixels, std::vector<std::int64_t> sizes);

// An images file: unsigned bytes of shape (n, rows, cols), returned as unit-scaled f32.
HostArray read_idx_images(const std::string& path);

// A labels file: unsigned bytes of shape (n), returned as i32 or i64.
HostArray read_idx_labels(const std::string& path, DType dtype = DType::I32);

} // namespace hedra::nn
