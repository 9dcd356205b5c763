// safetensors writing and reading (see safetensors.hpp). The header is nlohmann's ordered JSON
// through core/json.hpp, whose parser names the file, line and column of a malformed header.
#include "nn/io/safetensors.hpp"

#include <bit>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <string_view>

#include "core/error.hpp"
#include "core/json.hpp"
#include "nn/io/file_bytes.hpp"

namespace hedra::nn {

static_assert(std::endian::native == std::endian::little,
              "safetensors stores little-endian tensors; hedra writes its host memory as is");

namespace {

// The safetensors library refuses headers above 100 MB; so does this reader.
constexpr std::uint64_t kMaxHeaderBytes = 100'000'000;
constexpr std::string_view kMetadataKey = "__metadata__";

const char* safetensors_dtype(DType t) {
    return dtype_info(t).safetensors;
}

bool parse_dtype_name(const std::string& name, DType& out) {
    for (DType t : kAllDTypes)
        if (name == safetensors_dtype(t)) {
            out = t;
            return true;
        }
    return false;
}

void check_names(const std::vector<std::string>& names, const std::vector<HostArray>& arrays) {
    if (names.size() != arrays.size())
        throw Error("save_safetensors: got " + std::to_string(names.size()) + " names for " +
                    std::to_string(arrays.size()) + " arrays; give one name per array");
    std::set<std::string> seen;
    for (const std::string& name : names) {
        if (name.empty() || name == kMetadataKey)
            throw Error("save_safetensors: the tensor name '" + name +
                        "' is reserved or empty; choose another");
        if (!seen.insert(name).second)
            throw Error("save_safetensors: the tensor name '" + name +
                        "' appears twice; names must be distinct");
    }
}

std::string dump(const json::Value& v) {
    try {
        return v.dump();
    } catch (const json::Value::exception& e) {
        throw Error(
            std::string("save_safetensors: a name or metadata string is not valid UTF-8 (") +
            e.what() + ")");
    }
}

// A non-negative integer of the header, or a failure naming the tensor and field.
std::uint64_t header_count(const json::Value& v, const std::string& what, const FileContext& ctx) {
    std::int64_t n = 0;
    if (!json::to_int64(v, n) || n < 0) ctx.fail(what + " must be a non-negative integer");
    return static_cast<std::uint64_t>(n);
}

HostArray read_tensor(const std::string& name, const json::Value& entry,
                      std::span<const unsigned char> data, const FileContext& ctx) {
    const std::string where = "tensor '" + name + "'";
    const json::Value* dtype = json::find(entry, "dtype");
    const json::Value* shape = json::find(entry, "shape");
    const json::Value* offsets = json::find(entry, "data_offsets");
    if (!dtype || !dtype->is_string() || !shape || !shape->is_array() || !offsets ||
        !offsets->is_array() || offsets->size() != 2)
        ctx.fail(where + " needs \"dtype\" (a string), \"shape\" (an array) and \"data_offsets\" "
                         "([begin, end])");
    DType t{};
    if (!parse_dtype_name(dtype->get<std::string>(), t))
        ctx.fail(where + " has dtype '" + dtype->get<std::string>() +
                 "', which hedra does not read (F32, F64, I32, I64, BOOL); convert it first");
    std::vector<std::int64_t> sizes;
    std::uint64_t count = 1;
    for (const json::Value& s : *shape) {
        std::uint64_t n = header_count(s, where + "'s shape entries", ctx);
        if (n != 0 && count > std::numeric_limits<std::uint64_t>::max() / 16 / n)
            ctx.fail(where + " has a shape too large to hold");
        count *= n;
        sizes.push_back(static_cast<std::int64_t>(n));
    }
    const std::uint64_t begin = header_count((*offsets)[0], where + "'s data_offsets", ctx);
    const std::uint64_t end = header_count((*offsets)[1], where + "'s data_offsets", ctx);
    if (begin > end || end > data.size())
        ctx.fail(where + " has data_offsets [" + std::to_string(begin) + ", " +
                 std::to_string(end) + "] outside the " + std::to_string(data.size()) +
                 " data bytes (a truncated file?)");
    if (end - begin != count * dtype_size(t))
        ctx.fail(where + " holds " + std::to_string(end - begin) +
                 " bytes, its dtype and shape need " + std::to_string(count * dtype_size(t)));
    HostArray a(sizes, t);
    if (count) std::memcpy(a.raw_mutable(), data.data() + begin, end - begin);
    return a;
}

} // namespace

std::vector<unsigned char> safetensors_bytes(const std::vector<std::string>& names,
                                             const std::vector<HostArray>& arrays,
                                             const std::map<std::string, std::string>& metadata) {
    check_names(names, arrays);
    json::Value header = json::Value::object();
    if (!metadata.empty()) {
        json::Value m = json::Value::object();
        for (const auto& [key, value] : metadata)
            m[key] = value;
        header[std::string(kMetadataKey)] = m;
    }
    std::uint64_t offset = 0;
    for (std::size_t i = 0; i < names.size(); ++i) {
        const std::uint64_t bytes = arrays[i].bytes();
        header[names[i]] = {{"dtype", safetensors_dtype(arrays[i].dtype())},
                            {"shape", arrays[i].sizes()},
                            {"data_offsets", {offset, offset + bytes}}};
        offset += bytes;
    }
    std::string text = dump(header);
    text.append((8 - text.size() % 8) % 8, ' ');
    std::vector<unsigned char> out(8 + text.size() + offset);
    const std::uint64_t n = text.size();
    for (int b = 0; b < 8; ++b)
        out[static_cast<std::size_t>(b)] = static_cast<unsigned char>(n >> (8 * b));
    std::memcpy(out.data() + 8, text.data(), text.size());
    unsigned char* data = out.data() + 8 + text.size();
    for (const HostArray& a : arrays) {
        if (a.bytes()) std::memcpy(data, a.raw(), a.bytes());
        data += a.bytes();
    }
    return out;
}

void save_safetensors(const std::string& path, const std::vector<std::string>& names,
                      const std::vector<HostArray>& arrays,
                      const std::map<std::string, std::string>& metadata) {
    const std::vector<unsigned char> bytes = safetensors_bytes(names, arrays, metadata);
    const std::string temp = path + ".tmp";
    {
        std::ofstream out(temp, std::ios::binary | std::ios::trunc);
        out.write(reinterpret_cast<const char*>(bytes.data()),
                  static_cast<std::streamsize>(bytes.size()));
        out.close();
        if (!out)
            throw Error("save_safetensors: cannot write '" + temp +
                        "'; check that its folder exists and is writable, and the free space");
    }
    std::error_code ec;
    std::filesystem::rename(temp, path, ec);
    if (ec) {
        std::filesystem::remove(temp, ec);
        throw Error("save_safetensors: cannot move '" + temp + "' to '" + path + "'");
    }
}

SafetensorsFile parse_safetensors(std::span<const unsigned char> bytes, const std::string& source) {
    const FileContext ctx{"cannot read safetensors file '" + source + "'", ""};
    if (bytes.size() < 8)
        ctx.fail("truncated: " + std::to_string(bytes.size()) +
                 " bytes, fewer than the 8-byte header length");
    std::uint64_t n = 0;
    for (int b = 7; b >= 0; --b)
        n = n << 8 | bytes[static_cast<std::size_t>(b)];
    if (n > kMaxHeaderBytes)
        ctx.fail("the header length " + std::to_string(n) +
                 " exceeds 100 MB; not a safetensors file?");
    if (n > bytes.size() - 8)
        ctx.fail("truncated: the header length is " + std::to_string(n) + " but only " +
                 std::to_string(bytes.size() - 8) + " bytes follow");
    const std::string_view text(reinterpret_cast<const char*>(bytes.data() + 8),
                                static_cast<std::size_t>(n));
    json::Document doc;
    try {
        doc = json::parse(text, source);
    } catch (const Error& e) {
        ctx.fail(std::string("malformed JSON header: ") + e.what());
    }
    if (!doc.root.is_object()) ctx.fail("the header is not a JSON object");
    const std::span<const unsigned char> data = bytes.subspan(8 + static_cast<std::size_t>(n));
    SafetensorsFile file;
    for (auto it = doc.root.begin(); it != doc.root.end(); ++it) {
        if (it.key() == kMetadataKey) {
            if (!it.value().is_object()) ctx.fail("\"__metadata__\" is not a JSON object");
            for (auto m = it.value().begin(); m != it.value().end(); ++m) {
                if (!m.value().is_string()) ctx.fail("metadata '" + m.key() + "' is not a string");
                file.metadata[m.key()] = m.value().get<std::string>();
            }
            continue;
        }
        file.names.push_back(it.key());
        file.arrays.push_back(read_tensor(it.key(), it.value(), data, ctx));
    }
    return file;
}

SafetensorsFile load_safetensors(const std::string& path) {
    const FileContext ctx{"cannot read safetensors file '" + path + "'", ""};
    const std::vector<unsigned char> bytes = read_file_bytes(path, ctx);
    return parse_safetensors(bytes, path);
}

} // namespace hedra::nn
