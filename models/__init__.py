"""Seq2seq models with attention, in NumPy through minigrad: the core a reader follows.

``recurrent`` (the GRU and LSTM cells, the bidirectional encoder), ``decoders`` (Bahdanau's
additive decoder and the scores), ``luong``, ``transformer``, ``seq2seq`` (``Seq2Seq``, its loss,
greedy and beam decoding), ``vocab``; ``kernels`` and ``fused`` are the faster equivalents the
application switches on. ``models.app`` is the application around them: toy tasks, training,
checkpoints and the command line ``python -m models`` (``python -m models.app`` lists what
else runs). Shape letters: B batch, S source length, T target length, H hidden, V vocabulary.
"""
