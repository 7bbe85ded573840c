'''mdxbench schedule's crontab entries: what an entry carries (and refuses to), how ours
are found among a user's own lines, and how one goes without touching the others. The
real scrontab and Slurm are in tests/integration/test_schedule.py.'''
import pytest

from mdxbench.post.cycle import schedule

OWN = '# my backups\n#SCRON --time=5\n30 3 * * * rsync -a /home /backup\n'


def entry(system='mdx2', at='0 2 * * *', env=None, **kw):
    return schedule.make_entry(system, at, cycle_args=schedule.cycle_args(
        '/s/cycle/' + system, reframe_args=['-t', 'acceptance']), state='/tmp/mdx-sched-test',
        env=env if env is not None else {'MDXBENCH_STATE_DIR': '/s', 'PATH': '/usr/bin'}, **kw)


def test_an_entry_round_trips_through_a_users_crontab():
    e = entry(partition='service', scron_options=['--account=ops'])
    text = OWN + '\n'.join(schedule.block(e)) + '\n' + '@daily echo mine\n'
    [back] = schedule.parse(text)
    assert (back.system, back.at, back.disabled) == ('mdx2', '0 2 * * *', False)
    assert back.options == e.options and '--partition=service' in back.options
    assert back.job_options() == ['--time=04:00:00', '--partition=service', '--account=ops']
    assert back.cycle_args() == ('--system mdx2 --run --state /s/cycle/mdx2 -- -t acceptance')
    assert 'MDXBENCH_STATE_DIR=/s' in back.command
    # removing it gives the user's lines back, byte for byte
    assert schedule.without(text, 'mdx2') == OWN + '@daily echo mine\n'
    assert schedule.without(text, 'laurel') == text


def test_two_systems_replace_and_remove_independently():
    text = '\n'.join(schedule.block(entry('mdx2')) + schedule.block(entry('laurel'))) + '\n'
    assert [e.system for e in schedule.parse(text)] == ['mdx2', 'laurel']
    assert [e.system for e in schedule.parse(schedule.without(text, 'mdx2'))] == ['laurel']


def test_a_line_scrontab_disabled_is_reported_as_disabled():
    lines = schedule.block(entry())
    lines[2] = '#DISABLED: ' + lines[2]
    [e] = schedule.parse('\n'.join(lines))
    assert e.disabled and e.at == '0 2 * * *'


def test_a_secret_is_never_written_into_the_crontab():
    with pytest.raises(ValueError, match='MDXBENCH_ES_API_KEY is set.*0600.*MDXBENCH_ES_API_KEY_FILE'):
        entry(env={'MDXBENCH_ES_API_KEY': 'c2VjcmV0OmtleQ==', 'PATH': '/usr/bin'})
    e = entry(env={'MDXBENCH_ES_API_KEY_FILE': '/etc/mdx/key', 'PATH': '/usr/bin'})
    assert 'MDXBENCH_ES_API_KEY_FILE=/etc/mdx/key' in e.command


@pytest.mark.parametrize('at', ['0 2 * *', 'daily', '0 2 * * * *', '0 two * * *'])
def test_a_wrong_cron_time_names_the_option(at):
    with pytest.raises(ValueError, match=r'--at .* is not a cron time'):
        schedule.check_at(at)


def test_cron_times_scrontab_takes_pass():
    assert schedule.check_at('*/15  2-4 * * 1-5') == '*/15 2-4 * * 1-5'
    assert schedule.check_at('@daily') == '@daily'


def test_no_scrontab_on_path_is_a_clear_error(monkeypatch, tmp_path):
    monkeypatch.setenv('PATH', str(tmp_path))
    with pytest.raises(schedule.ScheduleError, match='scrontab not found on PATH.*cron or a systemd timer'):
        schedule.Scrontab()
