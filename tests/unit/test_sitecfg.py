import os
import pathlib
import subprocess
import sys

import pytest

from hang import HANG_S
from mdxbench import sitecfg

ROOT = pathlib.Path(__file__).resolve().parents[2]
SITE = ROOT / 'site-configs'


def test_expand_defaults_nested_and_env():
    env = {'MDXBENCH_STATE_DIR': '/st'}
    v = sitecfg.expand({'a': ['${MDXBENCH_X:-${MDXBENCH_STATE_DIR}/p}']}, file='f.yaml', env=env)
    assert v == {'a': ['/st/p']}
    env['MDXBENCH_X'] = '/x'
    assert sitecfg.expand('${MDXBENCH_X:-${MDXBENCH_STATE_DIR}/p}', file='f', env=env) == '/x'


def test_missing_required_variable_names_file_key_and_meaning():
    with pytest.raises(sitecfg.SiteConfigError) as err:
        sitecfg.expand({'partitions': [{'access': ['--account=${MDXBENCH_ACC:?Slurm account}']}]},
                       file='systems/x.yaml', env={})

    msg = str(err.value)
    assert 'systems/x.yaml' in msg and 'partitions[0].access[0]' in msg
    assert 'MDXBENCH_ACC' in msg and 'Slurm account' in msg


def test_required_variable_of_another_system_is_marked_not_fatal():
    v = sitecfg.expand('${MDXBENCH_ACC:?x}', file='f', env={}, strict=False)
    assert v == '<unset:MDXBENCH_ACC>'


@pytest.mark.parametrize('bad', ['${MDXBENCH_X', '${9X}', '${HOSTNAME}'])
def test_malformed_placeholders(bad):
    with pytest.raises(sitecfg.SiteConfigError, match='f.yaml: k'):
        sitecfg.expand({'k': bad}, file='f.yaml', env={})


def test_unknown_system_lists_the_known_ones():
    with pytest.raises(sitecfg.SiteConfigError, match="no system 'nosuch'.*local"):
        sitecfg.build_config(SITE, selected='nosuch', env={})


def test_every_system_loads(monkeypatch):
    env = {'MDXBENCH_LAUREL_ACCOUNT': 'acct', 'MDXBENCH_GPUNODE_GPUS': '8'}
    for f in sitecfg.system_files(SITE):
        cfg = sitecfg.build_config(SITE, selected=f.stem, env=env)
        names = [s['name'] for s in cfg['systems']]
        assert f.stem in names
        assert names[-1] == 'local'     # local matches any host: it must come last


def test_local_processor_is_reframes_detection_and_facts_only_what_it_lacks():
    cfg = sitecfg.build_config(SITE, selected='local', env={})
    part = [s for s in cfg['systems'] if s['name'] == 'local'][0]['partitions'][0]
    assert part['processor']['num_cpus'] == os.cpu_count()
    assert {c['type'] for c in part['processor']['topology']['caches']} >= {'L1', 'L2'}
    facts = part['extras']['facts']
    assert facts == sitecfg.detect_local_facts()
    # the processor's facts live in ReFrame's processor only, never twice
    assert not set(facts) & {'cores', 'sockets', 'threads_per_core', 'llc_bytes',
                             'l1d_bytes', 'l2_bytes'}


def test_declared_processors_have_what_the_checks_size_from():
    env = {'MDXBENCH_LAUREL_ACCOUNT': 'acct', 'MDXBENCH_GPUNODE_GPUS': '8'}
    for f in sitecfg.system_files(SITE):
        cfg = sitecfg.build_config(SITE, selected=f.stem, env=env)
        for part in next(s for s in cfg['systems'] if s['name'] == f.stem)['partitions']:
            proc, where = part['processor'], f'{f.name}: {part["name"]}'
            for key in ('num_cpus', 'num_cpus_per_core', 'num_sockets'):
                assert proc.get(key), (where, key)
            assert proc['num_cpus'] % (proc['num_cpus_per_core'] * proc['num_sockets']) == 0, where
            caches = {c['type'] for c in proc['topology']['caches']}
            assert 'L2' in caches, where
            facts = part['extras']['facts']
            assert facts['clock_ghz'] and facts['flops_per_cycle'] and facts['memory_gib'], where


def _broken_site(tmp_path, system_yaml):
    (tmp_path / 'systems').mkdir()
    (tmp_path / 'common.yaml').write_text((SITE / 'common.yaml').read_text())
    (tmp_path / 'systems' / 'x.yaml').write_text(system_yaml)
    return tmp_path


def test_malformed_yaml_names_file_and_line(tmp_path):
    site = _broken_site(tmp_path, 'name: x\npartitions: [\n  - {name: a\n')
    with pytest.raises(sitecfg.SiteConfigError, match=r'x.yaml:\d+:\d+: invalid YAML'):
        sitecfg.build_config(site, env={})


def test_missing_key_and_unknown_environ(tmp_path):
    site = _broken_site(tmp_path, 'name: x\npartitions:\n  - {name: a, scheduler: local}\n')
    with pytest.raises(sitecfg.SiteConfigError, match=r"x.yaml: partitions\[0\]: missing required key 'launcher'"):
        sitecfg.build_config(site, env={})

    (site / 'systems' / 'x.yaml').write_text(
        'name: x\npartitions:\n  - {name: a, scheduler: local, launcher: local, environs: [gnuu]}\n')
    with pytest.raises(sitecfg.SiteConfigError, match=r"environs\[0\]: unknown environment 'gnuu'"):
        sitecfg.build_config(site, env={})


def test_name_must_match_file(tmp_path):
    site = _broken_site(tmp_path, 'name: y\npartitions: []\n')
    with pytest.raises(sitecfg.SiteConfigError, match="x.yaml: name: 'y' differs"):
        sitecfg.build_config(site, env={})


def _reframe(*args, env_extra=None):
    env = dict(os.environ, RFM_CONFIG_FILES=str(SITE / 'settings.py'))
    env.update(env_extra or {})
    exe = pathlib.Path(sys.executable).parent / 'reframe'
    return subprocess.run([str(exe), *args], capture_output=True, text=True, env=env,
                          cwd=ROOT, timeout=HANG_S)


@pytest.mark.parametrize('system', ['local', 'mdx2', 'mdx1', 'laurel', 'aws-pcluster', 'nscluster'])
def test_reframe_accepts_each_system(system):
    '''ReFrame itself validates the generated configuration against its schema.'''
    res = _reframe('--system', system, '--show-config=systems/0/name',
                   env_extra={'MDXBENCH_LAUREL_ACCOUNT': 'acct',
                              'MDXBENCH_LAUREL_MODULES_SYSTEM': 'nomod'})
    assert res.returncode == 0, res.stdout + res.stderr
    assert f'"{system}"' in res.stdout


@pytest.mark.parametrize('system, rate', [('local', '1'), ('nscluster', '1'),
                                          ('mdx2', '0.1'), ('laurel', '0.1')])
def test_a_systems_own_general_options_apply_to_it_alone(system, rate):
    """`general:` in a system's file (local and nscluster: poll at least once a second)
    reaches ReFrame for that system; the others keep ReFrame's default (0.1 Hz), and the
    common options still apply to all."""
    env = {'MDXBENCH_LAUREL_ACCOUNT': 'acct', 'MDXBENCH_LAUREL_MODULES_SYSTEM': 'nomod'}
    res = _reframe('--system', system, '--show-config=general/0/poll_rate_min', env_extra=env)
    assert res.returncode == 0, res.stdout + res.stderr
    assert res.stdout.strip().splitlines()[-1] == rate, res.stdout
    res = _reframe('--system', system, '--show-config=general/0/check_search_recursive',
                   env_extra=env)
    assert res.stdout.strip().splitlines()[-1] == 'true', res.stdout


def test_a_systems_general_must_be_a_mapping(tmp_path):
    site = _broken_site(tmp_path, 'name: x\ngeneral: [poll_rate_min]\npartitions:\n'
                        '  - {name: a, scheduler: local, launcher: local, environs: [native]}\n')
    with pytest.raises(sitecfg.SiteConfigError, match='x.yaml: general: expected a mapping'):
        sitecfg.build_config(site, env={})


def test_reframe_reports_unknown_system_without_traceback():
    res = _reframe('--system', 'nosuch', '-c', 'checks', '-l')
    assert res.returncode != 0
    out = res.stdout + res.stderr
    assert "no system 'nosuch'" in out and 'site-configs/systems' in out
    assert 'Traceback' not in out


def test_reframe_reports_missing_variable_of_selected_system():
    env = {k: v for k, v in os.environ.items() if k != 'MDXBENCH_LAUREL_ACCOUNT'}
    env['RFM_CONFIG_FILES'] = str(SITE / 'settings.py')
    exe = pathlib.Path(sys.executable).parent / 'reframe'
    res = subprocess.run([str(exe), '--system', 'laurel', '-c', 'checks', '-l'],
                         capture_output=True, text=True, env=env, cwd=ROOT, timeout=HANG_S)
    assert res.returncode != 0
    assert 'laurel.yaml: partitions[0].access[1]: environment variable MDXBENCH_LAUREL_ACCOUNT' \
        in res.stdout + res.stderr


def test_spack_environment_exports_its_view_for_the_checks():
    '''Checks look for binaries outside bin/ (OSU's libexec) through $MDXBENCH_SPACK_VIEW:
    the environment must set it, before PATH uses the same view.'''
    cfg = sitecfg.build_config(SITE, selected='mdx2', env={})
    env = [e for e in cfg['environments'] if e['name'] == 'spack'
           and e['target_systems'] == ['mdx2']][0]
    names = [k for k, _ in env['env_vars']]
    assert names[0] == 'MDXBENCH_SPACK_VIEW'
    view = dict(env['env_vars'])['MDXBENCH_SPACK_VIEW']
    assert view.endswith('spack/mdx2/.spack-env/view')
    assert dict(env['env_vars'])['PATH'] == f'{view}/bin:$PATH'


@pytest.mark.parametrize('built', [True, False])
def test_spack_replaces_native_on_local_and_nscluster_once_its_view_is_built(tmp_path, built):
    '''spack_when_built: native -- with the view there, each check runs once, in `spack`
    (the view first on PATH, the machine's tools after it); without it, in `native`. The
    sites name `spack` themselves and are not changed.'''
    view = tmp_path / 'view'
    if built:
        view.mkdir()
    cfg = sitecfg.build_config(SITE, selected='local', env={'MDXBENCH_SPACK_VIEW': str(view)})
    systems = {s['name']: s for s in cfg['systems']}
    for name in ('local', 'nscluster'):
        environs = systems[name]['partitions'][0]['environs']
        assert ('spack' in environs, 'native' in environs) == (built, not built), (name, environs)
    assert systems['local']['partitions'][0]['environs'][-1] == 'mkl'
    assert systems['mdx2']['partitions'][0]['environs'] == ['spack']
    assert all('spack_when_built' not in s for s in cfg['systems'])


def test_facts_from_a_captured_machine(fixture_text):
    '''/proc/cpuinfo and /proc/meminfo of this project's CI machine kind (AMD EPYC with
    AVX-512, 24,684,092 kB, no cpufreq): AVX-512 F is 32 double-precision FLOPs per cycle
    and core (two 8-wide FMA units), the clock is cpuinfo's "cpu MHz".'''
    facts = sitecfg.detect_local_facts(fixture_text('proc/cpuinfo-debian12-vm.txt'),
                                       fixture_text('proc/meminfo-debian12-vm.txt'), '')
    assert facts['flops_per_cycle'] == 32
    assert facts['memory_gib'] == 23.5 and facts['clock_ghz'] == 2.596


def test_flops_per_cycle_follow_the_vector_extensions(fixture_text):
    '''The same machine with its AVX-512 flags taken out is an AVX2/FMA machine (16), and
    without AVX2 and FMA an AVX one (8).'''
    text = fixture_text('proc/cpuinfo-debian12-vm.txt')
    no512 = ' '.join(w for w in text.split(' ') if not w.startswith('avx512'))
    assert sitecfg.detect_local_facts(no512, '', '')['flops_per_cycle'] == 16
    noavx2 = no512.replace(' avx2 ', ' ').replace(' fma ', ' ')
    assert sitecfg.detect_local_facts(noavx2, '', '')['flops_per_cycle'] == 8


def test_a_partition_the_site_may_lack_is_present_only_where_named():
    '''mdx2's flavour without virtio multiqueue (the paper's Figure 3 VMs): absent unless
    the site names its Slurm partition, so `--system mdx2` never submits to a partition
    that does not exist; present, its NIC facts say one queue.'''
    def parts(env):
        cfg = sitecfg.build_config(SITE, selected='mdx2', env=env)
        [mdx2] = [s for s in cfg['systems'] if s['name'] == 'mdx2']
        return {p['name']: p for p in mdx2['partitions']}

    assert list(parts({})) == ['vc16m32g', 'vc224m498g']
    named = parts({'MDXBENCH_MDX2_PARTITION_ONEQUEUE': 'vc16-noqueues'})
    assert list(named) == ['vc16m32g', 'vc16m32g-1q', 'vc224m498g']
    part = named['vc16m32g-1q']
    assert part['access'] == ['--partition=vc16-noqueues'] and 'present_if' not in part
    assert part['extras']['facts']['nic']['queues'] == 1


def test_the_one_queue_flavour_gets_the_papers_figures_without_multiqueue():
    '''The ordinary network checks on that partition are held to the paper's figures
    measured without multiqueue (Figure 3: 12.9 Gbit/s one stream across hosts; TCP_RR
    74 us across hosts), the multiqueue partition to the figures with it.'''
    import json

    def reference(name):
        res = _reframe('--system', 'mdx2:vc16m32g-1q', '-c', 'checks/network/tcp.py', '-n', name,
                       '--describe',
                       env_extra={'MDXBENCH_MDX2_PARTITION_ONEQUEUE': 'vc16-noqueues'})
        assert res.returncode == 0, res.stdout + res.stderr
        [test] = json.loads(res.stdout[res.stdout.index('['):res.stdout.rindex(']') + 1])
        return test['reference']

    rr = reference('NetperfTcpRR%placement=different-hosts')
    assert rr['mdx2:vc16m32g-1q']['mean_rtt'][0] == 74 and rr['mdx2:vc16m32g']['mean_rtt'][0] == 85
    bw = reference('Iperf3Throughput%placement=different-hosts%streams=1$')
    assert bw['mdx2:vc16m32g-1q']['throughput'][0] == 12.9
    assert 'throughput' not in bw.get('mdx2:vc16m32g', {})
