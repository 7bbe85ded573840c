'''Where the two ends of a client/server measurement run, as the mdx II paper placed them:
``loopback`` (client and server in one node: one VM, never through its virtual NIC),
``same-host`` (two VMs on one physical host) and ``different-hosts`` (two VMs, or two bare
metal nodes, on two hosts).

A node is a Slurm node (a VM on a cloud); which physical host it is on is a site fact, in
the partition's ``extras.placement``, one of:

- ``hosts: {HOST: [node, ...], ...}``  the map itself (a test cluster, a small site);
- ``host_feature: PREFIX``  each node carries a Slurm feature ``PREFIX<host>`` (operators
  tag VMs with their hypervisor, e.g. ``host_h012``), read with ``sinfo``;
- ``node_is_host: true``  every node is alone on its host (bare metal, or VMs that fill
  their host).

Without it, only ``loopback`` can run: a pair of VMs whose hosts are unknown is neither
placement. ``choose_pair`` is pure; ``node_hosts`` asks Slurm.'''
import subprocess

PLACEMENTS = ('loopback', 'same-host', 'different-hosts')
#: node states that cannot take a job
UNUSABLE = ('down', 'drain', 'fail', 'maint', 'unk', 'inval', 'futr', 'boot')


class Unavailable(Exception):
    '''No pair of nodes of the partition has the placement (the message says why).'''


def slurm_partition(partition):
    '''The Slurm partition name of a ReFrame partition's ``access`` options, or None.'''
    for opt in partition.access:
        if opt.startswith('--partition='):
            return opt.split('=', 1)[1]
        if opt.startswith('-p'):
            return opt[2:].strip() or None
    return None


SINFO_FORMAT = '%N|%f|%t'


def sinfo_nodes(partition):
    '''{node: [features]} of the partition's usable nodes (``sinfo -N``), or None when
    Slurm cannot be asked (no sinfo, a dry run elsewhere).'''
    name = slurm_partition(partition)
    cmd = ['sinfo', '-h', '-N', '-o', SINFO_FORMAT] + (['-p', name] if name else [])
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=30, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return None

    return parse_sinfo(out)


def parse_sinfo(text):
    '''{node: [features]} of the usable nodes in ``sinfo -h -N -o SINFO_FORMAT`` output.'''
    nodes = {}
    for line in text.splitlines():
        node, features, state = (line.split('|') + ['', ''])[:3]
        if node and not state.rstrip('*~#!%$@^-').startswith(UNUSABLE):
            nodes.setdefault(node, [f for f in features.split(',') if f and f != '(null)'])
    return nodes


def declares_hosts(declared):
    '''Whether a partition's ``extras.placement`` says how to find its nodes' hosts.'''
    return bool(declared and any(declared.get(k) for k in ('hosts', 'host_feature',
                                                           'node_is_host')))


def node_hosts(declared, slurm_nodes):
    '''({node: host}, how it is known) from the partition's ``extras.placement`` and the
    nodes Slurm has (``sinfo_nodes``; None: not known, the declaration is taken as is).
    ``({}, why)`` when the site declares nothing usable.'''
    declared = declared or {}
    if declared.get('hosts'):
        where = {n: host for host, nodes in declared['hosts'].items() for n in nodes}
        if slurm_nodes is not None:
            where = {n: h for n, h in where.items() if n in slurm_nodes}
        return where, 'site config (extras.placement.hosts)'

    if declared.get('host_feature'):
        prefix = declared['host_feature']
        where = {n: f[len(prefix):] for n, feats in (slurm_nodes or {}).items()
                 for f in feats if f.startswith(prefix)}
        return where, f'Slurm node features {prefix}<host>'

    if declared.get('node_is_host'):
        return {n: n for n in (slurm_nodes or {})}, 'each node is alone on its host'

    return {}, ('the site config does not say which physical host each node is on '
                '(extras.placement: hosts, host_feature or node_is_host)')


def choose_pair(where, placement):
    '''(server node, client node) of the placement from {node: host}: the first pair in
    host and node order, so a partition measures the same pair every time.'''
    by_host = {}
    for node in sorted(where):
        by_host.setdefault(where[node], []).append(node)
    hosts = sorted(by_host)
    if placement == 'same-host':
        for host in hosts:
            if len(by_host[host]) >= 2:
                return tuple(by_host[host][:2])
        raise Unavailable(f'no physical host has two usable nodes ({_describe(by_host)})')

    if placement == 'different-hosts':
        if len(hosts) >= 2:
            return by_host[hosts[0]][0], by_host[hosts[1]][0]
        raise Unavailable(f'fewer than two physical hosts have a usable node ({_describe(by_host)})')

    raise ValueError(f'placement {placement!r}: expected one of {", ".join(PLACEMENTS)}')


def choose_groups(where, placement, n):
    '''(servers, clients), ``n`` nodes each, of ``n`` pairs placed as the paper placed its
    VM pairs (Takahashi et al., Figure 5): ``same-host``, all 2n nodes on one physical
    host; ``different-hosts``, the servers on one host and the clients on another. The
    first hosts in order that hold them, so a partition measures the same nodes every
    time.'''
    by_host = {}
    for node in sorted(where):
        by_host.setdefault(where[node], []).append(node)
    hosts = sorted(by_host)
    if placement == 'same-host':
        for host in hosts:
            if len(by_host[host]) >= 2 * n:
                nodes = by_host[host][:2 * n]
                return nodes[:n], nodes[n:]
        raise Unavailable(f'no physical host has {2 * n} usable nodes for {n} pair(s) '
                          f'({_describe(by_host)})')

    if placement == 'different-hosts':
        enough = [h for h in hosts if len(by_host[h]) >= n]
        if len(enough) >= 2:
            return by_host[enough[0]][:n], by_host[enough[1]][:n]
        raise Unavailable(f'fewer than two physical hosts have {n} usable node(s) for {n} '
                          f'pair(s) ({_describe(by_host)})')

    raise ValueError(f'placement {placement!r}: expected same-host or different-hosts')


def choose_spread(where, n):
    '''``n`` nodes each on a physical host of its own (the paper's multi-VM storage and
    object-store runs: one VM per host), the first node of each of the first ``n`` hosts.'''
    by_host = {}
    for node in sorted(where):
        by_host.setdefault(where[node], []).append(node)
    if len(by_host) < n:
        raise Unavailable(f'{n} nodes on different hosts need {n} hosts with a usable node, '
                          f'{len(by_host)} have one ({_describe(by_host)})')
    return [by_host[h][0] for h in sorted(by_host)[:n]]


def spread(declared, slurm_nodes, n):
    '''Where a run of ``n`` nodes that the paper placed one per host goes: ``(nodes, {node:
    host}, how)`` on ``n`` hosts; ``(None, {}, how)`` on any nodes where the partition does
    not say its hosts, or where Slurm cannot be asked (``slurm_nodes`` None or empty: a dry
    run elsewhere); Unavailable where it says them and fewer than ``n`` hosts have a usable
    node -- none at all when a ``host_feature`` is declared and no node carries it.'''
    where, how = node_hosts(declared, slurm_nodes)
    if n < 2 or (not where and not (declares_hosts(declared) and slurm_nodes)):
        return None, where, how if where else f'not declared: {how}'
    if not where:
        raise Unavailable(f'the partition declares its hosts ({how}), but none of its '
                          f'usable nodes has one')
    nodes = choose_spread(where, n)
    return nodes, {nd: where[nd] for nd in nodes}, how


def _describe(by_host):
    return '; '.join(f'{h}: {", ".join(ns)}' for h, ns in sorted(by_host.items())) or 'none known'
