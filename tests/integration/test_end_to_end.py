'''The vertical slice: a check submitted through the real Slurm, its perflog, and its
records in the real Elasticsearch.'''
import json
import re

from conftest import ROOT, VENV_BIN, count, mdxbench, run
from mdxbench import perflog


def test_hpcc_stream_through_slurm_into_elasticsearch(services, es, tmp_path):
    plogs = tmp_path / 'perflogs'
    env = dict(es['env'], MDXBENCH_PERFLOG_DIR=str(plogs),
               RFM_CONFIG_FILES=str(ROOT / 'site-configs' / 'settings.py'))
    res = run([str(VENV_BIN / 'reframe'), '-c', 'checks/memory/hpcc_stream.py', '-r',
               '--system', 'local', '--prefix', str(tmp_path / 'rfm')], env=env, timeout=1200)
    assert res.returncode == 0, res.stdout[-4000:] + res.stderr[-2000:]

    files = list(plogs.rglob('*.log'))
    assert [f.name for f in files] == ['HpccStream.log']
    lines = files[0].read_text().splitlines()
    assert perflog.is_header(lines[0]) and len(lines) == 2
    records = perflog.parse_line(lines[1])
    assert {r['perf_var'] for r in records} == {'copy', 'scale', 'add', 'triad',
                                                'copy_1t', 'triad_1t'}
    for r in records:
        assert r['perf_value'] > 0 and r['perf_unit'] == 'GB/s'
        assert r['system'] == 'local' and r['partition'] == 'debug'

    # The job really went through Slurm: Slurm knows it and it completed
    jobid = records[0]['jobid']
    assert re.fullmatch(r'\d+', jobid)
    job = run(['scontrol', 'show', 'job', jobid])
    assert 'JobState=COMPLETED' in job.stdout, job.stdout + job.stderr
    meta = records[0]['meta']
    assert meta['bench_version'] == '1.5.0' and meta['command'].startswith('srun')
    assert meta['hpl_n'] > 0

    state = tmp_path / 'state.json'
    res = mdxbench('ingest', str(plogs), '--state', str(state), env=es['env'])
    assert res.returncode == 0, res.stdout + res.stderr
    assert 'records 6, sent 6, created 6, present 0' in res.stdout
    assert count(es) == 6

    # Ingesting again, even with the state forgotten, duplicates nothing
    state.unlink()
    res = mdxbench('ingest', str(plogs), '--state', str(state), env=es['env'])
    assert res.returncode == 0 and 'created 0, present 6' in res.stdout, res.stdout
    assert count(es) == 6

    hit = es['client'].search(index=f"{es['prefix']}-*",
                              query={'term': {'perf_var': 'triad'}})['hits']['hits']
    assert len(hit) == 1
    doc = hit[0]['_source']
    assert doc['meta']['bench'] == 'hpcc' and doc['jobid'] == jobid
    assert doc['perf_value'] == next(r['perf_value'] for r in records if r['perf_var'] == 'triad')
