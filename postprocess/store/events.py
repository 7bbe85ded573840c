'''System events (kernel update, BIOS, flavor change) that regression tracking can cut at.
Kept in a JSON-lines file (``$MDXBENCH_EVENTS`` or ``<state>/events.jsonl``): the source of
truth, usable offline.'''
import datetime as dt
import json
import pathlib

from mdxbench import settings


def events_file():
    return settings.under_state('MDXBENCH_EVENTS', 'events.jsonl')


def add(system, name, time=None, partition=None, note=None, path=None):
    path = pathlib.Path(path or events_file())
    when = dt.datetime.fromisoformat(time) if time else dt.datetime.now(dt.timezone.utc)
    if when.tzinfo is None:
        raise ValueError(f'event time {time!r} has no time zone (e.g. 2026-11-21T06:00:00+00:00)')

    ev = {'system': system, 'name': name, 'time': when.isoformat(), 'partition': partition,
          'note': note}
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, 'a') as fp:
        fp.write(json.dumps(ev, sort_keys=True) + '\n')

    return ev


def load(path=None):
    path = pathlib.Path(path or events_file())
    if not path.exists():
        return []

    out = []
    for n, line in enumerate(path.read_text().splitlines(), 1):
        if line.strip():
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError as err:
                raise ValueError(f'{path}:{n}: invalid event ({err.msg})') from None

    return out


def cut_for(name, path=None):
    '''{system: time} of the events with this name (the latest one per system).'''
    cuts = {}
    for ev in load(path):
        if ev['name'] == name:
            t = dt.datetime.fromisoformat(ev['time'])
            if ev['system'] not in cuts or t > cuts[ev['system']]:
                cuts[ev['system']] = t

    if not cuts:
        known = sorted({e['name'] for e in load(path)})
        raise ValueError(f'no event named {name!r} in {path or events_file()} '
                         f'(known: {", ".join(known) or "none"})')

    return cuts


def timed(events):
    """The events, each with ``_time``: its time as an aware datetime (UTC if it had no zone)."""
    import datetime as dt

    out = []
    for e in events:
        t = dt.datetime.fromisoformat(e['time'])
        out.append(dict(e, _time=t if t.tzinfo else t.replace(tzinfo=dt.timezone.utc)))
    return out
