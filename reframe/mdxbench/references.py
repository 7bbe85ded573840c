'''Reference values, kept as data in ``site-configs/references/*.yaml``.

Layout of a file::

    CheckClassName:
      system:partition:
        - var: triad                # performance variable of the check
          value: 164
          unit: GB/s
          lower: -0.15              # thresholds as fractions of value (ReFrame's convention);
          upper: null               #   null = unbounded
          when: {streams: 16}       # optional: parameter values this entry applies to
          conditions: {multiqueue: true}  # what the figure was measured under that the
                                    #   partition must also have (:data:`CONDITIONS`)
          source: '002 Table 1'     # required: paper and table or section, or "measured on
                                    #   DATE at COMMIT"
          ambiguous: '...'          # optional: where the paper can be read two ways, the
                                    #   other reading (the report prints it beside the figure)

A check lists in ``reference_conditions`` the conditions every reference of it must state
(the network checks: ``multiqueue``); the reference tests compare each stated condition with
the facts of the entry's partition, or with what the check sets for its run
(``reference_fixed_conditions``), so a figure measured under other conditions than the run
has cannot stand as its reference.

A check gets the entries for its class and parameters as ReFrame's ``reference``
dictionary; a system with no entry reports its value with "no reference" and does not fail.
'''
import functools
import pathlib

import yaml

from mdxbench import REPO_ROOT, settings

_Loader = getattr(yaml, 'CSafeLoader', yaml.SafeLoader)

_FIELDS = {'var', 'value', 'unit', 'lower', 'upper', 'when', 'conditions', 'source',
           'ambiguous'}

#: the conditions a reference may state, with how a partition's facts
#: (``extras.facts`` of its site configuration) answer each
CONDITIONS = {
    # virtio-net multiqueue: the paper's network figures differ with it (sec. 3.2.2:
    # 74 us TCP_RR across hosts without, 85 us with); Nova gives one queue pair per vCPU
    'multiqueue': lambda facts: int(((facts or {}).get('nic') or {}).get('queues') or 1) > 1,
    # peer-to-peer between a node's GPUs: the mdx I paper's 20 GB/s is without it (PCIe
    # passthrough), Wisteria-Aquarius's 275 GB/s with it (sec. 5.2)
    'gpu_p2p': lambda facts: bool((facts or {}).get('gpu_p2p')),
    # LINPACK and BabelStream on every vCPU, both hyperthreads of a core (mdx.base.
    # compute_threads): Takahashi et al.'s AWS figures are of the 16-vCPU c7i.4xlarge,
    # 8 cores x 2 threads (002 Table 1: "two vCPUs share a single physical core")
    'all_vcpus': lambda facts: bool((facts or {}).get('all_vcpus')),
}


#: the conditions a reference may state that a run meets or not, whatever its partition:
#: the check that can meet one lists it in ``run_conditions`` and, where a run cannot,
#: leaves the reference out of that run, saying why (mdxbench.jobsteps.drop_references)
RUN_CONDITIONS = {
    # the paper's multi-VM runs put each VM on a host of its own (000 sec. 3.2.4, Fig. 10
    # [002: 9]: client VMs "on different hosts"); where a partition does not say which
    # host a node is on, the nodes of a run may share one
    'distinct_hosts': 'each node of the run on a physical host of its own',
}


def condition_of(name, facts, fixed=None):
    '''The value of condition ``name`` on a partition with these facts, unless the check
    sets it itself for its run (``fixed``: its ``reference_fixed_conditions``, e.g. the
    one-queue iperf3 series turns multiqueue off). What the reference files' validation
    (tests/unit/test_references.py) holds every entry's stated conditions to.'''
    if fixed and name in fixed:
        return fixed[name]
    return CONDITIONS[name](facts)


class ReferenceError(Exception):
    pass


def reference_dir(env=None):
    return pathlib.Path(settings.get('MDXBENCH_REFERENCE_DIR', env) or
                        REPO_ROOT / 'site-configs' / 'references')


def load(directory=None):
    '''All entries: a list of dicts with ``check``, ``target`` (system:partition),
    the fields above, and ``file``/``key`` for error messages.

    Every test instance asks for its references: the files are parsed once per content
    (path, size and modification time), not once per test.'''
    directory = pathlib.Path(directory or reference_dir())
    files = tuple((str(f), st.st_size, st.st_mtime_ns) for f in sorted(directory.glob('*.yaml'))
                  for st in [f.stat()])
    return [dict(e) for e in _load_files(files)]


@functools.lru_cache(maxsize=8)
def _load_files(files):
    entries = []
    for name, _, _ in files:
        f = pathlib.Path(name)
        try:
            data = yaml.load(f.read_text(), Loader=_Loader) or {}
        except yaml.YAMLError as err:
            raise ReferenceError(f'{f}: invalid YAML: {err}') from None

        if not isinstance(data, dict):
            raise ReferenceError(f'{f}: expected a mapping of check names')

        for check, targets in data.items():
            if not isinstance(targets, dict):
                raise ReferenceError(f'{f}: {check}: expected a mapping of system:partition')

            for target, items in targets.items():
                if not isinstance(items, list):
                    raise ReferenceError(f'{f}: {check}.{target}: expected a list of entries')

                for i, item in enumerate(items):
                    key = f'{check}.{target}[{i}]'
                    if not isinstance(item, dict):
                        raise ReferenceError(f'{f}: {key}: expected a mapping')

                    extra = set(item) - _FIELDS
                    missing = {'var', 'value', 'unit', 'source'} - set(item)
                    if extra or missing:
                        raise ReferenceError(
                            f'{f}: {key}: ' + '; '.join(
                                ([f'unknown field(s) {sorted(extra)}'] if extra else []) +
                                ([f'missing {sorted(missing)}'] if missing else [])))

                    if not isinstance(item['value'], (int, float)) or item['value'] <= 0:
                        raise ReferenceError(f'{f}: {key}.value: expected a positive number, got '
                                         f'{item["value"]!r}')

                    for b in ('lower', 'upper'):
                        v = item.get(b)
                        if v is not None and not (isinstance(v, (int, float)) and -1 <= v <= 10):
                            raise ReferenceError(f'{f}: {key}.{b}: expected a fraction or null')

                    cond = item.get('conditions') or {}
                    known = set(CONDITIONS) | set(RUN_CONDITIONS)
                    if not isinstance(cond, dict) or set(cond) - known or \
                            not all(isinstance(v, bool) for v in cond.values()):
                        raise ReferenceError(
                            f'{f}: {key}.conditions: expected true/false for any of '
                            f'{sorted(known)}, got {cond!r}')

                    if ':' not in str(target):
                        raise ReferenceError(f'{f}: {key}: target must be system:partition')

                    entries.append(dict(item, check=check, target=str(target), file=str(f),
                                        key=key))

    return tuple(entries)


def check_against(check, perf_table, entries=None):
    '''Hold the entries of check class ``check`` to its ``perf_table`` ({var: (key, unit,
    better)}): each entry's unit must be the unit the check's parser emits, and its bound
    on the worse side must be set (``lower`` where higher is better, ``upper`` where lower
    is), or the reference could never fail a run. Raises :class:`ReferenceError` naming the
    file, target, check and field. Variables a check adds per partition (one per GPU) are
    not in its class's table: their entries are held to it when it has them.'''
    entries = load() if entries is None else entries
    for e in entries:
        if e['check'] != check or e['var'] not in perf_table:
            continue
        _, unit, better = perf_table[e['var']]
        where = f"{e['file']}: {e['key']} (check {check}, system {e['target']})"
        if e['unit'] != unit:
            raise ReferenceError(f"{where}.unit: {e['unit']!r}, but {check} reports "
                                 f"{e['var']} in {unit!r}")
        worse = 'lower' if better == 'higher' else 'upper'
        bound = e.get(worse)
        if bound is None or (bound > 0 if worse == 'lower' else bound < 0):
            raise ReferenceError(
                f"{where}.{worse}: {bound!r}, but {better} {e['var']} is better: a run is "
                f"worse on the {worse} side, whose bound must be set ({worse}: "
                f"{'-0.1' if worse == 'lower' else '0.1'} is 10%)")


def matches(entry, params):
    '''Whether a reference entry applies to a test with these parameter values.'''
    return all(str(params.get(k)) == str(v) for k, v in (entry.get('when') or {}).items())


_matches = matches


def for_check(check, params, entries=None):
    '''ReFrame ``reference`` dict for one test: ``{'sys:part': {var: (v, lo, hi, unit)}}``.'''
    entries = load() if entries is None else entries
    ref = {}
    for e in entries:
        if e['check'] == check and _matches(e, params):
            ref.setdefault(e['target'], {})[e['var']] = (
                e['value'], e.get('lower'), e.get('upper'), e['unit'])

    return ref


def without_condition(ref, check, target, params, condition, entries=None):
    '''(ReFrame ``reference`` dict ``ref`` without the variables of ``target`` whose entries
    were measured under ``condition``, [those variables]): what a run that cannot meet a run
    condition (:data:`RUN_CONDITIONS`) is judged by.'''
    entries = load() if entries is None else entries
    dropped = sorted({e['var'] for e in entries if e['check'] == check and
                      e['target'] == target and matches(e, params) and
                      (e.get('conditions') or {}).get(condition)} & set(ref.get(target, {})))
    if not dropped:
        return ref, []
    out = {t: dict(v) for t, v in ref.items()}
    for var in dropped:
        del out[target][var]
    if not out[target]:
        del out[target]
    return out, dropped


def sources_for(check, params, target, entries=None):
    entries = load() if entries is None else entries
    return {e['var']: e['source'] for e in entries
            if e['check'] == check and e['target'] == target and _matches(e, params)}
