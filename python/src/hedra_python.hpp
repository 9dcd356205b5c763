// What the binding files share: conversions between Python objects and hedra's values (NumPy
// and DLPack arrays to HostArray without copying where the layout allows, results back to
// read-only NumPy arrays sharing hedra's buffer), the Python caller's location for error
// messages, and one bind_* function per part of the API.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nanobind/nanobind.h>

#include "hedra.hpp"
#include "python_types.hpp"

namespace hedra::python {

namespace nb = nanobind;

// The file and line of the Python code that called into hedra, as a SourceLocation, so that
// errors say "created at model.py:12" rather than naming a binding file.
SourceLocation python_location();

// Calls a Python function from C++ code that handles hedra::Error (a Trainer falling back to a
// program per batch size): a hedra.Error raised through Python becomes hedra::Error again, with
// its message; any other Python exception passes as nb::python_error.
template <class... Args>
nb::object call_python(const nb::callable& f, Args&&... args);
// The Python class hedra.Error (set when the module is initialised).
nb::handle& error_type();

// hd.f32, "f32", numpy.float32 or np.dtype("float32").
DType to_dtype(nb::handle h);
// A hd.Shape, or a sequence of ints and hd.Range values (an int n is range(n)).
Shape to_shape(nb::handle h);
// None: {}; an int: {axis}; a sequence of ints.
std::vector<int> to_axes(nb::handle h);

// Any NumPy array, DLPack tensor, buffer, sequence or scalar as a HostArray. A C-contiguous CPU
// array of a hedra dtype is borrowed (the HostArray keeps the Python object alive); anything
// else, or `copy`, is converted (numpy.ascontiguousarray) first. `dtype` converts when given.
HostArray to_host_array(nb::handle h, std::optional<DType> dtype = std::nullopt, bool copy = false);
// A read-only NumPy array over the HostArray's buffer (no copy; it keeps the buffer alive).
NumpyArray to_numpy(const HostArray& a);
// Several results: one array, or a tuple of them when `single` is false.
NumpyResults to_numpy_results(const std::vector<HostArray>& results, bool single);

// An operand of lazy() and the operators: a hd.Array, a Python bool/int/float (a weak literal)
// or anything to_host_array takes (a leaf borrowing it). Empty when h is none of them.
std::optional<Operand> to_operand(nb::handle h);
Operand require_operand(nb::handle h, const char* op);
// A hd.Array, or anything to_host_array takes as a leaf.
Array to_array(nb::handle h, const char* op);
std::vector<Array> to_arrays(nb::handle sequence, const char* op);

// Lists: each item through to_host_array; HostArrays as NumPy arrays; Arrays as hd.Array.
std::vector<HostArray> to_host_arrays(nb::handle sequence);
NumpyArrayList to_numpy_list(const std::vector<HostArray>& arrays);
ArrayList to_array_list(const std::vector<Array>& arrays);
// ({name: array}, metadata), as checkpoints and safetensors files are given to Python.
CheckpointTuple checkpoint_tuple(const std::vector<std::string>& names,
                                 const std::vector<HostArray>& arrays,
                                 const std::map<std::string, std::string>& metadata);

void bind_core(nb::module_& m);        // DType, Range, Shape, Array and its operators, leaves
void bind_trace(nb::module_& m);       // Sym, lazy, reduce, where and the math functions
void bind_library(nb::module_& m);     // reshape/view/fuse/stack, matmul, sum, ...
void bind_compute(nb::module_& m);     // compute, compile, backends
void bind_graph_file(nb::module_& m);  // save_graph, load_graph
void bind_ad(nb::module_& m);          // grad, vjp, stop_gradient, check_gradient
void bind_nn(nb::module_& m);          // hedra.nn: layers, optimizers, models
void bind_training(nb::module_& nn);   // hedra.nn: TrainStep, Trainer
void bind_nn_io(nb::module_& nn);      // hedra.nn: safetensors, MNIST data
void bind_distributed(nb::module_& m); // hedra.distributed: init, Communicator, DataParallelTrainer
void bind_aot(nb::module_& m);         // hedra.aot: compile_library

template <class... Args>
nb::object call_python(const nb::callable& f, Args&&... args) {
    try {
        return f(std::forward<Args>(args)...);
    } catch (nb::python_error& e) {
        if (e.matches(error_type())) throw Error(nb::cast<std::string>(nb::str(e.value())));
        throw;
    }
}

} // namespace hedra::python
