'''``mdxbench event add|list``: system events (kernel, BIOS, flavor) regression tracking
cuts at and change points are explained by.'''
from mdxbench.post.commands import options
from mdxbench.post.site import text
from mdxbench.post.store import events

NAME = 'event'
HELP = 'record or list system events (kernel, BIOS, flavor...)'


def add_arguments(p):
    sub = p.add_subparsers(dest='action', required=True)
    pa = sub.add_parser('add', help='record an event')
    pa.add_argument('system', type=options.known_system, help='the system it happened on')
    pa.add_argument('name', help='its name, e.g. "kernel 6.1.0-27"')
    pa.add_argument('--time', type=options.iso_time, help='ISO time with zone (default: now)')
    pa.add_argument('--partition', help='the partition, when only one was changed')
    options.refuse(pa, options.partition_of())
    pa.add_argument('--note', help='free text')
    sub.add_parser('list', help='the recorded events, oldest first')


def run(*, action, system=None, name=None, time=None, partition=None, note=None):
    if action == 'add':
        ev = events.add(system, name, time, partition, note)
        print(f"event {ev['name']!r} on {ev['system']} at {ev['time']} recorded in "
              f"{events.events_file()}")
    elif events.load():
        print(text.event_list(events.load()))
    return 0
