'''``perf stat -x, -o FILE`` (Linux perf's CSV): one line per event,
``value,unit,event,run time,percent running[,metric value,metric unit]``. Events the
machine cannot count (a VM without a virtual PMU) say ``<not supported>``; events that
did not run say ``<not counted>``: both become None, never 0.'''
from . import ParseError, require


def parse(text):
    '''``{'events': {event: value or None}, 'units': {event: unit}, 'not_counted': [...]}``;
    values are floats (task-clock in the unit perf gives, msec).'''
    require(text and text.strip(), 'perf stat output is empty')
    events, units, missing = {}, {}, []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.startswith('#'):
            continue
        cols = line.split(',')
        require(len(cols) >= 5, f'line {n}: expected "value,unit,event,run time,percent", '
                                f'got {line!r}')
        value, unit, event = cols[0].strip(), cols[1].strip(), cols[2].strip()
        require(event, f'line {n}: no event name')
        if value in ('<not supported>', '<not counted>'):
            events[event] = None
            missing.append(f'{event} {value}')
        else:
            try:
                events[event] = float(value)
            except ValueError:
                raise ParseError(f'line {n}: value {value!r} of {event} is not a number') from None
        units[event] = unit
    require(events, 'no event line: perf stat did not finish (the program failed to start?)')
    return {'events': events, 'units': units, 'not_counted': missing}
