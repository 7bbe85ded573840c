'''ReFrame's deprecation warnings, not computed where ReFrame itself suppresses them.

ReFrame 4.10's ``user_deprecation_warning`` first walks the whole Python stack with
``inspect.stack()`` -- which reads the source line of every frame and maps every frame to
its module -- and only then hands the warning to ``warnings.warn``. ReFrame calls it twice
for every test instance it creates (``variables``, the deprecated alias of ``env_vars``, is
read and set when a test's variables are injected), inside its own
``suppress_deprecations()``, where the warning is then ignored. With this suite's 966
instances that walk is most of ReFrame's start-up: ``reframe -c checks/ -l --system local``
took 6.7-9.1 s, 4.0 s without it (2-core CI machine, 2026-11-27). Every ``reframe`` an
operator starts, every ``mdxbench accept`` and every fleet job paid it.

:func:`install` gives ReFrame's warnings module an ``inspect`` whose ``stack()`` is empty
where the warnings filter that Python would apply to a ``ReframeDeprecationWarning`` is an
unconditional ``ignore`` -- what ``suppress_deprecations()`` installs: ReFrame's function
then warns with no walk and Python ignores the warning, as it would have. Everywhere else
``stack()`` is ``inspect.stack()`` as ReFrame called it (the same frames, so the warning
points at the same line of the user's check) and ``inspect`` is Python's. No warning that
ReFrame would show is lost or moved (tests/unit/test_rfmwarnings.py). ``mdxbench.base``
installs it: every check gets it. Worth proposing upstream: the same test before the walk.
'''
import inspect
import sys
import warnings

import reframe.core.warnings as rfm_warnings


def ignored(category=rfm_warnings.ReframeDeprecationWarning):
    """True where the first filter of ``warnings.filters`` that applies to ``category``
    ignores it whatever its message, module and line -- Python's own rule (the first
    match decides). A filter that depends on the message or module: False (undecided
    here; Python decides when ReFrame warns)."""
    for action, message, cat, module, lineno in warnings.filters:
        if not issubclass(category, cat):
            continue
        unconditional = message is None and module is None and lineno == 0
        return unconditional and action == 'ignore'
    return False


class _Inspect:
    """Python's ``inspect`` for ReFrame's warnings module, but for ``stack()``."""

    def __getattr__(self, name):
        return getattr(inspect, name)

    @staticmethod
    def stack(context=1):
        if ignored():
            return []
        # the frames from our caller (ReFrame's function) outwards: inspect.stack() there
        return inspect.getouterframes(sys._getframe(1), context)


def install():
    """Once per process; installing it again changes nothing."""
    if not isinstance(rfm_warnings.inspect, _Inspect):
        rfm_warnings.inspect = _Inspect()
