'''mdxbench: our ReFrame library (base classes, site configuration, references, parsers).

The package is named ``mdxbench`` on purpose: it lives in the repository's ``reframe/``
folder but never shadows ReFrame's own ``reframe`` package.
'''
import pathlib

#: Root of the mdxbench repository (reframe/mdxbench/__init__.py -> ../..)
REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]

__version__ = '0.1.0'
