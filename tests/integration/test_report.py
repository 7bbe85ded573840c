'''The comparison report: tables and figures from stored records, opened in headless
Chromium (Debian's), which must load it, show the tables and images, and log no console
error.'''
import json
import shutil
import subprocess

import pytest

from hang import HANG_S
from conftest import FIXTURES_PERFLOG, mdxbench
from test_ingest import _perflog

CHROMIUM_FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic',
                  '--no-first-run', '--disable-background-networking',
                  '--disable-component-update', '--disable-sync', '--enable-logging=stderr',
                  '--v=0', '--virtual-time-budget=10000']


def open_in_chromium(page, tmp_path, fragment=''):
    exe = shutil.which('chromium')
    if exe is None:
        pytest.fail('chromium is not installed: ci/install.sh installs Debian\'s chromium')

    res = subprocess.run([exe, *CHROMIUM_FLAGS, f'--user-data-dir={tmp_path / "chromium"}',
                          '--dump-dom', page.as_uri() + fragment], capture_output=True, text=True,
                         timeout=HANG_S)
    console = [ln for ln in res.stderr.splitlines() if 'CONSOLE' in ln or 'Uncaught' in ln]
    return res, console


def test_report_loads_with_tables_images_and_no_console_error(tmp_path):
    plogs = _perflog(tmp_path, 12)
    # real perflogs of the cache sweep (local), the FFT kernel on 1 and 2 nodes, and PDS (the
    # paper's code, PdsBenchmark)
    for name in ('local-debug-LikwidCacheSweep.log', 'nscluster-nodes-FftwMpi2d.log',
                 'local-debug-PdsBenchmark.log', 'local-debug-WarpObjectStorage.log'):
        system, part, check = name.removesuffix('.log').split('-', 2)
        (plogs / system / part).mkdir(parents=True, exist_ok=True)
        shutil.copy(FIXTURES_PERFLOG.parent / name, plogs / system / part / f'{check}.log')
    res = mdxbench('report', str(plogs), '--out', str(tmp_path / 'report'))
    assert res.returncode == 0, res.stdout + res.stderr
    page = tmp_path / 'report' / 'index.html'
    tables = json.loads((tmp_path / 'report' / 'tables.json').read_text())
    assert [t['id'] for t in tables] == ['table1', 'table4', 'table2_3', 'ior', 'stream', 'warp']
    stream = tables[4]['rows'][1]['cells'][0]
    assert stream['measured'] > 0                      # local STREAM Triad from the perflogs
    t1 = tables[0]['rows'][0]['cells']
    assert t1[0]['paper'] == 1344 and t1[1]['paper'] == 656   # the papers' Table 1
    # the machine measured here stands beside the papers: a column of its own, its memory
    # figure from HPCC's STREAM standing in for BabelStream
    assert tables[0]['columns'][-1] == 'local:debug (measured)'
    mem = tables[0]['rows'][1]['cells'][-1]
    assert mem['via'] == 'HpccStream' and mem['measured'] == stream['measured']
    warp = tables[5]['rows'][0]['cells']
    assert warp[0]['paper'] == 898 and warp[1]['paper'] == 293
    # ci/'s MinIO measured by warp on local: a column of its own beside the paper's S3s
    assert tables[5]['columns'][-1] == 'local:debug (measured)'
    assert all(row['cells'][-1]['measured'] > 0 for row in tables[5]['rows']), tables[5]

    dom, console = open_in_chromium(page, tmp_path)
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert dom.stdout.count('<table') == 6
    assert 'Triad, all cores (GB/s)' in dom.stdout
    n = int(dom.stdout.split('data-images="')[1].split('"')[0])
    loaded = int(dom.stdout.split('data-images-loaded="')[1].split('"')[0])
    assert n >= 1 and loaded == n
    made = {f.name for f in (tmp_path / 'report').glob('*.png')}
    assert {'cache-sweep.png', 'fft-split.png', 'pds-queries.png'} <= made, made
    assert (tmp_path / 'report' / 'trends' / 'plotly.min.js').stat().st_size > 1_000_000
    assert n == len(made)
    assert console == []


def test_the_console_check_can_fail(tmp_path):
    '''Negative control: a page that logs a console error is caught.'''
    page = tmp_path / 'bad.html'
    page.write_text('<!DOCTYPE html><html><body><script>console.error("boom");'
                    'undefinedFunction();</script></body></html>')
    _, console = open_in_chromium(page, tmp_path)
    assert console, 'a console error went unnoticed'
