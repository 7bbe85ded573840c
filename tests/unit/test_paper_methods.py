'''What the checks run, pinned to what the papers ran (seeds/002 and /000: Takahashi et
al., mdx II; /003: mdx I; /004: Guidi et al.), where a site must not drift without
noticing. Each deliberate deviation is recorded in the perflog meta by the check.'''
import sys

import pytest

from mdxbench import REPO_ROOT, catalog


@pytest.fixture(scope='module')
def classes():
    return catalog.check_classes()


def _params(cls):
    return catalog.describe(cls)['params']


def test_ior_as_mdx1_ran_it_with_one_rank_per_vm_as_mdx2(classes):
    '''mdx I: -s 8192 -b 1m -t 1m (8 GiB per rank), best of 3, with and without O_DIRECT
    as two series; mdx II: one I/O operation in flight per VM (one rank).'''
    ior = classes['Ior']
    p = _params(ior)
    assert set(p['odirect']) == {True, False}
    assert 1 in p['ranks_per_node'] and 'cores' in p['ranks_per_node']
    assert set(p['num_nodes']) == {1, 2, 4, 8}
    # segments: the partition's sizing (extras.ior.segments) or -S, else mdx I's 8192
    assert (ior.MDX1_SEGMENTS, ior.block_size, ior.transfer_size, ior.repetitions) == \
        (8192, '1m', '1m', 3)
    # the sites size nothing down: they run mdx I's 8 GiB per rank
    for system in ('mdx2', 'laurel', 'aws-pcluster'):
        text = (REPO_ROOT / 'site-configs' / 'systems' / f'{system}.yaml').read_text()
        assert 'ior:' not in text, system


def test_warp_multi_client_sweeps_one_to_eight_clients(classes):
    '''Figure 10 [002: 9]: 1 to 8 client VMs; one VM's GET peaked at 128 concurrent operations.'''
    warp = classes['WarpMultiClient']
    assert list(_params(warp)['clients']) == list(range(1, 9))
    assert warp.concurrency == 128


def test_iperf3_aggregate_one_to_four_pairs_with_the_ramp_up_left_out(classes):
    '''Figure 5: pairs of VMs, 16 streams each, saturating at 3 pairs.'''
    agg = classes['Iperf3Aggregate']
    assert list(_params(agg)['pairs']) == [1, 2, 3, 4]
    assert list(_params(agg)['placement']) == ['same-host', 'different-hosts']
    assert agg.streams == 16 and agg.omit > 0


def test_fft_at_the_papers_size_where_one_node_holds_it(classes):
    '''Guidi et al.: 50,000^2 complex points on 1..8 nodes (about 40 GB of data), and the
    same size under perf on one core (Table IV): one rule for both kernels.'''
    from mdxbench import apps

    assert apps.PAPER_POINTS == 50000
    assert apps.problem_size(None, {'memory_gib': 498}) == (50000, "the paper's")
    n, why = apps.problem_size(None, {'memory_gib': 32})
    assert n == apps.FALLBACK_POINTS and '32 GiB' in why and '112 GiB' in why
    assert apps.problem_size(None, {})[0] == apps.FALLBACK_POINTS
    assert apps.problem_size(1024, {'memory_gib': 498}) == (1024, 'set (-S points)')
    for name in ('FftwMpi2d', 'PerfCountersFft'):
        assert classes[name].points == None, name     # noqa: E711 (a ReFrame variable)
        assert sys.modules[classes[name].__module__].problem_size is apps.problem_size


def test_counters_count_the_timed_phases_with_4k_pages(classes):
    mod = sys.modules[classes['PerfCountersFft'].__module__]
    text = open(mod.PERF_TIMED).read()
    assert '-D -1' in text and '--control "fd:$ctl,$ack"' in text
    src = open(mod.__file__).read()
    assert "self.env_vars['MDXBENCH_THP'] = 'off'" in src


def test_pds_runs_queries_one_to_seven_at_the_papers_scale_on_the_sites(classes):
    '''Figure 11: queries 1-7 in pandas, Polars, DuckDB and Dask on about 10 GB; only the
    development machine (`local`) runs a smaller data set, and says so in its site config.'''
    from mdxbench import sitecfg

    mod = sys.modules[classes['PdsTpch'].__module__]
    assert mod.QUERIES == tuple(range(1, 8)) and mod.PAPER_SCALE_FACTOR == 10
    assert set(mod.LIBRARIES) == {'pandas', 'polars', 'duckdb', 'dask'}
    site = REPO_ROOT / 'site-configs'
    env = {'MDXBENCH_LAUREL_ACCOUNT': 'acct', 'MDXBENCH_GPUNODE_GPUS': '8'}
    for f in sitecfg.system_files(site):
        cfg = sitecfg.build_config(site, selected=f.stem, env=env)
        for part in next(s for s in cfg['systems'] if s['name'] == f.stem)['partitions']:
            sf = (part['extras'].get('pds') or {}).get('scale_factor', mod.PAPER_SCALE_FACTOR)
            assert sf >= mod.PAPER_SCALE_FACTOR or f.stem in ('local', 'nscluster'), \
                (f.name, part['name'], sf)


def test_cache_sweep_is_the_papers_on_the_sites_and_sized_down_on_local(classes):
    '''Guidi et al.: CacheBench's sweep, 2 s a point, median of 10. The sites run that;
    `local` sizes it for a test machine (extras.cache_sweep), which the record says
    (meta.repeats, step, run_seconds); the check says it is not the paper's tool.'''
    sweep = classes['LikwidCacheSweep']
    assert sweep.PAPER == {'repeats': 10, 'step': 4, 'run_seconds': 2}
    assert "not the paper's CacheBench" in sweep.descr
    for system in ('mdx2', 'laurel', 'aws-pcluster'):
        assert 'cache_sweep' not in (REPO_ROOT / 'site-configs' / 'systems' / f'{system}.yaml').read_text()
    module = sys.modules[sweep.__module__]
    facts = {'l1d_bytes': 32768, 'l2_bytes': 524288, 'llc_bytes': 33554432}
    paper, _ = module.sweep_sizes(facts, step=4)
    small, levels = module.sweep_sizes(facts, step=16)
    assert set(levels.values()) <= set(small) and len(small) < len(paper)
