'''``mdxbench incident list|show|ack``: the regression incidents the cycles found.'''
import pathlib

from mdxbench.post.analysis import incidents
from mdxbench.post.cycle import loop
from mdxbench.post.site import text
from mdxbench.post.store.incidents import IncidentFile, cycle_dir
from mdxbench.post.store.ingest import state_lock

NAME = 'incident'
HELP = 'list, show or acknowledge the regression incidents of a system'


def _which(a, with_id=True):
    a.add_argument('--system', required=True, help='the system of the incidents')
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


def run(args):
    root = pathlib.Path(args.state) if args.state else cycle_dir(args.system)
    with state_lock(root / 'incidents.json', wait=60):
        store = IncidentFile(root / 'incidents.json')
        if args.action == 'list':
            print(text.incident_table(store.incidents))
            return 0
        if args.action == 'show':
            print(incidents.to_json(incidents.find(store.incidents, args.id)))
            return 0
        inc = incidents.acknowledge(store.incidents, args.id, args.note, loop.now_iso(), args.by)
        store.save()
    print(f"incident {inc['id']} acknowledged: {args.note}")
    return 0
