'''Output of ``mdxbench/scripts/nodefacts.sh`` (what a node is), and the comparison of
those facts with what the site config declares: the conformance check's two pure
functions.'''
from . import ParseError, require

#: MemTotal is what the kernel leaves of the installed memory: it may be this much below
#: the declared size (firmware, kernel, crash kernel) and never more than a little above
MEMORY_BELOW = 0.10
MEMORY_ABOVE = 0.05


def parse(text):
    '''``{'hostname', 'cpus', 'threads_per_core', 'sockets', 'cpu_model', 'memory_gib',
    'kernel', 'nics': {dev: {'rx_queues', 'combined'}}, 'targets': {name: fstype or
    None}, 'mounts': {name: mount point}}``; ``nics`` queue counts are None where the
    interface is missing or ethtool says nothing; ``mounts`` is empty in the output of
    scripts before findmnt (fstype then as ``stat -f``, e.g. ext2/ext3).'''
    require(text and text.strip(), 'nodefacts output is empty')
    require('mdxbench-facts: end' in text, 'no "mdxbench-facts: end" line: the fact script '
            'did not finish (killed, or not nodefacts.sh output)')
    raw = {}
    for line in text.splitlines():
        if line.startswith('mdxbench-fact: '):
            key, sep, val = line[len('mdxbench-fact: '):].partition('=')
            require(sep, f'fact line without "=": {line!r}')
            raw[key] = val.strip()
    for k in ('cpus', 'threads_per_core', 'sockets', 'mem_kib', 'kernel'):
        require(raw.get(k), f'no fact {k!r} in the nodefacts output')
    try:
        out = {'hostname': raw.get('hostname'), 'version': raw.get('lscpu_version', 'unknown'),
               'cpus': int(raw['cpus']),
               'threads_per_core': int(raw['threads_per_core']),
               'sockets': int(raw['sockets']), 'cpu_model': raw.get('cpu_model'),
               'memory_gib': int(raw['mem_kib']) / 1024**2, 'kernel': raw['kernel'],
               'nics': {}, 'targets': {}, 'mounts': {}}
    except ValueError as err:
        raise ParseError(f'a numeric fact is not a number: {err}') from None
    for key, val in raw.items():
        if key.startswith('nic.'):
            _, dev, what = key.split('.', 2)
            out['nics'].setdefault(dev, {'rx_queues': None, 'combined': None})[what] = \
                int(val) if val.isdigit() else None
        elif key.startswith('target.') and key.endswith('.mount'):
            out['mounts'][key[len('target.'):-len('.mount')]] = val or None
        elif key.startswith('target.'):
            out['targets'][key[len('target.'):]] = None if val == 'missing' else val
    return out


def mismatches(declared, found):
    '''What differs between the declared facts and the node's, one sentence each naming
    the fact, the declared and the found value. ``declared`` keys (each optional):
    ``cpus``, ``threads_per_core``, ``sockets``, ``memory_gib``, ``cpu_model`` (a
    substring of the node's model name), ``kernel`` (the exact release), ``nic``
    (``{'device', 'queues'}``), ``targets`` (names that must exist on the node, or
    ``{name: {'path', 'fstype', 'mounted'}}``: its file system type, and whether the path
    must be a mount point of its own -- a node-local disk that did not mount leaves an
    empty directory of the root file system).'''
    out = []
    for k in ('cpus', 'threads_per_core', 'sockets'):
        if declared.get(k) is not None and declared[k] != found[k]:
            out.append(f'{k}: declared {declared[k]}, found {found[k]}')
    mem = declared.get('memory_gib')
    if mem and not mem * (1 - MEMORY_BELOW) <= found['memory_gib'] <= mem * (1 + MEMORY_ABOVE):
        out.append(f'memory_gib: declared {mem}, found {found["memory_gib"]:.1f} (MemTotal; '
                   f'{MEMORY_BELOW:.0%} below to {MEMORY_ABOVE:.0%} above is accepted)')
    model = declared.get('cpu_model')
    if model and model not in (found.get('cpu_model') or ''):
        out.append(f'cpu_model: declared {model!r}, found {found.get("cpu_model")!r}')
    if declared.get('kernel') and declared['kernel'] != found['kernel']:
        out.append(f'kernel: declared {declared["kernel"]}, found {found["kernel"]}')
    nic = declared.get('nic')
    if nic:
        dev, want = nic['device'], nic['queues']
        q = found['nics'].get(dev, {})
        have = q.get('combined') or q.get('rx_queues')
        if have != want:
            out.append(f'nic {dev} queues: declared {want}, found '
                       f'{"no such interface" if have is None else have} (virtio-net '
                       f'multiqueue: combined channels, else rx queues)')
    targets = declared.get('targets') or {}
    for name in targets:
        want = targets[name] if isinstance(targets, dict) else {}
        fstype = found['targets'].get(name)
        if fstype is None:
            out.append(f'storage target {name}: declared, found missing on the node')
            continue
        if want.get('fstype') and want['fstype'] != fstype:
            out.append(f'storage target {name}: declared file system {want["fstype"]}, '
                       f'found {fstype}')
        mount = found['mounts'].get(name)
        if want.get('mounted') and mount != want.get('path'):
            out.append(f'storage target {name}: declared mounted at {want.get("path")}, found '
                       f'{"not mounted, under " + mount if mount else "no mount point"}')
    return out
