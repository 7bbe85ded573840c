'''``mdxbench incident list|show|ack|split``: the regression incidents the cycles found;
``split`` runs the previous build beside the new one to tell the system's part from the
software's (:mod:`mdxbench.post.split`).'''
import pathlib

from mdxbench.post import exits
from mdxbench.post.analysis import changes, incidents
from mdxbench.post.commands import options
from mdxbench.post.cycle import loop
from mdxbench.post.site import text
from mdxbench.post.split import run as split_run, verdict
from mdxbench.post.store.incidents import IncidentFile, cycle_dir
from mdxbench.post.store.locks import state_lock

NAME = 'incident'
HELP = 'list, show, acknowledge or split the regression incidents of a system'


def _which(a, with_id=True):
    a.add_argument('--system', required=True, type=options.known_system, help='the system of the incidents')
    a.add_argument('--state', help='state directory of the cycles (default: '
                   '<state>/cycle/<system>)')
    if with_id:
        a.add_argument('id', help='the incident id (or a unique prefix of it)')
    return a


def add_arguments(p):
    sub = p.add_subparsers(dest='action', required=True)
    _which(sub.add_parser('list', help='the incidents, still regressing first'), with_id=False)
    _which(sub.add_parser('show', help='one incident as JSON'))
    ack = _which(sub.add_parser('ack', help='a person has seen it: no longer a new regression'))
    ack.add_argument('--note', required=True, help='why, and what is done about it')
    ack.add_argument('--by', help='who (default: unsaid)')
    sp = _which(sub.add_parser('split', help='run the previous build beside the new one on '
                               'the same node: was it the system or the software?'))
    sp.add_argument('--min-effect', type=options.fraction,
                    help='the smallest relative effect that counts (default: the change '
                    f'detector\'s, {changes.MIN_EFFECT})')
    sp.add_argument('--max-rounds', type=options.count,
                    help='rounds (one run of each build) at most, per check '
                    f'(default {verdict.MAX_ROUNDS}; fewer where the series is quiet)')
    sp.add_argument('--time-limit', help="each node's Slurm job's time "
                    "limit (default: sized from the recorded runs' job times, 1.5x each "
                    'and two minutes, two runs a round; 30:00 where they recorded none)')
    sp.add_argument('--perflogs', action='append', help='perflog directory whose specs/ '
                    'holds the builds\' concrete specs, and under which the split writes '
                    'its runs (default: $MDXBENCH_PERFLOG_DIR or <state>/perflogs)')


def run(*, action, system=None, state=None, id=None, note=None, by=None,
        min_effect=changes.MIN_EFFECT, max_rounds=verdict.MAX_ROUNDS, time_limit=None,
        perflogs=None):
    root = pathlib.Path(state) if state else cycle_dir(system)
    if action == 'split':
        return split(system, root, id, perflogs, min_effect=min_effect, max_rounds=max_rounds,
                     time_limit=time_limit)
    with state_lock(root / 'incidents.json', wait=60):
        store = IncidentFile(root / 'incidents.json')
        if action == 'list':
            print(text.incident_table(store.incidents))
            return 0
        if action == 'show':
            print(incidents.to_json(incidents.find(store.incidents, id)))
            return 0
        inc = incidents.acknowledge(store.incidents, id, note, loop.now_iso(), by)
        store.save()
    print(f"incident {inc['id']} acknowledged: {note}")
    return 0


def split(system, root, id, perflogs=None, *, min_effect=changes.MIN_EFFECT,
          max_rounds=verdict.MAX_ROUNDS, time_limit=None):
    """Split one incident; exit 0 when a verdict was reached, 1 when the split could not
    tell (cannot rebuild, cannot run, inconclusive)."""
    from mdxbench.post.store import records

    result = split_run.split_incident(
        system, root, id, perflogs or [records.default_perflog_dir()],
        min_effect=min_effect, max_rounds=max_rounds, time_limit=time_limit)
    print(split_run.summary_text(result))
    return exits.OK if result['verdict'] in ('software', 'system', 'both', 'mixed') \
        else exits.FOUND
