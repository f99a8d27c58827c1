"""Process tuning for programs that own their process (the CLIs and the benchmarks): ``blas``
(BLAS threads) and ``malloc`` (keep freed memory); importing a library module touches neither."""
