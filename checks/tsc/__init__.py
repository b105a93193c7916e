"""Paper D as an attnverify plugin: L. Bohbot, C. Letrouit, G. Peyre, F.-X. Vialard, *Token Sample Complexity of
Attention* (ICML 2026, arXiv:2512.10656). Model ``tsc``, checks ``tsc.*``, claims ``D.*``."""
