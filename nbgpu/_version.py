"""The version of nbgpu (read by the packaging metadata and by model files)."""

__version__ = "0.1.0"
