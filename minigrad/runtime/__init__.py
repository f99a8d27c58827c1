"""Process tuning for programs that own their process (the CLIs and the benchmarks).

``blas``: how many threads NumPy's BLAS may use. ``malloc``: let glibc keep freed memory for
the next training step. Neither is touched by importing a library module.
"""
