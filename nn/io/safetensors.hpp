// The safetensors format (Hugging Face's, the file PyTorch users exchange weights in), for
// checkpoints and weights: an 8-byte little-endian header length N, N bytes of JSON
// {name: {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {string: string}},
// padded with spaces to a multiple of 8, then the tensors' raw little-endian bytes, row-major,
// at those offsets from the end of the header. hedra's dtypes map to F32, F64, I32, I64 and
// BOOL; any other dtype, and any truncated or malformed file, throws hedra::Error naming the
// file. Tensors are written contiguously in the order given (so files are byte-identical for
// the same arrays) and read back in the header's order.
#pragma once

#include <map>
#include <span>
#include <string>
#include <vector>

#include "core/host_array.hpp"

namespace hedra::nn {

struct SafetensorsFile {
    std::vector<std::string> names;
    std::vector<HostArray> arrays;
    std::map<std::string, std::string> metadata; // "__metadata__", empty when absent
};

// The file's bytes; names must be distinct, non-empty and not "__metadata__".
std::vector<unsigned char>
safetensors_bytes(const std::vector<std::string>& names, const std::vector<HostArray>& arrays,
                  const std::map<std::string, std::string>& metadata = {});

// Writes the file at `path` (through a temporary file renamed into place, so an interrupted
// save leaves any previous file whole).
void save_safetensors(const std::string& path, const std::vector<std::string>& names,
                      const std::vector<HostArray>& arrays,
                      const std::map<std::string, std::string>& metadata = {});

// The arrays held by safetensors bytes; `source` names them in error messages.
SafetensorsFile parse_safetensors(std::span<const unsigned char> bytes, const std::string& source);

// The arrays in the file at `path`.
SafetensorsFile load_safetensors(const std::string& path);

} // namespace hedra::nn
