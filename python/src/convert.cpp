// Conversions between Python objects and hedra values (hedra_python.hpp).
#include <cstring>
#include <map>
#include <mutex>
#include <string>

#include <nanobind/ndarray.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/string.h>

#include "hedra_python.hpp"

namespace hedra::python {

using namespace nb::literals;

namespace {

// libstdc++'s std::source_location is one pointer to {file, function, line, column}; a
// location built from Python's frame takes that layout, its strings interned for the process.
struct LocationRecord {
    const char* file;
    const char* function;
    unsigned line;
    unsigned column;
};

SourceLocation make_location(const std::string& file, unsigned line) {
#if defined(__GLIBCXX__) && defined(__cpp_lib_source_location)
    static_assert(sizeof(SourceLocation) == sizeof(const LocationRecord*));
    // Never freed: arrays keep their sites for as long as they live.
    static std::mutex mutex;
    static auto* sites = new std::map<std::pair<std::string, unsigned>, LocationRecord*>();
    std::lock_guard<std::mutex> lock(mutex);
    auto [it, added] = sites->try_emplace({file, line}, nullptr);
    if (added) it->second = new LocationRecord{it->first.first.c_str(), "<python>", line, 0};
    const LocationRecord* record = it->second;
    SourceLocation loc;
    std::memcpy(static_cast<void*>(&loc), &record, sizeof loc);
    return loc;
#else
    (void)file;
    (void)line;
    return SourceLocation{};
#endif
}

DType dtype_of_dlpack(nb::dlpack::dtype t, bool& ok) {
    ok = true;
    if (t == nb::dtype<float>()) return DType::F32;
    if (t == nb::dtype<double>()) return DType::F64;
    if (t == nb::dtype<std::int32_t>()) return DType::I32;
    if (t == nb::dtype<std::int64_t>()) return DType::I64;
    if (t == nb::dtype<bool>()) return DType::Bool;
    if (t.bits == 16 && t.lanes == 1) {
        if (t.code == static_cast<std::uint8_t>(nb::dlpack::dtype_code::Float)) return DType::F16;
        if (t.code == static_cast<std::uint8_t>(nb::dlpack::dtype_code::Bfloat)) return DType::BF16;
    }
    ok = false;
    return DType::F32;
}

nb::dlpack::dtype dlpack_of(DType t) {
    switch (t) {
    case DType::Bool:
        return nb::dtype<bool>();
    case DType::I32:
        return nb::dtype<std::int32_t>();
    case DType::I64:
        return nb::dtype<std::int64_t>();
    case DType::F32:
        return nb::dtype<float>();
    case DType::F64:
        return nb::dtype<double>();
    case DType::F16:
        return {static_cast<std::uint8_t>(nb::dlpack::dtype_code::Float), 16, 1};
    case DType::BF16:
        return {static_cast<std::uint8_t>(nb::dlpack::dtype_code::Bfloat), 16, 1};
    }
    return nb::dtype<float>();
}

// NumPy's name of the hedra dtype an unsupported dtype converts to (float16 -> float32,
// uint8 -> int32, ...).
const char* numpy_name(DType t) {
    switch (t) {
    case DType::Bool:
        return "bool";
    case DType::I32:
        return "int32";
    case DType::I64:
        return "int64";
    case DType::F32:
        return "float32";
    case DType::F64:
        return "float64";
    case DType::F16:
        return "float16";
    case DType::BF16: // NumPy has no bfloat16: values pass through float32
        return "float32";
    }
    return "float32";
}

// Kept for the process's life: a static nb::object would be released after Python finalizes.
nb::handle numpy() {
    static nb::handle np = nb::module_::import_("numpy").release();
    return np;
}

// The hedra dtype a NumPy dtype of another kind converts to.
DType nearest_dtype(nb::handle np_dtype) {
    const std::string kind = nb::cast<std::string>(np_dtype.attr("kind"));
    const int size = nb::cast<int>(np_dtype.attr("itemsize"));
    if (kind == "b") return DType::Bool;
    if (kind == "f") return size == 2 ? DType::F16 : size <= 4 ? DType::F32 : DType::F64;
    if (kind == "i" || kind == "u")
        return size < 4 || (kind == "i" && size == 4) ? DType::I32 : DType::I64;
    throw Error("hd.array: NumPy dtype " + nb::cast<std::string>(nb::str(np_dtype)) +
                " has no hedra dtype; use bool, int32, int64, float32 or float64");
}

// Keeps a Python object alive while hedra holds its memory; the GIL is taken to release it.
std::shared_ptr<void> python_owner(nb::object obj) {
    return std::shared_ptr<void>(obj.release().ptr(), [](void* p) {
        if (!Py_IsInitialized()) return;
        nb::gil_scoped_acquire gil;
        Py_DECREF(static_cast<PyObject*>(p));
    });
}

bool c_contiguous(const nb::ndarray<>& a) {
    std::int64_t expected = 1;
    for (int i = static_cast<int>(a.ndim()) - 1; i >= 0; --i) {
        if (a.shape(i) != 1 && a.stride(i) != expected) return false;
        expected *= static_cast<std::int64_t>(a.shape(i));
    }
    return true;
}

} // namespace

nb::handle& error_type() {
    static nb::handle type;
    return type;
}

SourceLocation python_location() {
    PyFrameObject* frame = PyEval_GetFrame();
    if (!frame) return SourceLocation{};
    PyCodeObject* code = PyFrame_GetCode(frame);
    nb::str file = nb::borrow<nb::str>(code->co_filename);
    const int line = PyFrame_GetLineNumber(frame);
    Py_DECREF(code);
    return make_location(file.c_str(), static_cast<unsigned>(line));
}

DType to_dtype(nb::handle h) {
    if (nb::isinstance<DType>(h)) return nb::cast<DType>(h);
    if (nb::isinstance<nb::str>(h)) {
        std::string name = nb::cast<std::string>(h);
        for (DType t : kAllDTypes)
            if (name == dtype_name(t)) return t;
        if (name == "bfloat16") return DType::BF16;
    }
    nb::object d = numpy().attr("dtype")(h);
    const std::string name = nb::cast<std::string>(d.attr("name"));
    if (name == "float32") return DType::F32;
    if (name == "float64") return DType::F64;
    if (name == "float16") return DType::F16;
    if (name == "int32") return DType::I32;
    if (name == "int64") return DType::I64;
    if (name == "bool") return DType::Bool;
    throw Error("dtype " + name +
                " is not one of hedra's: bool, int32, int64, float32, float64, float16, bfloat16");
}

Shape to_shape(nb::handle h) {
    if (nb::isinstance<Shape>(h)) return nb::cast<Shape>(h);
    if (nb::isinstance<nb::int_>(h)) return Shape{range(nb::cast<std::int64_t>(h))};
    std::vector<Range> ranges;
    for (nb::handle item : h) {
        if (nb::isinstance<Range>(item))
            ranges.push_back(nb::cast<Range>(item));
        else
            ranges.push_back(range(nb::cast<std::int64_t>(item)));
    }
    return Shape(std::move(ranges));
}

std::vector<int> to_axes(nb::handle h) {
    if (h.is_none()) return {};
    if (nb::isinstance<nb::int_>(h)) return {nb::cast<int>(h)};
    std::vector<int> axes;
    for (nb::handle item : h)
        axes.push_back(nb::cast<int>(item));
    return axes;
}

HostArray to_host_array(nb::handle h, std::optional<DType> dtype, bool copy) {
    nb::ndarray<> a;
    if (!copy && nb::try_cast(h, a, false) && a.device_type() == nb::device::cpu::value) {
        bool known = false;
        const DType t = dtype_of_dlpack(a.dtype(), known);
        if (known && (!dtype || *dtype == t) && c_contiguous(a)) {
            std::vector<std::int64_t> sizes(a.ndim());
            for (std::size_t i = 0; i < a.ndim(); ++i)
                sizes[i] = static_cast<std::int64_t>(a.shape(i));
            return HostArray(std::move(sizes), t, python_owner(nb::borrow(h)), a.data());
        }
    }
    // Convert with NumPy: a copy in a dtype and layout hedra takes, then borrow that.
    nb::object converted;
    if (nb::hasattr(h, "__dlpack__") && !nb::hasattr(h, "__array_interface__") &&
        !nb::hasattr(h, "__array__"))
        h = numpy().attr("from_dlpack")(h);
    nb::object arr = numpy().attr("asarray")(h);
    const DType target = dtype ? *dtype : nearest_dtype(arr.attr("dtype"));
    converted = numpy().attr("array")(arr, "dtype"_a = numpy_name(target), "order"_a = "C",
                                      "copy"_a = true);
    if (!nb::try_cast(converted, a, false))
        throw Error("hd.array: NumPy's conversion gave no array");
    std::vector<std::int64_t> sizes(a.ndim());
    for (std::size_t i = 0; i < a.ndim(); ++i)
        sizes[i] = static_cast<std::int64_t>(a.shape(i));
    if (target == DType::BF16) { // float32 from NumPy, rounded into a copy
        HostArray f32(sizes, DType::F32, python_owner(converted), a.data());
        HostArray out(std::move(sizes), DType::BF16);
        for (std::int64_t i = 0; i < out.size(); ++i)
            out.set_flat(i, f32.flat(i));
        return out;
    }
    return HostArray(std::move(sizes), target, python_owner(converted), a.data());
}

NumpyArray to_numpy(const HostArray& a) {
    if (a.dtype() == DType::BF16) { // NumPy has no bfloat16: a float32 copy of the values
        HostArray wide(a.sizes(), DType::F32);
        for (std::int64_t i = 0; i < a.size(); ++i)
            wide.set_flat(i, a.flat(i));
        return to_numpy(wide);
    }
    auto* keep = new HostArray(a);
    nb::capsule owner(keep, [](void* p) noexcept { delete static_cast<HostArray*>(p); });
    std::vector<std::size_t> shape(a.sizes().begin(), a.sizes().end());
    nb::ndarray<nb::numpy, nb::ro> out(const_cast<void*>(keep->raw()), shape.size(), shape.data(),
                                       owner, nullptr, dlpack_of(a.dtype()));
    return NumpyArray(nb::cast(std::move(out), nb::rv_policy::reference));
}

NumpyResults to_numpy_results(const std::vector<HostArray>& results, bool single) {
    if (single) return NumpyResults(to_numpy(results.at(0)));
    nb::list out;
    for (const HostArray& r : results)
        out.append(to_numpy(r));
    return NumpyResults(nb::tuple(out));
}

std::optional<Operand> to_operand(nb::handle h) {
    SourceLocation loc = python_location();
    if (nb::isinstance<Array>(h)) return Operand(nb::cast<const Array&>(h), loc);
    if (nb::isinstance<nb::bool_>(h)) return Operand(nb::cast<bool>(h), loc);
    if (nb::isinstance<nb::int_>(h)) return Operand(nb::cast<std::int64_t>(h), loc);
    if (nb::isinstance<nb::float_>(h)) return Operand(nb::cast<double>(h), loc);
    if (nb::hasattr(h, "__dlpack__") || nb::hasattr(h, "__array_interface__") ||
        nb::isinstance<nb::list>(h) || nb::isinstance<nb::tuple>(h))
        return Operand(array(to_host_array(h), loc), loc);
    return std::nullopt;
}

Operand require_operand(nb::handle h, const char* op) {
    if (auto o = to_operand(h)) return *o;
    throw nb::type_error((std::string(op) +
                          ": expected a hd.Array, an array-like or a number, got " +
                          nb::cast<std::string>(nb::str(h.type())))
                             .c_str());
}

Array to_array(nb::handle h, const char* op) {
    if (nb::isinstance<Array>(h)) return nb::cast<Array>(h);
    if (nb::isinstance<nb::bool_>(h) || nb::isinstance<nb::int_>(h) ||
        nb::isinstance<nb::float_>(h) || nb::hasattr(h, "__dlpack__") ||
        nb::hasattr(h, "__array_interface__") || nb::isinstance<nb::list>(h) ||
        nb::isinstance<nb::tuple>(h))
        return array(to_host_array(h), python_location());
    throw nb::type_error((std::string(op) + ": expected a hd.Array or an array-like, got " +
                          nb::cast<std::string>(nb::str(h.type())))
                             .c_str());
}

std::vector<Array> to_arrays(nb::handle sequence, const char* op) {
    std::vector<Array> out;
    for (nb::handle item : sequence)
        out.push_back(to_array(item, op));
    return out;
}

std::vector<HostArray> to_host_arrays(nb::handle sequence) {
    std::vector<HostArray> out;
    for (nb::handle h : sequence)
        out.push_back(to_host_array(h));
    return out;
}

NumpyArrayList to_numpy_list(const std::vector<HostArray>& arrays) {
    nb::list out;
    for (const HostArray& a : arrays)
        out.append(to_numpy(a));
    return NumpyArrayList(std::move(out));
}

ArrayList to_array_list(const std::vector<Array>& arrays) {
    nb::list out;
    for (const Array& a : arrays)
        out.append(nb::cast(a));
    return ArrayList(std::move(out));
}

CheckpointTuple checkpoint_tuple(const std::vector<std::string>& names,
                                 const std::vector<HostArray>& arrays,
                                 const std::map<std::string, std::string>& metadata) {
    nb::dict out;
    for (std::size_t i = 0; i < names.size(); ++i)
        out[nb::str(names[i].c_str())] = to_numpy(arrays[i]);
    return CheckpointTuple(nb::make_tuple(out, nb::cast(metadata)));
}

} // namespace hedra::python
