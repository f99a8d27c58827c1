"""Seq2seq models with attention, on minigrad: ``recurrent`` (GRU and LSTM cells, the encoder),
``decoders``, ``luong``, ``transformer``, ``seq2seq`` (``Seq2Seq``, its loss, greedy and beam
decoding), ``vocab``; ``kernels`` and ``fused`` are the faster equivalents the application
switches on. ``models.app`` is the application (``python -m models``; ``python -m models.app``
lists what else runs). Shape letters: B batch, S source length, T target length, V vocabulary.
"""
