"""The application around the model: toy tasks and their data, the training loop, checkpoints,
run folders, pictures, comparisons and the command line (``python -m models``).

Nothing in ``models`` outside this package imports it.
"""
