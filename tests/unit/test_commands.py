'''Each command is a function with keyword arguments (issue 62 item 4, asv's
``Command.run``): the parser only parses and calls it, its defaults are the function's
own, and a Python caller gets what the command line gets.'''
import argparse
import inspect
import pathlib

import pytest

from mdxbench.post import cli
from mdxbench.post.commands import COMMANDS, regress, summary

FIXTURES = pathlib.Path(__file__).resolve().parents[1] / 'fixtures' / 'perflogs'


def _actions(parser):
    '''Every option of a command's parser and of its subcommands' parsers.'''
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            yield action
            for sub in dict.fromkeys(action.choices.values()):
                yield from _actions(sub)
        elif not isinstance(action, argparse._HelpAction) and action.dest != 'debug':
            yield action


def _parsers():
    ap = cli.build_parser()
    sub = next(a for a in ap._actions if isinstance(a, argparse._SubParsersAction))
    return {mod: sub.choices[mod.NAME] for mod in COMMANDS}


@pytest.mark.parametrize('mod', COMMANDS, ids=lambda m: m.NAME)
def test_a_commands_run_takes_its_options_as_keywords_and_holds_their_defaults(mod):
    params = inspect.signature(mod.run).parameters
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in params.values()), params
    actions = list(_actions(_parsers()[mod]))
    dests = {a.dest for a in actions}
    assert set(params) == dests, (set(params) ^ dests)
    for a in actions:
        p = params[a.dest]
        if p.default is inspect.Parameter.empty:
            # no default in Python: one the command line cannot leave out either
            assert a.required, (mod.NAME, a.dest)
        elif not isinstance(a, argparse._SubParsersAction):
            # the parser's default is the function's (a list where the option appends)
            assert a.default == (list(p.default) if isinstance(a, argparse._AppendAction)
                                 and p.default is not None else p.default), (mod.NAME, a.dest)


def test_the_parsers_defaults_come_from_the_functions_signature(monkeypatch):
    '''Written once: a default changed in ``run``'s signature is what --help says and what
    the parser gives.'''
    def run(*, paths=(), from_es=False, parquet=None, es_url=None, since_event=None,
            since=None, baseline_runs=7, latest_runs=3, min_effect=0.05, z=3.0, all=False,
            json_file=None):
        return 0

    monkeypatch.setattr(regress, 'run', run)
    assert cli.parse(['regress']).baseline_runs == 7


def test_a_command_called_as_a_function_does_what_its_command_line_does(capsys):
    history = str(FIXTURES / 'history-local')
    rc = cli.main(['regress', history, '--latest-runs', '2', '--all'])
    by_cli = capsys.readouterr()
    assert regress.run(paths=[history], latest_runs=2, all=True) == rc
    by_call = capsys.readouterr()
    assert by_call.out == by_cli.out and by_call.err == by_cli.err
    assert 'local' in by_call.out                  # the table of the history's series
    log = str(FIXTURES / 'local-debug-HpccStream.log')
    assert cli.main(['summary', log, '--no-es']) == summary.run(paths=[log], no_es=True) == 0
    out = capsys.readouterr().out
    half = len(out) // 2
    # the fixture's one perflog line holds six figures: six records, each command said so
    assert out[:half] == out[half:] and 'perflog records: 6 in all' in out[half:]
    with pytest.raises(TypeError, match='no_such_option'):
        summary.run(paths=[log], no_such_option=True)
