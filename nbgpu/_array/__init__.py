"""The array layer: the only place that names array libraries.

``namespace`` (namespaces, devices, dtypes, moving arrays, the host/device
switch), ``devices`` (choosing a GPU, uploads, waiting for a device),
``threads`` (the CPU pool and the BLAS limit), ``blocks`` (the one block
planner), ``numerics``, ``sparse`` (scipy/cupyx sparse operations) and
``class_sums`` (every per-class sum ``Yᵀ·Z``). Imports nothing else of nbgpu.
"""

import numpy as _numpy

if int(_numpy.__version__.split(".")[0]) < 2:
    # numpy 2 is where ndarray implements the Array API standard (.device,
    # to_device, astype) that every model here is written against.
    raise ImportError(f"nbgpu needs numpy >= 2.0; numpy {_numpy.__version__} is installed.")
