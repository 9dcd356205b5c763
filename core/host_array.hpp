// HostArray: a dense, 0-based, row-major array in host memory, as `compute` returns it and as
// `array()` and compiled programs take it. Copies share the buffer (it is immutable once made,
// except that a compiled program may write its result into an input that was donated to it and
// that no other HostArray refers to; see unshared()).
// A device backend's result may have deferred contents (deferred_contents.hpp): its elements
// are copied from the device on the first access through raw(), values() or flat().
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/deferred_contents.hpp"
#include "core/dtype.hpp"
#include "core/error.hpp"

namespace hedra {

class HostArray {
public:
    HostArray() = default;
    // A zero-filled array.
    HostArray(std::vector<std::int64_t> sizes, DType dtype);
    // Wrap existing memory; `owner` keeps it alive (pass nullptr to borrow without ownership:
    // the caller keeps `data` alive as long as any copy of this HostArray).
    HostArray(std::vector<std::int64_t> sizes, DType dtype, std::shared_ptr<void> owner,
              void* data);
    // Wrap memory whose contents `pending` fills on first access (a device result).
    HostArray(std::vector<std::int64_t> sizes, DType dtype, std::shared_ptr<void> owner, void* data,
              std::shared_ptr<DeferredContents> pending);
    // Wrap memory that only `owner` refers to (a compiled program's result): like the
    // constructor above, but a program may take it when it is donated (unshared()).
    static HostArray sole(std::vector<std::int64_t> sizes, DType dtype, std::shared_ptr<void> owner,
                          void* data);
    template <class T>
    static HostArray from(std::vector<T> values, std::vector<std::int64_t> sizes);

    const std::vector<std::int64_t>& sizes() const { return sizes_; }
    int rank() const { return static_cast<int>(sizes_.size()); }
    DType dtype() const { return dtype_; }
    std::int64_t size() const; // element count
    std::size_t bytes() const { return static_cast<std::size_t>(size()) * dtype_size(dtype_); }
    const void* raw() const {
        wait();
        return data_;
    }
    void* raw_mutable() { // only while building a result
        wait();
        mark_changed();
        return data_;
    }
    // Where the elements are (or will be), without waiting for them: the array's identity.
    const void* address() const { return data_; }
    // The contents are still on their way (a device result nobody has read yet).
    bool pending() const { return pending_ && !pending_->done(); }
    void wait() const {
        if (pending_) pending_->wait();
    }
    // A device result whose elements were written on the host since (a backend holding a
    // device copy of it must upload it again).
    bool changed() const { return pending_ && pending_->changed(); }
    // Whether this HostArray is the only one referring to its memory, which hedra allocated
    // (not borrowed or wrapped, which someone else may still read): a program this array is
    // donated to may then overwrite it.
    bool unshared() const { return sole_owner_ && owner_ && owner_.use_count() == 1 && !pending_; }

    // Typed access; throws hedra::Error if T does not match dtype().
    template <class T>
    std::span<const T> values() const {
        check_type(dtype_of<T>(), "values");
        wait();
        return {static_cast<const T*>(data_), static_cast<std::size_t>(size())};
    }
    template <class T>
    std::span<T> mutable_values() {
        check_type(dtype_of<T>(), "mutable_values");
        wait();
        mark_changed();
        return {static_cast<T*>(data_), static_cast<std::size_t>(size())};
    }
    // Element at a 0-based multi-index, converted to double (any dtype).
    double at(const std::vector<std::int64_t>& index) const;
    double flat(std::int64_t i) const;       // element i in row-major order, as double
    void set_flat(std::int64_t i, double v); // converts as a C++ cast would
    std::vector<double> to_doubles() const;

    std::string to_string(int max_elements = 64) const;

private:
    void check_type(DType requested, const char* op) const; // op: the accessor, for errors
    void mark_changed() {
        if (pending_) pending_->mark_changed();
    }
    std::vector<std::int64_t> sizes_;
    DType dtype_ = DType::F32;
    std::shared_ptr<void> owner_;
    void* data_ = nullptr;
    std::shared_ptr<DeferredContents> pending_;
    bool sole_owner_ = false; // owner_ is the only reference to data_ outside HostArrays
};

template <class T>
HostArray HostArray::from(std::vector<T> values, std::vector<std::int64_t> sizes) {
    auto owned = std::make_shared<std::vector<T>>(std::move(values));
    HostArray a = sole(std::move(sizes), dtype_of<T>(), owned, owned->data());
    if (static_cast<std::size_t>(a.size()) != owned->size())
        throw Error("HostArray::from: " + std::to_string(owned->size()) +
                    " values do not fill sizes with " + std::to_string(a.size()) + " elements");
    return a;
}
template <>
HostArray HostArray::from<bool>(std::vector<bool> values, std::vector<std::int64_t> sizes);

} // namespace hedra
