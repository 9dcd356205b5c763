"""hedra: lazy arrays compiled by a polyhedral scheduler.

The C++ library's API in Python style (docs/python.md)::

    import numpy as np, hedra as hd
    a = hd.array(np.arange(6, dtype=np.float32).reshape(2, 3))   # borrowed, not copied
    y = hd.lazy(lambda x: hd.maximum(x * 2 - 3, 0), a)              # traced once on hd.Sym
    print(hd.compute(y))                                            # a read-only NumPy array
"""
from ._hedra import *  # noqa: F401,F403
from ._hedra import Error, aot, distributed, nn  # noqa: F401
from ._hedra import bool_, i32, i64, f32, f64, int32, int64, float32, float64  # noqa: F401

import builtins as _builtins
import sys as _sys

from . import _hedra

# `from hedra import *` leaves Python's own range, compile, sum, max, abs, ... alone.
__all__ = sorted(n for n in vars(_hedra) if not n.startswith("_") and not hasattr(_builtins, n))

# `import hedra.nn` and `from hedra.nn import linear` find the extension's submodules.
for _name, _module in (("nn", nn), ("distributed", distributed), ("aot", aot)):
    _sys.modules[__name__ + "." + _name] = _module
del _name, _module
del _sys, _builtins

__version__ = "0.1.0"
