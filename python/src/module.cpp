// The extension module hedra._hedra; python/hedra/__init__.py re-exports it.
#include "hedra_python.hpp"

NB_MODULE(_hedra, m) {
    using namespace hedra::python;
    m.doc() = "hedra: lazy arrays compiled by a polyhedral scheduler";
    error_type() = nb::exception<hedra::Error>(m, "Error");
    // Lazy graphs hold borrowed NumPy buffers and Python callables (a model's forward) from C++,
    // out of the cycle collector's sight; what is alive at exit is reported as a "leak".
    nb::set_leak_warnings(false);
    bind_core(m);
    bind_trace(m);
    bind_library(m);
    bind_compute(m);
    bind_graph_file(m);
    bind_ad(m);
    bind_nn(m);
    bind_distributed(m);
    bind_aot(m);
}
