"""Paper C (Marion, Berthier, Biau, Boyer, *Attention layers provably solve single-location regression*, ICLR 2025)
as an attnverify plugin: model ``slr``, checks ``slr.*``, claims ``C.*`` (adapter: ``plugin.PAPER``)."""
