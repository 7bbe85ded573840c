'''``mdxbench bench cycle``: the operator's loop at scale (figures printed; nothing here is
a timed test).

1. Detection and incident grouping over a year of nightly results: the Parquet store of
   ``mdxbench bench changes`` (default 10,000 series x 365 runs = 3.65 M records, 1% of
   the series with a 10% step), read, scanned (``changes.find``), grouped
   (``incidents.group``) and made state (``incidents.update``) in a child process whose
   peak memory is its own. Targets: <= 30 s and <= 4 GiB for detection and grouping.
2. A cycle with nothing new: the real ``mdxbench cycle --no-ingest`` twice over a perflog
   archive (the captured real perflog line replicated, ``bench ingest``'s archive); the
   first analyses everything (the baseline, same run), the second finds the fingerprint
   unchanged and only reads the state. Target: <= 5 s for the second.
'''
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

from mdxbench.post.bench import changes as bench_changes
from mdxbench.post.bench import child
from mdxbench.post.bench import ingest as bench_ingest


def _child(path):
    code = f'''
import datetime as dt, json, resource, time
t0 = time.perf_counter()
from mdxbench.post.analysis import changes, incidents
from mdxbench.post.store import records
df = records.from_parquet({str(path)!r})
t1 = time.perf_counter()
cps = changes.find(df)
t2 = time.perf_counter()
groups = incidents.group(cps)
state = incidents.update({{}}, groups, dt.datetime.now(dt.timezone.utc).isoformat())
t3 = time.perf_counter()
print(json.dumps({{'read': t1 - t0, 'detect': t2 - t1, 'group': t3 - t2, 'records': df.height,
                  'change_points': len(cps), 'incidents': len(state),
                  'peak_mib': resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}}))
'''
    return child.run(code, 'bench child')


def _cycle(archive, state):
    exe = pathlib.Path(sys.executable).parent / 'mdxbench'
    env = dict(os.environ, MDXBENCH_STATE_DIR=str(state),
               MDXBENCH_EVENTS=str(pathlib.Path(state) / 'events.jsonl'))
    t0 = time.perf_counter()
    res = subprocess.run([str(exe), 'cycle', '--system', 'local', '--no-ingest', '--perflogs',
                          str(archive), '--json', str(pathlib.Path(state) / 'cycle.json')],
                         capture_output=True, text=True, env=env)
    secs = time.perf_counter() - t0
    if res.returncode not in (0, 1):
        raise RuntimeError(f'mdxbench cycle failed (exit {res.returncode}): {res.stderr[-2000:]}')
    return secs, json.loads((pathlib.Path(state) / 'cycle.json').read_text())


def main(series=10000, runs=365, archive_records=100000):
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        stepped = bench_changes.make_store(tmp / 'store.parquet', series, runs)
        big = _child(tmp / 'store.parquet')
        n = bench_ingest.make_archive(tmp / 'perflogs', archive_records)
        first, rec1 = _cycle(tmp / 'perflogs', tmp / 'state')
        second, rec2 = _cycle(tmp / 'perflogs', tmp / 'state')
    work = big['detect'] + big['group']
    print(f'detection and incident grouping over {big["records"]:,} records ({series:,} series '
          f'x {runs} runs, {stepped} given a 10% step): detection {big["detect"]:.1f} s, '
          f'grouping {big["group"]:.2f} s, together {work:.1f} s (reading the Parquet store '
          f'{big["read"]:.1f} s more); peak {big["peak_mib"]:.0f} MiB; '
          f'{big["change_points"]} change points, {big["incidents"]} incidents')
    print(f'cycle over {n:,} records of perflogs: first (analyses everything, the baseline) '
          f'{first:.2f} s, then nothing new {second:.2f} s (unchanged: {rec2["unchanged"]}); '
          f'ratio {first / second:.1f}x')
    ok = work <= 30 and big['peak_mib'] <= 4096 and second <= 5 and rec2['unchanged']
    print(f'targets: detection and grouping <= 30 s: {"met" if work <= 30 else "MISSED"}; '
          f'<= 4096 MiB: {"met" if big["peak_mib"] <= 4096 else "MISSED"}; nothing-new cycle '
          f'<= 5 s: {"met" if second <= 5 and rec2["unchanged"] else "MISSED"}')
    return 0 if ok else 1
