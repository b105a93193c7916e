"""Installs the repository's top-level folders under one namespace: ``theory/`` as ``attnverify.theory``,
``numerics/`` as ``attnverify.numerics`` and ``checks/`` as ``attnverify.checks`` (with every subpackage found
there, so a new paper's package under ``checks/`` needs no edit here), and the application's own subpackages
(``attnverify/cli``, ``attnverify/render``, ...). Everything else is in pyproject.toml."""
from setuptools import find_packages, setup

FOLDERS = ("theory", "numerics", "checks")
packages = ["attnverify", *(f"attnverify.{p}" for p in find_packages("attnverify")),
            *(f"attnverify.{p}" for p in find_packages(include=[f"{f}*" for f in FOLDERS]))]
setup(packages=packages, package_dir={"attnverify": "attnverify", **{f"attnverify.{f}": f for f in FOLDERS}})
