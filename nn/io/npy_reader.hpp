// Readers for NumPy's .npy files (format versions 1.0 to 3.0) and .npz archives (zip files of
// .npy members, stored or deflated), so that tests and examples can load weights, orders and
// reference values saved from Python. Supported element types are little-endian f4, f8, i4, i8,
// u1 and b1 in C order; u1 becomes i32 (hedra has no byte type), the others keep their type.
// Anything else, and any truncated or malformed file, throws hedra::Error naming the file.
#pragma once

#include <map>
#include <span>
#include <string>

#include "core/host_array.hpp"

namespace hedra::nn {

// The array held by the .npy bytes `bytes`; `name` names them in error messages.
HostArray parse_npy(std::span<const unsigned char> bytes, const std::string& name);

// The array in the .npy file at `path`.
HostArray read_npy(const std::string& path);

// The arrays in the .npz archive at `path`, by member name without its ".npy" suffix (the keys
// numpy.load gives).
std::map<std::string, HostArray> read_npz(const std::string& path);

} // namespace hedra::nn
