"""The derivation cache (attnverify.cache) loads nothing that another user could have written: a pickle in a
directory writable by group or others, in a file owned by someone else or reached through a symbolic link is
not unpickled (unpickling runs code). derive.py and formulas.py read and write only through it.

Each test plants an entry whose unpickling leaves a mark (creates a directory) under the exact name the code
reads, and shows it *is* loaded from a private directory, so the refusals are the rule at work, not a miss."""
from __future__ import annotations

import os
import pickle

import pytest

from attnverify import cache, derive, formulas


class Payload:
    """Unpickling it creates the directory ``mark`` (and yields LOADED)."""

    def __init__(self, mark):
        self.mark = str(mark)

    def __reduce__(self):
        return (_leave_mark, (self.mark,))


LOADED = ("loaded", ("a step",))           # shaped as derive's entries: (title, steps)


def _leave_mark(mark: str) -> tuple:
    os.mkdir(mark)
    return LOADED


@pytest.fixture
def root(tmp_path, monkeypatch):
    r = tmp_path / "cache"
    (r / cache.SUBDIR).mkdir(parents=True)
    r.chmod(0o700)
    (r / cache.SUBDIR).chmod(0o700)
    monkeypatch.setenv(cache.ENV_DIR, str(r))
    monkeypatch.delenv(cache.ENV_OFF, raising=False)
    monkeypatch.setattr(cache, "_warned", set())
    return r


def plant(root, name: str, mark) -> None:
    path = root / cache.SUBDIR / name
    path.write_bytes(pickle.dumps(Payload(mark)))
    path.chmod(0o600)


def test_a_private_entry_is_loaded(root, tmp_path):
    plant(root, "x.pickle", tmp_path / "mark")
    assert cache.load("x.pickle") == (True, LOADED) and (tmp_path / "mark").is_dir()


@pytest.mark.parametrize("where", ["root", "subdir", "entry"])
@pytest.mark.parametrize("bits", [0o020, 0o002])
def test_nothing_is_loaded_where_others_can_write(root, tmp_path, capsys, where, bits):
    plant(root, "x.pickle", tmp_path / "mark")
    target = {"root": root, "subdir": root / cache.SUBDIR, "entry": root / cache.SUBDIR / "x.pickle"}[where]
    target.chmod(target.stat().st_mode | bits)
    assert cache.load("x.pickle") == (False, None)
    assert not (tmp_path / "mark").exists()
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "writable by others" in err
    if where != "entry":
        cache.save("y.pickle", 1)                        # nor is anything written into such a directory
        assert not (root / cache.SUBDIR / "y.pickle").exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root")
def test_nothing_is_loaded_from_another_users_file(root, tmp_path, capsys):
    plant(root, "x.pickle", tmp_path / "mark")
    os.chown(root / cache.SUBDIR / "x.pickle", 65534, 65534)
    assert cache.load("x.pickle") == (False, None) and not (tmp_path / "mark").exists()
    assert "owned by uid 65534" in capsys.readouterr().err


def test_a_symbolic_link_entry_is_not_followed(root, tmp_path):
    elsewhere = tmp_path / "elsewhere.pickle"
    elsewhere.write_bytes(pickle.dumps(Payload(tmp_path / "mark")))
    (root / cache.SUBDIR / "x.pickle").symlink_to(elsewhere)
    assert cache.load("x.pickle") == (False, None) and not (tmp_path / "mark").exists()


def test_a_linked_root_is_judged_by_its_target(tmp_path, root, monkeypatch):
    link = tmp_path / "link"
    link.symlink_to(root)
    monkeypatch.setenv(cache.ENV_DIR, str(link))
    plant(root, "x.pickle", tmp_path / "mark")
    assert cache.load("x.pickle") == (True, LOADED)
    root.chmod(0o777)
    assert cache.trusted_root() is None


def test_new_directories_and_entries_are_private(tmp_path, monkeypatch):
    monkeypatch.setenv(cache.ENV_DIR, str(tmp_path / "new" / "cache"))
    old = os.umask(0o022)
    try:
        cache.save("e.pickle", {"a": 1})
    finally:
        os.umask(old)
    entry = tmp_path / "new" / "cache" / cache.SUBDIR / "e.pickle"
    assert entry.stat().st_mode & 0o777 == 0o600
    assert (tmp_path / "new" / "cache").stat().st_mode & 0o777 == 0o700
    assert cache.load("e.pickle") == (True, {"a": 1})


def w(sign: str = "fixed") -> str:
    """A stand-in closed form for formulas' cache wrapper."""
    return "computed"


def test_derive_and_formulas_read_only_through_the_rule(root, tmp_path, monkeypatch):
    """The names derive's derivation and formulas' closed forms read, planted: loaded while the directory is
    private, ignored (recomputed) once others can write it."""
    from attnverify.checks.registry import paper

    monkeypatch.setattr(derive, "code_version", lambda: "v")
    monkeypatch.setattr(derive, "_compute", lambda model, values: ("computed", ["computed"]))
    plant(root, derive._cache_name("meanfield", paper("meanfield").options({})) + ".pickle", tmp_path / "m1")
    plant(root, f"{__name__}.w-fixed-v.pickle", tmp_path / "m2")
    cached_w = formulas._persistent(w)
    assert derive.derivation("meanfield") == ["a step"] and cached_w() == LOADED
    for m in ("m1", "m2"):
        os.rmdir(tmp_path / m)
    root.chmod(0o777)
    assert derive.derivation("meanfield") == ["computed"] and cached_w() == "computed"
    assert not (tmp_path / "m1").exists() and not (tmp_path / "m2").exists()
