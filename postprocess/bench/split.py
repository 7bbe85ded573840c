'''``mdxbench bench split``: the wall time of a split (issue 31) -- rebuilding the previous
build with Spack and running both builds through Slurm on one node -- and how it grows with
the series of an incident. Figures printed, nothing here is a timed test.

On the Slurm cluster of SLURM_CONF (``ci/cluster.sh start``) with the ``spack`` of
``$MDXBENCH_SPACK`` or PATH: two real builds of Spack's ``stream`` (20 M elements; the new
one with ``-fsanitize=undefined``), installed once; then, for each row, the old build is
uninstalled (so every split rebuilds it from its archived concrete spec) and one incident
whose series changed from the old build to the new one is split on one node:

* 1 series (StreamOmp one thread, copy);
* 4 series of that check (copy, scale, add, triad: one run gives all four);
* 8 series of two checks (one thread and all cores).

The incident is made here (its series, levels and noise), not found by a cycle: what is
measured is the split's own cost -- rebuild, job, runs -- which does not depend on how the
incident was found. Each row: rounds, seconds rebuilding, seconds in the Slurm job, in
all, and the ratio to the first row (the baseline: one series). The incident's levels are
made up (100 before, 70 after), so its verdicts mean nothing and are not printed.
'''
import json
import pathlib
import shutil
import subprocess
import tempfile

STREAM = 'stream@5.10 +openmp stream_array_size=20000000 ntimes=10'
OLD, NEW = STREAM, STREAM + ' cflags="-fsanitize=undefined"'
NODE = 'mdxnode1'
ROWS = (('1 series', ['one-thread'], ['copy']),
        ('4 series, 1 check', ['one-thread'], ['copy', 'scale', 'add', 'triad']),
        ('8 series, 2 checks', ['one-thread', 'all-cores'], ['copy', 'scale', 'add', 'triad']))


def _spack(spack, *args, timeout=2400):
    res = subprocess.run([spack, *args], capture_output=True, text=True, timeout=timeout)
    if res.returncode != 0:
        raise RuntimeError(f'spack {" ".join(args)}: {res.stderr[-2000:]}')
    return res.stdout


def _installed(spack, spec):
    '''(hash, prefix) of the one install of ``spec`` whose flags are as given.'''
    want = ['-fsanitize=undefined'] if 'cflags' in spec else []
    for s in json.loads(_spack(spack, 'find', '--json', STREAM)):
        p = s['parameters']
        if p.get('stream_array_size') == '20000000' and p.get('cflags', []) == want and \
                p.get('stream_type') == 'none':
            return s['hash'], _spack(spack, 'location', '-i', f"/{s['hash']}").strip()
    raise RuntimeError(f'{spec}: not installed')


def incident(old, new, threads, perf_vars):
    series = [{'partition': 'nodes', 'environ': 'spack', 'check': f'StreamOmp %threads={t}',
               'perf_var': v, 'unit': 'GB/s', 'before': 100.0, 'after': 70.0,
               'better': 'higher', 'noise': 0.01, 'nodes': NODE, 'effect': -0.3,
               'changed': {'binary': [[f'stream@5.10 +openmp {old}'],
                                      [f'stream@5.10 +openmp {new}']]}}
              for t in threads for v in perf_vars]
    return {'id': 'bench', 'cause': 'bench', 'series': series}


def main(log=print):
    from mdxbench.post.split import builds, run

    spack = builds.spack_command()
    for spec in (OLD, NEW):     # apart and fresh: together, one build satisfies both
        _spack(spack, 'install', '--fresh', '--fail-fast', spec)
    old, old_prefix = _installed(spack, OLD)
    new, _ = _installed(spack, NEW)
    work = pathlib.Path(tempfile.mkdtemp(prefix='mdxbench-bench-split-'))
    specs = work / 'perflogs' / 'specs'
    specs.mkdir(parents=True)
    shutil.copy(pathlib.Path(old_prefix) / '.spack' / 'spec.json', specs / f'{old}.json')
    rows = []
    for name, threads, perf_vars in ROWS:
        _spack(spack, 'uninstall', '-y', f'/{old}')
        r = run.split('nscluster', incident(old, new, threads, perf_vars),
                      perflog_dirs=[work / 'perflogs'], out=work / name.replace(' ', '-'),
                      perflogs=work / 'perflogs' / 'split' / name.replace(' ', '-'),
                      min_effect=0.03, log=lambda *a: None)
        if r['builds'].get(old, {}).get('how') != 'rebuilt':
            raise RuntimeError(f'{name}: the old build was not rebuilt: {r["builds"]}')
        rounds = sorted({s.get('rounds') for s in r['series']})
        rows.append((name, len(r['series']), rounds, r['seconds_building'],
                     r['seconds_in_jobs'], r['seconds']))
    base = rows[0][5]
    log('mdxbench bench split: a split of one incident on one node of the namespace cluster '
        f'(rebuild of /{old[:7]} from its archived spec, then {NODE}\'s Slurm job); baseline: '
        'the first row')
    log(f'{"incident":<22}{"series":>7}{"rounds":>8}{"rebuild s":>11}{"job s":>8}'
        f'{"total s":>9}{"x base":>8}')
    for name, n, rounds, b, j, t in rows:
        log(f'{name:<22}{n:>7}{",".join(map(str, rounds)):>8}{b:>11.1f}{j:>8.1f}{t:>9.1f}'
            f'{t / base:>8.2f}')
    log(f'(work directory {work})')
    return 0
