'''References proposed from measurements: the latest stable segment's median, a tolerance
from its noise, the paper's figures never replaced.'''
import datetime as dt
import shutil

import numpy as np
import pytest
import yaml

from mdxbench import REPO_ROOT, references
from mdxbench.post import cli
from mdxbench.post.analysis import proposals
from mdxbench.post.store import records

from test_changes import T0, gauss, rows, stepped

PAPERS = REPO_ROOT / 'site-configs' / 'references'


def refdir(tmp_path):
    d = tmp_path / 'refs'
    shutil.copytree(PAPERS, d)
    return d


def test_value_is_the_median_after_the_last_change_point_and_tolerance_its_noise(tmp_path):
    x = stepped(40, 40, 15, 1.5, seed=2)            # 40 -> 60 GB/s at run 16
    df = records.frame(rows(x, check='HpccStream', var='triad', system='local', part='debug'))
    entries, notes = proposals.propose(df, 'local')
    assert notes == [] and len(entries) == 1
    e = entries[0]
    assert e['value'] == pytest.approx(float(np.median(x[15:])), rel=1e-3)
    # 2% noise: 3 robust sigmas, about 6%, on the worse (lower) side only
    assert -0.09 < e['lower'] < -0.04 and e['upper'] is None
    assert e['source'].startswith('measured: 25 runs 2026-09-16..2026-10-10, suite a1b2c3d')

    noisy = records.frame(rows(gauss(100, 20, cv=0.1), check='HpccStream', var='triad',
                               system='local', part='debug'))
    wide = proposals.propose(noisy, 'local')[0][0]
    assert 0.15 < -wide['lower'] < 0.6               # 10% CV: a wider band
    quiet = records.frame(rows(gauss(100, 20, cv=0.002), check='HpccStream', var='triad',
                               system='local', part='debug'))
    assert proposals.propose(quiet, 'local')[0][0]['lower'] == -0.05     # the floor


def robust_band(x, k=3.0):
    '''The documented tolerance, computed here with NumPy: k robust standard deviations
    (1.4826 x MAD) relative to the median.'''
    med = np.median(x)
    return k * 1.4826 * np.median(np.abs(x - med)) / med


def test_lower_is_better_gets_an_upper_bound_and_params_a_when():
    x = gauss(25, 10, cv=0.1)                       # noisy: the band is above the 5% floor (0.068)
    r = rows(x, check='SockperfPingPong %placement=loopback', var='p50_rtt',
             unit='us', better='lower', system='local', part='debug')
    for row in r:
        row['params'] = '{"placement": "loopback"}'
    e = proposals.propose(records.frame(r), 'local')[0][0]
    assert e['check'] == 'SockperfPingPong' and e['when'] == {'placement': 'loopback'}
    assert robust_band(x) > 0.06                   # clear of the floor
    assert e['lower'] is None and e['upper'] == pytest.approx(robust_band(x), abs=0.001)
    assert e['value'] == pytest.approx(np.median(x), rel=0.01)


def test_what_cannot_be_proposed_is_said():
    df = records.frame(rows(gauss(60, 3), check='HpccHpl', var='gflops', system='local',
                            part='debug') +
                       rows(gauss(60, 8), check='HpccHpl', var='gflops', system='local',
                            part='debug', environ='native') +
                       rows(gauss(50, 8), check='HpccHpl', var='gflops', system='local',
                            part='debug', environ='mkl') +
                       rows(gauss(5, 8), check='X', var='y', system='local', part='debug',
                            better=None))
    entries, notes = proposals.propose(df, 'local')
    assert entries == []
    assert any('3 run(s) since its last change point, 5 needed' in n for n in notes)
    assert any('environments native and mkl' in n or 'environments mkl and native' in n
               for n in notes)
    assert any('no declared direction' in n for n in notes)


def test_a_paper_figure_is_kept_and_the_file_loads_and_applies(tmp_path, capsys):
    d = refdir(tmp_path)
    store = tmp_path / 'store.parquet'
    records.frame(rows(gauss(300, 12)) +          # mdx2 triad: the paper has 164 GB/s
                  rows(gauss(9, 12, cv=0.1), check='PerfCountersFft', var='cache_miss_rate',
                       unit='%', better='lower')).write_parquet(store)
    out = d / 'measured-mdx2.yaml'
    args = ['references', 'propose', '--system', 'mdx2', '--parquet', str(store),
            '--out', str(out), '--reference-dir', str(d)]
    assert cli.main(args + ['--dry-run']) == 0
    text = capsys.readouterr().out
    assert 'paper figure kept: BabelStreamOmp mdx2:vc16m32g triad: kept 164 GB/s' in text
    assert '+++ ' in text and not out.exists()
    papers_before = (d / 'papers.yaml').read_text()

    assert cli.main(args) == 0
    assert (d / 'papers.yaml').read_text() == papers_before
    data = yaml.safe_load(out.read_text())
    assert list(data) == ['PerfCountersFft']
    ref = references.for_check('PerfCountersFft', {}, references.load(d))
    value, lower, upper, unit = ref['mdx2:vc16m32g']['cache_miss_rate']
    band = robust_band(gauss(9, 12, cv=0.1))
    assert band > 0.06 and unit == '%' and lower is None
    assert upper == pytest.approx(band, abs=0.001) and value == pytest.approx(9, rel=0.05)
    # BabelStream still gets the paper's figure
    assert references.for_check('BabelStreamOmp', {}, references.load(d))['mdx2:vc16m32g'][
        'triad'][0] == 164

    # proposing again replaces the measured entry (one per series), and says no change
    capsys.readouterr()
    assert cli.main(args) == 0
    assert 'no change' in capsys.readouterr().out
    assert len(yaml.safe_load(out.read_text())['PerfCountersFft']['mdx2:vc16m32g']) == 1


def test_since_limits_the_runs(tmp_path):
    df = records.frame(rows(gauss(100, 30), system='local', part='debug'))
    since = T0 + dt.timedelta(days=24)
    e = proposals.propose(df, 'local', since=since)[0][0]
    assert e['source'].startswith('measured: 6 runs 2026-09-25..2026-09-30')
