'''fio 3.x ``--output-format=json``: bandwidth (GB/s, 1e9 B/s) and IOPS (KIOPS) of one
job, or of all jobs summed (``--group_reporting`` gives one job already).'''
import json

from . import ParseError, require


def parse(text, direction=None):
    '''``{'version', 'direction', 'bw_gbs', 'kiops', 'jobs', 'errors', 'options'}``.

    ``direction`` is ``read`` or ``write``; by default the one that moved data.
    '''
    require(text and text.strip(), 'fio output is empty')
    start = text.find('{')
    require(start >= 0, 'no JSON object in the fio output (run with --output-format=json)')
    try:
        data = json.loads(text[start:])
    except json.JSONDecodeError as err:
        raise ParseError(f'fio JSON does not parse ({err.msg} at line {err.lineno}): '
                         'truncated?') from None

    require(isinstance(data, dict) and str(data.get('fio version', '')).startswith('fio-3'),
            f'expected fio 3.x JSON with "fio version", got {str(data.get("fio version"))!r}')
    jobs = data.get('jobs')
    require(isinstance(jobs, list) and jobs, 'fio JSON has no "jobs"')
    errors = [j.get('error', 0) for j in jobs]
    require(not any(errors), f'fio reports job errors {errors}')
    if direction is None:
        moved = {d: sum(j.get(d, {}).get('io_bytes', 0) for j in jobs) for d in ('read', 'write')}
        require(any(moved.values()), 'fio jobs moved no data in either direction')
        direction = max(moved, key=moved.get)

    try:
        bw = sum(j[direction]['bw_bytes'] for j in jobs)
        iops = sum(j[direction]['iops'] for j in jobs)
    except KeyError as err:
        raise ParseError(f'fio JSON job lacks {direction}.{err.args[0]}') from None

    return {'version': data['fio version'].removeprefix('fio-'), 'direction': direction,
            'bw_gbs': bw / 1e9, 'kiops': iops / 1e3, 'jobs': len(jobs),
            'options': jobs[0].get('job options', {})}
