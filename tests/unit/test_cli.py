'''The command line: a command's options anywhere before ``--``, ReFrame's after it.'''
import pytest

from mdxbench.post import cli


def test_options_after_a_positional_are_the_commands_own():
    '''``mdxbench bench cycle --series 2000 --scales 1,3`` measures 2,000 series at 1x and
    3x (argparse's REMAINDER took them for ReFrame's options and the bench ran its
    defaults).'''
    args = cli.parse(['bench', 'cycle', '--series', '2000', '--scales', '1,3'])
    assert (args.what, args.series, args.scales, list(args.reframe_args)) == \
        ('cycle', 2000, '1,3', [])


def test_what_follows_the_double_dash_is_reframe_s():
    args = cli.parse(['bench', 'accept', '--max-jobs', '2', '--', '-n', 'HpccHpl', '-S',
                      'x=1'])
    assert (args.max_jobs, args.reframe_args) == (2, ['-n', 'HpccHpl', '-S', 'x=1'])
    args = cli.parse(['cycle', '--system', 'local', '--run', '--', '-t', 'acceptance'])
    assert (args.system, args.run, args.reframe_args) == ('local', True, ['-t', 'acceptance'])


def test_reframe_options_to_a_command_without_them_are_refused(capsys):
    with pytest.raises(SystemExit):
        cli.parse(['changes', '--', '-n', 'X'])
    assert 'changes takes no ReFrame options (after --: -n X)' in capsys.readouterr().err


def test_help_shows_each_option_s_default(capsys):
    '''--help says what an option is when not given (argparse's default, unless the help
    says it already), and exits 0.'''
    assert cli.main(['accept', '--help']) == 0
    out = ' '.join(capsys.readouterr().out.split())
    assert 'seconds between two looks at the queue (squeue) (default: 5.0)' in out
    assert "median that make an outlier (default: 3.0)" in out
    assert "of each node's job (default: 30:00)" in out
    # a help that says its default is not told twice
    assert out.count('(default 1)') == 1 and 'default 1) (default' not in out
