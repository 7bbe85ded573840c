'''mdxbench.rfmwarnings: ReFrame's deprecation warnings skip their stack walk only where
ReFrame's own suppression would ignore them; every other warning is ReFrame's, unchanged
(same message, same category, pointing at the same line of the caller).'''
import inspect
import warnings

import pytest
import reframe.core.fields as rfm_fields
import reframe.core.variables as rfm_variables
import reframe.core.warnings as rfm_warnings
from reframe.core.warnings import ReframeDeprecationWarning, suppress_deprecations

from mdxbench import base, rfmwarnings


@pytest.fixture
def walks(monkeypatch):
    '''The stack walks ReFrame's function made (Python's getouterframes, which
    inspect.stack() is).'''
    calls = []
    real = inspect.getouterframes

    def counted(*a, **k):
        calls.append(1)
        return real(*a, **k)
    monkeypatch.setattr(inspect, 'getouterframes', counted)
    return calls


def test_the_checks_get_it():
    # mdxbench.base, which every check imports, installed it
    assert base.rfmwarnings is rfmwarnings
    assert isinstance(rfm_warnings.inspect, rfmwarnings._Inspect)
    rfmwarnings.install()
    assert rfm_warnings.inspect.getmodule is inspect.getmodule     # the rest is Python's


def test_a_suppressed_warning_walks_no_stack_and_is_not_shown(walks):
    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter('always')
        with suppress_deprecations():
            rfm_fields.user_deprecation_warning('old name, use the new one')
    assert shown == [] and walks == []


def _line_of(text):
    return next(i for i, ln in enumerate(open(__file__), 1) if text in ln)


@pytest.mark.parametrize('action', ['always', 'default', 'error'])
def test_a_warning_not_suppressed_is_reframes_own(walks, action):
    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter(action)
        if action == 'error':
            with pytest.raises(ReframeDeprecationWarning, match='old name'):
                rfm_variables.user_deprecation_warning('old name, use the new one')
        else:
            rfm_variables.user_deprecation_warning('old name, use the new one')  # here
    assert walks == [1]
    if action != 'error':
        assert [str(w.message) for w in shown] == ['old name, use the new one']
        assert shown[0].category is ReframeDeprecationWarning
        # ReFrame's stack level, as without this module: the line that called it
        assert (shown[0].filename, shown[0].lineno) == (__file__, _line_of('  # here'))


def test_an_ignore_that_depends_on_the_message_is_left_to_python(walks):
    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter('always')
        warnings.filterwarnings('ignore', message='another', category=ReframeDeprecationWarning)
        rfm_fields.user_deprecation_warning('old name, use the new one')
        rfm_fields.user_deprecation_warning('another old name')
    assert [str(w.message) for w in shown] == ['old name, use the new one']
    assert len(walks) == 2


def test_ignored_follows_pythons_first_match():
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', DeprecationWarning)     # applies to ReFrame's too
        assert rfmwarnings.ignored()
        warnings.simplefilter('always', ReframeDeprecationWarning)   # now first
        assert not rfmwarnings.ignored()
        warnings.simplefilter('ignore', UserWarning)              # another category: no say
        assert not rfmwarnings.ignored()
