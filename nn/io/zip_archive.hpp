// Reading the members of a zip archive held in memory (the container of NumPy's .npz files)
// through libzip: stored and deflated members, zip64 archives and sizes, CRC-32 checked. Every
// failure throws hedra::Error through the caller's FileContext, naming the member where there is
// one.
#pragma once

#include <functional>
#include <span>
#include <string>
#include <vector>

#include "nn/io/file_bytes.hpp"

namespace hedra::nn {

// Calls `visit(name, contents)` for each file member of the archive `archive`, in the order of
// its central directory (directory entries, whose names end in '/', are skipped).
void for_each_zip_member(
    std::span<const unsigned char> archive, const FileContext& ctx,
    const std::function<void(const std::string&, std::vector<unsigned char>)>& visit);

} // namespace hedra::nn
