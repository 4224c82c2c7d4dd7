"""Closed forms and mean-field theory, one module per idea: ``gaussian`` (quadrature), ``vanilla`` (wide
vanilla RNNs); chapters add theirs (``lsc``, ``meanfield``, ``roa``, ``memory``, ``relevancy``, ``fisher``)."""
