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

    disks = data.get('disk_util') or []
    dev = {'read': ('read_ios', 'read_merges'), 'write': ('write_ios', 'write_merges')}[direction]
    return {'version': data['fio version'].removeprefix('fio-'), 'direction': direction,
            'bw_gbs': bw / 1e9, 'kiops': iops / 1e3, 'jobs': len(jobs),
            'options': jobs[0].get('job options', {}),
            'job_ios': sum(j[direction].get('total_ios', 0) for j in jobs),
            # requests the block devices under the target saw (fio's disk_util; absent for
            # targets with no local device: network file systems, tmpfs)
            'devices': [d.get('name') for d in disks],
            'device_ios': sum(d.get(k, 0) for d in disks for k in dev) if disks else None}


#: below this share of fio's reads reaching the devices, the reads were served from memory
MIN_DEVICE_SHARE = 0.5


def read_not_from_storage(parsed):
    '''Why the read figure of this run is not a storage figure, or None.

    fio's own report says which block devices were under the target and how many read
    requests they received (``disk_util``). With O_DIRECT honoured, every read reaches a
    device (merged or split, device requests + merges stay near fio's I/O count); when the
    file system ignores it, or the page cache serves the reads, the devices see a fraction.
    Where fio reports no device (network file systems, tmpfs) this cannot be told from the
    report: None, and ``device_ios`` is None.'''
    if parsed['direction'] != 'read' or parsed['device_ios'] is None or not parsed['job_ios']:
        return None
    share = parsed['device_ios'] / parsed['job_ios']
    if share >= MIN_DEVICE_SHARE:
        return None
    return (f'fio read {parsed["job_ios"]} times but the devices under the target '
            f'({", ".join(parsed["devices"])}) received {parsed["device_ios"]} read requests '
            f'({share:.0%}): the reads came from memory (page cache, or direct=1 not honoured '
            f'by the file system), so {parsed["bw_gbs"]:.2f} GB/s is not a storage figure')
