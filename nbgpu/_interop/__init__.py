"""nbgpu with the world around it: Dask, model files, streaming, output files.

Imports the models and the layers below them, never the application.
"""
