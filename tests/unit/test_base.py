import pytest

from mdxbench.base import expand


def test_expand_uses_the_given_environment_and_keeps_unknowns():
    env = {'MDXBENCH_SPACK_VIEW': '/v', 'PATH': '/usr/bin'}
    assert expand('$MDXBENCH_SPACK_VIEW/libexec/osu', env) == '/v/libexec/osu'
    assert expand('${MDXBENCH_SPACK_VIEW}/bin:$PATH', env) == '/v/bin:/usr/bin'
    assert expand('$MKLROOT/benchmarks', env) == '$MKLROOT/benchmarks'


def test_the_nominal_peak_says_which_clock_it_is_taken_at():
    '''A peak at the base clock is exceeded by turbo (mdx2: the paper's 1344 GFLOPS is 131%
    of 16 x 2.0 x 32): the figure says its clock; the AVX-512 all-core one where known.'''
    from mdxbench.base import peak_gflops

    facts = {'cores': 16, 'clock_ghz': 2.0, 'flops_per_cycle': 32}
    assert peak_gflops(facts) == (1024.0, 2.0, 'the base clock')
    assert round(100 * 1344 / peak_gflops(facts)[0]) == 131
    assert peak_gflops(dict(facts, avx512_clock_ghz=2.6)) == (
        16 * 2.6 * 32, 2.6, 'the AVX-512 all-core frequency')
    with pytest.raises(ValueError, match='lack clock_ghz'):
        peak_gflops({'cores': 16, 'flops_per_cycle': 32})


def test_a_pinned_benchmark_version_is_enforced():
    '''A partition pins a benchmark's version (mdx2: the paper's warp 1.0.8): another
    version, or none reported, is a failure that names both.'''
    from mdxbench.base import pinned_version_mismatch

    assert pinned_version_mismatch({'warp': '1.0.8'}, 'warp', '1.0.8') is None
    assert pinned_version_mismatch(None, 'warp', '1.0.0') is None
    assert pinned_version_mismatch({'fio': '3.38'}, 'warp', '1.0.0') is None
    assert pinned_version_mismatch({'warp': '1.0.8'}, 'warp', '1.0.0') == (
        'the partition pins warp 1.0.8 (extras.bench_versions), this run reported 1.0.0')
    assert 'reported no version' in pinned_version_mismatch({'warp': '1.0.8'}, 'warp', None)


def test_the_sites_pin_the_papers_warp():
    import yaml

    from mdxbench import REPO_ROOT

    systems = REPO_ROOT / 'site-configs' / 'systems'
    mdx2 = yaml.safe_load((systems / 'mdx2.yaml').read_text())
    for part in mdx2['partitions']:
        if part['extras'].get('object_targets'):
            assert part['extras']['bench_versions']['warp'] == '1.0.8', part['name']
    # local runs what ci/install.sh builds, and says so
    local = yaml.safe_load((systems / 'local.yaml').read_text())
    pin = local['partitions'][0]['extras']['bench_versions']['warp']
    assert f'WARP_VERSION=v{pin}\n' in (REPO_ROOT / 'ci' / 'install.sh').read_text()


def test_ranks_per_node_are_the_papers_32_or_the_nodes_cores():
    '''Guidi et al. ran the collectives and the FFT at 32 ranks per node (Figs 5-6, 13-16):
    OsuAlltoall and FftwMpi2d ask for 32, run all the cores of a smaller node and say so.'''
    from mdxbench.base import PAPER_RANKS_PER_NODE, ranks_per_node

    assert PAPER_RANKS_PER_NODE == 32
    assert ranks_per_node(112) == (32, 'as asked')          # a Sapphire Rapids node
    assert ranks_per_node(36, 36) == (36, 'as asked')        # the paper's C5
    assert ranks_per_node(8) == (8, 'all 8 cores of the node (fewer than the 32 asked)')
    assert ranks_per_node(2, 0) == (2, 'all 2 cores of the node (0 asked)')


def test_compute_threads_are_the_cores_or_every_vcpu_where_the_facts_say():
    '''LINPACK and BabelStream run one thread per core; on a partition whose figures are of
    every vCPU (AWS c7i.4xlarge: 8 cores x 2 threads, measured by Takahashi et al. as a
    16-vCPU instance) one per vCPU, placed on threads, and the record says which.'''
    from mdxbench.base import compute_threads

    assert compute_threads({'cores': 8, 'threads_per_core': 2}) == (
        8, 'cores', 'one thread per core (8)')
    assert compute_threads({'cores': 8, 'threads_per_core': 2, 'all_vcpus': True}) == (
        16, 'threads', 'all 16 vCPUs (8 cores x 2 threads, facts.all_vcpus)')
    # a VM whose vCPUs are its cores (mdx2 vc16m32g): the same either way
    assert compute_threads({'cores': 16, 'threads_per_core': 1, 'all_vcpus': True})[0] == 16


#: what the test below runs in a process of its own: ReFrame's runtime, once set up, stays
#: for the rest of a process (and changes what later tests in it import)
_VARIABLES = '''
import json, sys
from reframe.core import config, runtime
from mdxbench import REPO_ROOT, catalog
from mdxbench.base import check_variables
site = config.load_config(str(REPO_ROOT / 'site-configs' / 'settings.py'))
site.select_subconfig('local')
runtime.init_runtime(site)
classes = catalog.check_classes()
stream = classes['BabelStreamOmp']
out = {'default': check_variables(stream())}
stream.setvar('num_times', 20)        # what -S BabelStreamOmp.num_times=20 does
out['set'] = check_variables(stream())
out['sweep'] = check_variables(classes['LikwidCacheSweep']())
json.dump(out, sys.stdout)
'''


def test_a_run_records_every_variable_its_checks_classes_declare():
    '''What `-S BabelStreamOmp.num_times=20` does (the class's variable set before the test
    is made) is what the record says; the variables of ReFrame and of this library (the
    machinery: results, perf_table, ...) are not the check's inputs and are left out; a
    mapping and None are kept as JSON has them. (ReFrame's runtime, as `reframe` sets it
    up before it makes the tests, in a process of its own.)'''
    import json
    import subprocess
    import sys

    res = subprocess.run([sys.executable, '-c', _VARIABLES], capture_output=True, text=True,
                         timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    out = json.loads(res.stdout)
    assert out['default'] == {'llc_factor': 4, 'num_times': 100}
    assert out['set'] == {'llc_factor': 4, 'num_times': 20}
    assert out['sweep'] == {'kernel': 'copy_avx', 'levels_kb': {}, 'repeats': None,
                            'run_seconds': None, 'step': None}


def test_a_pair_runs_records_name_its_subject_and_the_partner(monkeypatch):
    '''Issue 61: inside mdxbench accept's pair run for mdx1-003 (MDXBENCH_PAIR_SUBJECT),
    a record of the job's two nodes says whose reading it is and the partner; outside one,
    nothing; a job of other than two nodes names no partner.'''
    from mdxbench.base import pair_run

    monkeypatch.delenv('MDXBENCH_PAIR_SUBJECT', raising=False)
    assert pair_run(['mdx1-003', 'mdx1-004']) == {}
    monkeypatch.setenv('MDXBENCH_PAIR_SUBJECT', 'mdx1-003')
    assert pair_run(['mdx1-002', 'mdx1-003']) == {'pair_subject': 'mdx1-003',
                                                  'pair_partner': 'mdx1-002'}
    assert pair_run(['mdx1-003', 'mdx1-004']) == {'pair_subject': 'mdx1-003',
                                                  'pair_partner': 'mdx1-004'}
    assert pair_run(['mdx1-003']) == pair_run(None) == {'pair_subject': 'mdx1-003'}
    assert pair_run(['mdx1-001', 'mdx1-003', 'mdx1-004']) == {'pair_subject': 'mdx1-003'}
