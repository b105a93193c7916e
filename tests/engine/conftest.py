"""Every model file a test module registers as a paper is unregistered when the module ends: under
``--dist loadfile`` a worker runs other directories' modules afterwards, and those expect the installed papers only
(a leaked two_signals put its sections in the LaTeX documents and its checks in the README's audit)."""
import pytest


@pytest.fixture(autouse=True, scope="module")
def _model_papers_unregistered_after_the_module():
    from attnverify.checks.registry import papers, remove_paper

    before = {p.model for p in papers()}
    yield
    for model in {p.model for p in papers()} - before:
        remove_paper(model)
