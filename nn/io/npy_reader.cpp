// .npy header parsing, and .npz archives as .npy members of a zip archive (zip_archive.hpp:
// minizip reads the container, inflates the members and checks their CRC-32).
#include "nn/io/npy_reader.hpp"

#include <cctype>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "nn/io/file_bytes.hpp"
#include "nn/io/zip_archive.hpp"

namespace hedra::nn {

namespace {

struct NpyHeader {
    std::string descr;
    bool fortran_order = false;
    std::vector<std::int64_t> shape;
};

// Bounds-checked little-endian reads from a byte span.
class LittleEndianReader {
public:
    LittleEndianReader(std::span<const unsigned char> bytes, const FileContext& ctx)
        : bytes_(bytes), ctx_(ctx) {}
    std::uint64_t get(std::size_t pos, std::size_t n, const char* what) const {
        if (pos > bytes_.size() || n > bytes_.size() - pos)
            ctx_.fail(std::string("truncated ") + what);
        std::uint64_t v = 0;
        for (std::size_t i = n; i-- > 0;)
            v = v << 8 | bytes_[pos + i];
        return v;
    }
    std::span<const unsigned char> slice(std::size_t pos, std::uint64_t n, const char* what) const {
        if (pos > bytes_.size() || n > bytes_.size() - pos)
            ctx_.fail(std::string("truncated ") + what);
        return bytes_.subspan(pos, static_cast<std::size_t>(n));
    }

private:
    std::span<const unsigned char> bytes_;
    const FileContext& ctx_;
};

// A cursor over the Python dict literal of an .npy header.
class HeaderParser {
public:
    HeaderParser(std::string_view text, const FileContext& ctx) : text_(text), ctx_(ctx) {}

    NpyHeader parse() {
        NpyHeader h;
        bool seen[3] = {false, false, false};
        expect('{');
        while (!accept('}')) {
            std::string key = quoted();
            expect(':');
            if (key == "descr") {
                if (peek() != '\'' && peek() != '"')
                    ctx_.fail("structured dtypes are not supported (descr is not a string)");
                h.descr = quoted();
                seen[0] = true;
            } else if (key == "fortran_order") {
                h.fortran_order = boolean();
                seen[1] = true;
            } else if (key == "shape") {
                h.shape = tuple();
                seen[2] = true;
            } else {
                ctx_.fail("unexpected key '" + key + "' in the header");
            }
            if (!accept(',')) {
                expect('}');
                break;
            }
        }
        if (!seen[0] || !seen[1] || !seen[2])
            ctx_.fail("the header lacks one of 'descr', 'fortran_order' and 'shape'");
        return h;
    }

private:
    char peek() {
        while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_])))
            ++pos_;
        return pos_ < text_.size() ? text_[pos_] : '\0';
    }
    bool accept(char c) {
        if (peek() != c) return false;
        ++pos_;
        return true;
    }
    void expect(char c) {
        if (!accept(c))
            ctx_.fail(std::string("malformed header: expected '") + c + "' at offset " +
                      std::to_string(pos_) + " of \"" + std::string(text_) + "\"");
    }
    std::string quoted() {
        char q = peek();
        if (q != '\'' && q != '"') expect('\'');
        std::size_t end = text_.find(q, ++pos_);
        if (end == std::string_view::npos) ctx_.fail("malformed header: unterminated string");
        std::string s(text_.substr(pos_, end - pos_));
        pos_ = end + 1;
        return s;
    }
    bool boolean() {
        peek();
        for (auto [word, value] : {std::pair{"True", true}, std::pair{"False", false}})
            if (text_.substr(pos_, std::strlen(word)) == word) {
                pos_ += std::strlen(word);
                return value;
            }
        ctx_.fail("malformed header: fortran_order is neither True nor False");
    }
    std::vector<std::int64_t> tuple() {
        std::vector<std::int64_t> sizes;
        expect('(');
        while (!accept(')')) {
            peek();
            std::size_t start = pos_;
            std::int64_t v = 0;
            while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
                v = v * 10 + (text_[pos_++] - '0');
                if (v > (std::int64_t{1} << 48)) ctx_.fail("implausibly large shape");
            }
            if (pos_ == start) ctx_.fail("malformed header: the shape is not a tuple of sizes");
            sizes.push_back(v);
            if (!accept(',')) {
                expect(')');
                break;
            }
        }
        return sizes;
    }

    std::string_view text_;
    const FileContext& ctx_;
    std::size_t pos_ = 0;
};

// The hedra type of a descr, and the item size in the file; fails for unsupported descrs.
std::pair<DType, std::size_t> element_type(const std::string& descr, const FileContext& ctx) {
    std::string kind = descr.size() == 3 ? descr.substr(1) : descr;
    char order = descr.size() == 3 ? descr[0] : '?';
    bool one_byte = kind == "u1" || kind == "b1";
    bool little = order == '<' || order == '=' || (one_byte && order == '|');
    if (descr.size() == 3 && order == '>' && !one_byte)
        ctx.fail("big-endian data ('" + descr + "') is not supported; save it little-endian");
    if (little) {
        if (kind == "f4") return {DType::F32, 4};
        if (kind == "f8") return {DType::F64, 8};
        if (kind == "i4") return {DType::I32, 4};
        if (kind == "i8") return {DType::I64, 8};
        if (kind == "u1") return {DType::I32, 1};
        if (kind == "b1") return {DType::Bool, 1};
    }
    ctx.fail("unsupported element type '" + descr + "' (supported: <f4 <f8 <i4 <i8 |u1 |b1)");
}

HostArray parse_npy_with(std::span<const unsigned char> bytes, const FileContext& ctx) {
    static constexpr unsigned char kMagic[] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
    if (bytes.size() < 10 || std::memcmp(bytes.data(), kMagic, 6) != 0)
        ctx.fail("bad magic (an .npy file starts with \\x93NUMPY)");
    LittleEndianReader in(bytes, ctx);
    unsigned major = bytes[6];
    if (major < 1 || major > 3)
        ctx.fail("unsupported .npy format version " + std::to_string(major) + "." +
                 std::to_string(bytes[7]));
    std::size_t length_bytes = major == 1 ? 2 : 4;
    auto header_length = in.get(8, length_bytes, "header length");
    std::size_t data_start = 8 + length_bytes + static_cast<std::size_t>(header_length);
    auto text = in.slice(8 + length_bytes, header_length, "header");
    NpyHeader h =
        HeaderParser({reinterpret_cast<const char*>(text.data()), text.size()}, ctx).parse();
    auto [dtype, item] = element_type(h.descr, ctx);
    std::int64_t count = 1;
    for (std::int64_t s : h.shape) {
        count *= s;
        if (count > (std::int64_t{1} << 40)) ctx.fail("implausibly large shape");
    }
    if (h.fortran_order && h.shape.size() > 1 && count > 1)
        ctx.fail("fortran-order arrays are not supported; save a C-order copy");
    std::size_t expected = static_cast<std::size_t>(count) * item;
    std::size_t actual = bytes.size() - std::min(bytes.size(), data_start);
    if (actual != expected)
        ctx.fail((actual < expected ? "truncated: " : "wrong length: ") + std::to_string(count) +
                 " elements of '" + h.descr + "' need " + std::to_string(expected) +
                 " bytes of data, the file has " + std::to_string(actual));
    HostArray out(h.shape, dtype);
    const unsigned char* data = bytes.data() + data_start;
    if (dtype == DType::Bool) {
        auto values = out.mutable_values<bool>();
        for (std::size_t i = 0; i < values.size(); ++i)
            values[i] = data[i] != 0;
    } else if (item == 1) {
        auto values = out.mutable_values<std::int32_t>();
        for (std::size_t i = 0; i < values.size(); ++i)
            values[i] = data[i];
    } else {
        std::memcpy(out.raw_mutable(), data, expected); // little-endian file, little-endian host
    }
    return out;
}

} // namespace

HostArray parse_npy(std::span<const unsigned char> bytes, const std::string& name) {
    return parse_npy_with(bytes, FileContext{"cannot read npy data '" + name + "'", ""});
}

HostArray read_npy(const std::string& path) {
    FileContext ctx{"cannot read npy file '" + path + "'", ""};
    return parse_npy_with(read_file_bytes(path, ctx), ctx);
}

std::map<std::string, HostArray> read_npz(const std::string& path) {
    FileContext ctx{"cannot read npz file '" + path + "'", ""};
    std::vector<unsigned char> bytes = read_file_bytes(path, ctx);
    std::map<std::string, HostArray> arrays;
    for_each_zip_member(bytes, ctx, [&](const std::string& name, std::vector<unsigned char> npy) {
        std::string key = name;
        if (key.size() > 4 && key.ends_with(".npy")) key.resize(key.size() - 4);
        if (arrays.count(key)) ctx.fail("the archive holds '" + key + "' twice");
        FileContext member_ctx{ctx.prefix + ": member '" + name + "'", ""};
        arrays.emplace(key, parse_npy_with(npy, member_ctx));
    });
    return arrays;
}

} // namespace hedra::nn
