"""The array layer: the only place that names array libraries.

``namespace`` (namespaces, devices, dtypes, moving arrays, the host/device
switch), ``devices`` (choosing a GPU, uploads, waiting for a device),
``threads`` (the CPU pool and the BLAS limit), ``blocks`` (the one block
planner), ``numerics``, ``sparse`` (scipy/cupyx sparse operations) and
``class_sums`` (every per-class sum ``Yᵀ·Z``). Imports nothing else of nbgpu.
"""
