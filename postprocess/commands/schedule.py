'''``mdxbench schedule install|list|remove``: cycles run by Slurm's scrontab.'''
import json

from mdxbench.post import exits
from mdxbench.post.commands import options
from mdxbench.post.cycle import schedule
from mdxbench.post.site import text
from mdxbench.post.store.incidents import cycle_dir

NAME = 'schedule'
HELP = ('run `mdxbench cycle` on the cluster\'s own scheduler: an entry in your Slurm '
        'scrontab per system (ScronParameters=enable)')


def add_arguments(p):
    sub = p.add_subparsers(dest='action', required=True)
    ins = sub.add_parser('install', help='add (or replace) the cycle entry of a system')
    ins.add_argument('--system', required=True, type=options.known_system,
                     help='the system the cycle runs for')
    ins.add_argument('--at', required=True, help='cron time, quoted: e.g. 0 2 * * * (02:00 '
                     'daily), or @daily')
    ins.add_argument('--partition', help='partition of the cycle job itself (default: the '
                     'cluster\'s default partition)')
    ins.add_argument('--time', help='time limit of the cycle job '
                     '(default 04:00:00)')
    ins.add_argument('--scron-option', action='append', metavar='OPT',
                     help='a further sbatch option of the cycle job (e.g. --account=ops); '
                     'repeatable')
    ins.add_argument('--no-run', action='store_true', help='do not run the suite: ingest and '
                     'analyse what other jobs wrote')
    ins.add_argument('--notify-command', metavar='CMD', help='passed to the cycle')
    ins.add_argument('--state', help='state directory of the cycles (default: '
                     '<state>/cycle/<system>); the job\'s output goes there too')
    ins.add_argument('--site', type=options.output_dir,
                     help='directory of the published site (passed to the cycle)')
    ins.add_argument('reframe_args', nargs='*', metavar='REFRAME_OPTION',
                     help='after --: options for ReFrame (e.g. -t acceptance)')
    ls = sub.add_parser('list', help='the cycle entries of your crontab and their next job')
    ls.add_argument('--json', dest='as_json', action='store_true', help='as JSON')
    rm = sub.add_parser('remove', help='remove a system\'s entry (other lines stay)')
    rm.add_argument('--system', required=True, help='the system whose entry goes')


def run(*, action, system=None, at=None, partition=None, time='04:00:00', scron_option=(),
        no_run=False, notify_command=None, state=None, site=None, reframe_args=(),
        as_json=False):
    tab = schedule.Scrontab()
    if action == 'install':
        state = state or str(cycle_dir(system))
        cargs = schedule.cycle_args(state, run=not no_run, site=site,
                                    notify_command=notify_command,
                                    reframe_args=options.reframe_args(reframe_args))
        entry = schedule.install(tab, schedule.make_entry(
            system, at, cycle_args=cargs, state=state, time_limit=time,
            partition=partition, scron_options=scron_option))
        print(f'mdxbench schedule: {entry.system} at "{entry.at}" installed in your scrontab; '
              f'next job {schedule.next_start(entry.system) or "not queued yet"}; output in '
              f'{state}/scron-<jobid>.out')
        return 0
    if action == 'remove':
        gone = schedule.remove(tab, system)
        print(f'mdxbench schedule: {system}: ' + ('entry removed' if gone else
                                                         'no entry in your scrontab'))
        return exits.OK if gone else exits.FOUND
    entries = schedule.parse(tab.read())
    starts = schedule.next_starts(entries)
    if as_json:
        print(json.dumps(schedule.as_json(entries, starts), indent=1))
    else:
        print(text.schedule_table(entries, starts))
    return 0
