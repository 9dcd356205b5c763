// HostArray: buffers (64-byte aligned, zero-filled, shared by copies), checked typed and
// untyped element access, and printing. Element conversion follows ScalarValue::of, so host
// data and the reference interpreter agree on every cast.
#include "core/host_array.hpp"
#include "core/half.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "core/allocation.hpp"
#include "core/scalar_expr.hpp"

namespace hedra {
namespace {

std::string sizes_string(const std::vector<std::int64_t>& sizes) {
    std::string s = "(";
    for (std::size_t i = 0; i < sizes.size(); ++i)
        s += (i ? "," : "") + std::to_string(sizes[i]);
    return s + ")";
}

std::int64_t checked_size(const std::vector<std::int64_t>& sizes) {
    std::int64_t n = 1;
    bool overflow = false;
    for (std::size_t i = 0; i < sizes.size(); ++i) {
        if (sizes[i] < 0)
            throw Error("host array of shape " + sizes_string(sizes) + ": axis " +
                        std::to_string(i) + " has negative size " + std::to_string(sizes[i]));
        overflow = overflow || __builtin_mul_overflow(n, sizes[i], &n);
    }
    if (overflow && n != 0)
        throw Error("host array of shape " + sizes_string(sizes) +
                    " has too many elements: their count overflows 64 bits");
    return n;
}

std::string format_number(double v, DType t) {
    if (t == DType::Bool) return v != 0 ? "true" : "false";
    if (!is_float(t)) return std::to_string(static_cast<std::int64_t>(v));
    if (std::isnan(v)) return "nan"; // the sign of a NaN means nothing (0/0 gives -nan on x86)
    char buf[64];
    auto r = t != DType::F64 ? std::to_chars(buf, buf + sizeof buf, static_cast<float>(v))
                             : std::to_chars(buf, buf + sizeof buf, v);
    return std::string(buf, r.ptr);
}

// Element i exists and is backed by data.
void check_element(std::int64_t i, std::int64_t size, const void* data) {
    if (i < 0 || i >= size)
        throw Error("host array element " + std::to_string(i) + " is out of bounds for " +
                    std::to_string(size) + " elements");
    if (!data) throw Error("host array has no data (a default-constructed HostArray)");
}

} // namespace

HostArray::HostArray(std::vector<std::int64_t> sizes, DType dtype)
    : sizes_(std::move(sizes)), dtype_(dtype) {
    std::size_t count = static_cast<std::size_t>(checked_size(sizes_));
    if (count > (SIZE_MAX - 64) / dtype_size(dtype_))
        throw Error("host array " + sizes_string(sizes_) + ": out of memory");
    std::size_t bytes = count * dtype_size(dtype_);
    check_allocation(bytes, "host array " + sizes_string(sizes_) + " of " +
                                std::string(dtype_name(dtype_)));
    std::size_t padded = (bytes + 63) / 64 * 64;
    if (padded == 0) padded = 64; // a valid pointer even for an empty array
    void* p = std::aligned_alloc(64, padded);
    if (!p) throw Error("host array " + sizes_string(sizes_) + ": out of memory");
    std::memset(p, 0, padded);
    owner_ = std::shared_ptr<void>(p, [](void* q) { std::free(q); });
    data_ = p;
    sole_owner_ = true;
}

HostArray::HostArray(std::vector<std::int64_t> sizes, DType dtype, std::shared_ptr<void> owner,
                     void* data)
    : sizes_(std::move(sizes)), dtype_(dtype), owner_(std::move(owner)), data_(data) {
    if (checked_size(sizes_) > 0 && data_ == nullptr)
        throw Error("host array " + sizes_string(sizes_) + " wraps a null pointer");
}

HostArray::HostArray(std::vector<std::int64_t> sizes, DType dtype, std::shared_ptr<void> owner,
                     void* data, std::shared_ptr<DeferredContents> pending)
    : HostArray(std::move(sizes), dtype, std::move(owner), data) {
    pending_ = std::move(pending);
}

HostArray HostArray::sole(std::vector<std::int64_t> sizes, DType dtype, std::shared_ptr<void> owner,
                          void* data) {
    HostArray a(std::move(sizes), dtype, std::move(owner), data);
    a.sole_owner_ = a.owner_ != nullptr;
    return a;
}

template <>
HostArray HostArray::from<bool>(std::vector<bool> values, std::vector<std::int64_t> sizes) {
    HostArray a(std::move(sizes), DType::Bool);
    if (static_cast<std::size_t>(a.size()) != values.size())
        throw Error("HostArray::from: " + std::to_string(values.size()) +
                    " values do not fill sizes with " + std::to_string(a.size()) + " elements");
    auto* p = static_cast<std::uint8_t*>(a.data_);
    for (std::size_t i = 0; i < values.size(); ++i)
        p[i] = values[i] ? 1 : 0;
    return a;
}

std::int64_t HostArray::size() const {
    std::int64_t n = 1;
    for (auto s : sizes_)
        n *= s;
    return n;
}

void HostArray::check_type(DType requested, const char* op) const {
    const std::string what = std::string("HostArray::") + op + "<" +
                             std::string(dtype_name(requested)) + ">: host array of shape " +
                             sizes_string(sizes_);
    if (data_ == nullptr && size() > 0)
        throw Error(what + " has no data (a default-constructed HostArray)");
    if (requested != dtype_)
        throw Error(what + " has dtype " + std::string(dtype_name(dtype_)) + "; read it as " +
                    std::string(dtype_name(dtype_)) + " (values<" + dtype_cpp_name(dtype_) +
                    ">), or use at()/flat(), which convert to double");
}

double HostArray::at(const std::vector<std::int64_t>& index) const {
    auto bad = [&] {
        std::string s = "(";
        for (std::size_t i = 0; i < index.size(); ++i)
            s += (i ? "," : "") + std::to_string(index[i]);
        return Error("HostArray::at: index " + s + ") is out of bounds for shape " +
                     sizes_string(sizes_));
    };
    if (index.size() != sizes_.size()) throw bad();
    std::int64_t flat_index = 0;
    for (std::size_t i = 0; i < index.size(); ++i) {
        if (index[i] < 0 || index[i] >= sizes_[i]) throw bad();
        flat_index = flat_index * sizes_[i] + index[i];
    }
    return flat(flat_index);
}

double HostArray::flat(std::int64_t i) const {
    check_element(i, size(), data_);
    wait();
    switch (dtype_) {
    case DType::Bool:
        return static_cast<const std::uint8_t*>(data_)[i] != 0 ? 1.0 : 0.0;
    case DType::I32:
        return static_cast<const std::int32_t*>(data_)[i];
    case DType::I64:
        return static_cast<double>(static_cast<const std::int64_t*>(data_)[i]);
    case DType::F32:
        return static_cast<const float*>(data_)[i];
    case DType::F64:
        return static_cast<const double*>(data_)[i];
    case DType::BF16:
    case DType::F16:
        return half_to_f32(dtype_, static_cast<const std::uint16_t*>(data_)[i]);
    }
    return 0.0;
}

void HostArray::set_flat(std::int64_t i, double v) {
    check_element(i, size(), data_);
    wait(); // the other elements must not be overwritten by a late copy
    mark_changed();
    ScalarValue x = ScalarValue::of(v, dtype_);
    switch (dtype_) {
    case DType::Bool:
        static_cast<std::uint8_t*>(data_)[i] = x.i != 0;
        break;
    case DType::I32:
        static_cast<std::int32_t*>(data_)[i] = static_cast<std::int32_t>(x.i);
        break;
    case DType::I64:
        static_cast<std::int64_t*>(data_)[i] = x.i;
        break;
    case DType::F32:
        static_cast<float*>(data_)[i] = static_cast<float>(x.f);
        break;
    case DType::F64:
        static_cast<double*>(data_)[i] = x.f;
        break;
    case DType::BF16:
    case DType::F16:
        static_cast<std::uint16_t*>(data_)[i] = f32_to_half(dtype_, static_cast<float>(x.f));
        break;
    }
}

std::vector<double> HostArray::to_doubles() const {
    std::vector<double> out(static_cast<std::size_t>(size()));
    for (std::int64_t i = 0; i < size(); ++i)
        out[static_cast<std::size_t>(i)] = flat(i);
    return out;
}

// "f32 (2,3) [[1, 2, 3], [4, 5, 6]]"; after max_elements elements the rest is "...".
std::string HostArray::to_string(int max_elements) const {
    std::string out = std::string(dtype_name(dtype_)) + " " + sizes_string(sizes_) + " ";
    if (!data_ && size() > 0) return out + "<no data>";
    if (rank() == 0) return out + format_number(flat(0), dtype_);
    std::int64_t printed = 0;
    bool truncated = false;
    auto print_axis = [&](auto& self, int axis, std::int64_t base) -> void {
        out += "[";
        for (std::int64_t k = 0; k < sizes_[axis] && !truncated; ++k) {
            if (k) out += ", ";
            if (axis + 1 < rank()) {
                self(self, axis + 1, (base + k) * sizes_[axis + 1]);
            } else if (printed >= max_elements) {
                out += "...";
                truncated = true;
            } else {
                out += format_number(flat(base + k), dtype_);
                ++printed;
            }
        }
        out += "]";
    };
    print_axis(print_axis, 0, 0);
    return out;
}

} // namespace hedra
