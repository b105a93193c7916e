"""Paper B (mean-field transformers): the particle dynamics, quadrature and distances."""
