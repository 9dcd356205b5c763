// IDX reading and validation (see idx_reader.hpp).
#include "nn/io/idx_reader.hpp"

#include <cstdio>
#include <cstring>

#include "core/error.hpp"
#include "nn/io/file_bytes.hpp"

namespace hedra::nn {

namespace {

constexpr std::int64_t kMaxElements = std::int64_t{1} << 40;

FileContext idx_context(const std::string& path) {
    return {"cannot read idx file '" + path + "'", "; " + mnist_data_hint()};
}

std::size_t element_size(IdxElement e) {
    switch (e) {
    case IdxElement::U8:
    case IdxElement::I8:
        return 1;
    case IdxElement::I16:
        return 2;
    case IdxElement::I32:
    case IdxElement::F32:
        return 4;
    case IdxElement::F64:
        return 8;
    }
    return 0;
}

const char* element_name(IdxElement e) {
    switch (e) {
    case IdxElement::U8:
        return "u8";
    case IdxElement::I8:
        return "i8";
    case IdxElement::I16:
        return "i16";
    case IdxElement::I32:
        return "i32";
    case IdxElement::F32:
        return "f32";
    case IdxElement::F64:
        return "f64";
    }
    return "?";
}

bool known_element(unsigned char code) {
    return code == 0x08 || code == 0x09 || code == 0x0B || code == 0x0C || code == 0x0D ||
           code == 0x0E;
}

std::uint64_t load_big_endian(const unsigned char* p, std::size_t n) {
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < n; ++i)
        v = v << 8 | p[i];
    return v;
}

std::string sizes_string(const std::vector<std::int64_t>& sizes) {
    std::string s = "(";
    for (std::size_t i = 0; i < sizes.size(); ++i)
        s += (i ? "," : "") + std::to_string(sizes[i]);
    return s + (sizes.size() == 1 ? ",)" : ")");
}

// Element i of the payload, as the file's own type widened to T.
template <class T>
T element_as(const IdxContents& c, std::int64_t i) {
    const unsigned char* p = c.payload.data() + i * element_size(c.element);
    switch (c.element) {
    case IdxElement::U8:
        return static_cast<T>(p[0]);
    case IdxElement::I8:
        return static_cast<T>(static_cast<std::int8_t>(p[0]));
    case IdxElement::I16:
        return static_cast<T>(static_cast<std::int16_t>(load_big_endian(p, 2)));
    case IdxElement::I32:
        return static_cast<T>(static_cast<std::int32_t>(load_big_endian(p, 4)));
    case IdxElement::F32: {
        auto bits = static_cast<std::uint32_t>(load_big_endian(p, 4));
        float f;
        std::memcpy(&f, &bits, 4);
        return static_cast<T>(f);
    }
    case IdxElement::F64: {
        std::uint64_t bits = load_big_endian(p, 8);
        double d;
        std::memcpy(&d, &bits, 8);
        return static_cast<T>(d);
    }
    }
    return T{};
}

template <class T>
void convert_into(const IdxContents& c, HostArray& out) {
    auto values = out.mutable_values<T>();
    for (std::size_t i = 0; i < values.size(); ++i)
        values[i] = element_as<T>(c, static_cast<std::int64_t>(i));
}

HostArray converted(const IdxContents& c, DType dtype) {
    HostArray out(c.sizes, dtype);
    switch (dtype) {
    case DType::Bool:
        convert_into<bool>(c, out);
        break;
    case DType::I32:
        convert_into<std::int32_t>(c, out);
        break;
    case DType::I64:
        convert_into<std::int64_t>(c, out);
        break;
    case DType::F32:
        convert_into<float>(c, out);
        break;
    case DType::F64:
        convert_into<double>(c, out);
        break;
    case DType::BF16:
    case DType::F16: // through f32, rounded to the format
        for (std::int64_t i = 0; i < out.size(); ++i)
            out.set_flat(i, static_cast<double>(element_as<float>(c, i)));
        break;
    }
    return out;
}

IdxContents parse_idx(std::span<const unsigned char> bytes, int expected_rank,
                      const FileContext& ctx) {
    if (bytes.size() < 4)
        ctx.fail("the file has " + std::to_string(bytes.size()) +
                 " bytes, too short for an idx header");
    unsigned magic = static_cast<unsigned>(load_big_endian(bytes.data(), 4));
    char hex[16];
    std::snprintf(hex, sizeof hex, "0x%08x", magic);
    if (bytes[0] != 0 || bytes[1] != 0 || !known_element(bytes[2]) || bytes[3] == 0)
        ctx.fail("bad magic number " + std::string(hex) +
                 " (an idx file starts with 0x00000801 to 0x00000803 for unsigned bytes)");
    IdxContents c;
    c.element = static_cast<IdxElement>(bytes[2]);
    int rank = bytes[3];
    if (expected_rank >= 0 && rank != expected_rank)
        ctx.fail("expected " + std::to_string(expected_rank) +
                 " dimensions, but the magic number " + hex + " says " + std::to_string(rank));
    std::size_t header = 4 + 4 * static_cast<std::size_t>(rank);
    if (bytes.size() < header)
        ctx.fail("truncated header: " + std::to_string(rank) + " dimensions need " +
                 std::to_string(header) + " bytes, the file has " + std::to_string(bytes.size()));
    std::int64_t count = 1;
    for (int axis = 0; axis < rank; ++axis) {
        auto size = static_cast<std::int64_t>(load_big_endian(bytes.data() + 4 + 4 * axis, 4));
        c.sizes.push_back(size);
        if (size == 0) ctx.fail("dimension " + std::to_string(axis) + " is 0");
        count *= size;
        if (count > kMaxElements)
            ctx.fail("dimensions " + sizes_string(c.sizes) + "... are implausibly large");
    }
    std::size_t expected = static_cast<std::size_t>(count) * element_size(c.element);
    std::size_t actual = bytes.size() - header;
    std::string what = sizes_string(c.sizes) + " " + element_name(c.element) + " elements";
    if (actual < expected)
        ctx.fail("truncated: " + what + " need " + std::to_string(expected) +
                 " bytes of data, the file has " + std::to_string(actual));
    if (actual > expected)
        ctx.fail(std::to_string(actual - expected) + " unexpected bytes after the " + what);
    c.payload.assign(bytes.begin() + static_cast<std::ptrdiff_t>(header), bytes.end());
    return c;
}

IdxContents read_checked(const std::string& path, int expected_rank, IdxElement element,
                         const char* kind) {
    IdxContents c = read_idx_contents(path, expected_rank);
    if (c.element != element)
        idx_context(path).fail(std::string(kind) + " must be " + element_name(element) +
                               " elements, the file holds " + element_name(c.element));
    return c;
}

} // namespace

std::string mnist_data_hint() {
    return "install Debian's dataset-fashion-mnist package (apt-get install "
           "dataset-fashion-mnist) or pass --data DIR with MNIST-format files";
}

IdxContents read_idx_contents(const std::string& path, int expected_rank) {
    FileContext ctx = idx_context(path);
    std::vector<unsigned char> bytes = read_file_bytes(path, ctx);
    if (is_gzip(bytes)) bytes = gunzip(bytes, ctx);
    return parse_idx(bytes, expected_rank, ctx);
}

HostArray read_idx(const std::string& path, DType dtype, int expected_rank) {
    return converted(read_idx_contents(path, expected_rank), dtype);
}

HostArray unit_scaled_f32(std::span<const std::uint8_t> pixels, std::vector<std::int64_t> sizes) {
    HostArray out(std::move(sizes), DType::F32);
    auto values = out.mutable_values<float>();
    if (values.size() != pixels.size())
        throw Error("unit_scaled_f32: " + std::to_string(pixels.size()) +
                    " pixels do not fill sizes with " + std::to_string(values.size()) +
                    " elements");
    for (std::size_t i = 0; i < pixels.size(); ++i)
        values[i] = static_cast<float>(pixels[i]) / 255.0f;
    return out;
}

HostArray read_idx_images(const std::string& path) {
    IdxContents c = read_checked(path, 3, IdxElement::U8, "images");
    return unit_scaled_f32(c.payload, c.sizes);
}

HostArray read_idx_labels(const std::string& path, DType dtype) {
    if (dtype != DType::I32 && dtype != DType::I64)
        throw Error("read_idx_labels: labels are read as i32 or i64, not " +
                    std::string(dtype_name(dtype)));
    IdxContents c = read_checked(path, 1, IdxElement::U8, "labels");
    return converted(c, dtype);
}

} // namespace hedra::nn
