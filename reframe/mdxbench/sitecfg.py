'''Site configuration: YAML data under ``site-configs/`` turned into ReFrame's configuration.

``site-configs/common.yaml`` holds what all systems share (environments, logging, general
options); ``site-configs/systems/<name>.yaml`` holds one system each. Site values that
nobody outside the site can know are written as placeholders and taken from the
environment:

* ``${MDXBENCH_<NAME>:-default}``: the variable, or the documented default;
* ``${MDXBENCH_<NAME>:?what it is}``: required; if unset, loading fails with the file, the key
  and this text -- but only when that system is the one selected (a user of ``local`` need
  not set mdx2's variables).

``processor: detect`` and ``extras.facts: detect`` (the ``local`` system) are filled from
this machine's ``/proc`` and ``/sys``.
'''
import os
import pathlib
import re
import sys

import yaml

from mdxbench import REPO_ROOT, perflog, settings


try:
    from reframe.core.exceptions import ConfigError as _Base
except ImportError:     # used without ReFrame (e.g. by the unit tests of this module)
    _Base = Exception


class SiteConfigError(_Base):
    '''A site configuration problem; the message names the file and the key.
    (A ReFrame ConfigError, so that ``reframe`` prints it as one, without a traceback.)'''


def _keypath(path):
    out = ''
    for p in path:
        out += f'[{p}]' if isinstance(p, int) else (f'.{p}' if out else str(p))

    return out or '<top>'


def expand(value, *, file, path=(), env=None, strict=True, used=None):
    '''Expand ``${VAR...}`` placeholders in every string of ``value``.

    With ``strict=False`` an unset required variable becomes ``<unset:VAR>`` instead of
    an error (for systems other than the selected one). ``used`` collects the names of
    the variables that were read.
    '''
    env = os.environ if env is None else env
    if isinstance(value, dict):
        return {k: expand(v, file=file, path=(*path, k), env=env, strict=strict, used=used)
                for k, v in value.items()}

    if isinstance(value, list):
        return [expand(v, file=file, path=(*path, i), env=env, strict=strict, used=used)
                for i, v in enumerate(value)]

    if not isinstance(value, str):
        return value

    where = f'{file}: {_keypath(path)}'
    return _expand_str(value, where, env, strict, used)


def _expand_str(value, where, env, strict, used):
    '''Expand placeholders in one string; defaults may hold placeholders themselves.'''
    out = []
    i = 0
    while True:
        j = value.find('${', i)
        if j < 0:
            out.append(value[i:])
            return ''.join(out)

        out.append(value[i:j])
        depth, k = 0, j
        while k < len(value):
            if value.startswith('${', k):
                depth += 1
                k += 2
                continue

            if value[k] == '}':
                depth -= 1
                if depth == 0:
                    break

            k += 1
        else:
            raise SiteConfigError(f'{where}: unclosed placeholder in {value!r}')

        body = value[j + 2:k]
        m = re.fullmatch(r'([A-Za-z_][A-Za-z0-9_]*)(?:(:-|:\?)(.*))?', body, re.S)
        if not m:
            raise SiteConfigError(f'{where}: malformed placeholder ${{{body}}} in {value!r}')

        name, op, arg = m.group(1), m.group(2), m.group(3)
        if used is not None:
            used.add(name)

        if not name.startswith('MDXBENCH_') and name not in ('HOME', 'USER'):
            raise SiteConfigError(
                f'{where}: placeholder ${{{name}}}: site variables must be named MDXBENCH_*'
            )

        val = env.get(name)
        if val not in (None, ''):
            out.append(val)
        elif op == ':-':
            out.append(_expand_str(arg, where, env, strict, used))
        elif strict:
            what = f' ({arg})' if op == ':?' and arg else ''
            raise SiteConfigError(f'{where}: environment variable {name} is not set{what}')
        else:
            out.append(f'<unset:{name}>')

        i = k + 1


def load_yaml(path):
    path = pathlib.Path(path)
    try:
        with open(path) as fp:
            data = yaml.safe_load(fp)
    except FileNotFoundError:
        raise SiteConfigError(f'{path}: file not found') from None
    except yaml.YAMLError as err:
        mark = getattr(err, 'problem_mark', None)
        where = f':{mark.line + 1}:{mark.column + 1}' if mark else ''
        raise SiteConfigError(f'{path}{where}: invalid YAML: {err}') from None

    if not isinstance(data, dict):
        raise SiteConfigError(f'{path}: expected a mapping at the top level')

    return data


# --- facts of this machine (the `local` system) -------------------------------------

def _read(path, default=None):
    try:
        return pathlib.Path(path).read_text().strip()
    except OSError:
        return default


def detect_local_processor():
    """This machine's processor as ReFrame itself detects it (``reframe.utility.cpuinfo``:
    CPUs, cores, sockets, the cache topology), for ``processor: detect``."""
    from reframe.utility.cpuinfo import cpuinfo

    return cpuinfo()


def detect_local_facts(cpuinfo=None, meminfo=None, max_khz=None):
    """What ReFrame's processor has no field for, detected on this machine, for
    ``extras.facts: detect``: clock, double-precision FLOPs per cycle and core (from the
    vector extensions), memory, and whether perf has a hardware PMU to count with.
    ``cpuinfo``, ``meminfo`` (texts of /proc) and ``max_khz`` (cpufreq's
    cpuinfo_max_freq) are read from this machine unless given."""
    if cpuinfo is None:
        cpuinfo = _read('/proc/cpuinfo', '')
    flags, mhz = set(), []
    for line in cpuinfo.splitlines():
        key, _, val = line.partition(':')
        key, val = key.strip(), val.strip()
        if key == 'flags' and not flags:
            flags = set(val.split())
        elif key == 'cpu MHz':
            mhz.append(float(val))

    if 'avx512f' in flags:
        fpc = 32
    elif 'fma' in flags and 'avx2' in flags:
        fpc = 16
    elif 'avx' in flags:
        fpc = 8
    else:
        fpc = 4

    mem_kib = 0
    if meminfo is None:
        meminfo = _read('/proc/meminfo', '')
    for line in meminfo.splitlines():
        if line.startswith('MemTotal:'):
            mem_kib = int(line.split()[1])

    if max_khz is None:
        max_khz = _read('/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq')
    clock_ghz = int(max_khz) / 1e6 if max_khz else (max(mhz) / 1000 if mhz else None)
    return {
        'memory_gib': round(mem_kib / 1024**2, 1),
        'clock_ghz': round(clock_ghz, 3) if clock_ghz else None,
        # which clock that is (the peak's, base.peak_gflops, says it in the record)
        'clock_kind': ('the maximum cpufreq reports' if max_khz else
                       'the highest MHz /proc/cpuinfo shows' if mhz else None),
        'flops_per_cycle': fpc,
        # a hardware PMU perf can count with (absent in a VM without a virtual PMU)
        'pmu': any(pathlib.Path('/sys/bus/event_source/devices', d).is_dir()
                   for d in ('cpu', 'cpu_core', 'armv8_pmuv3_0')),
        'source': 'detected on this machine from /proc and /sys',
    }


# --- building ReFrame's configuration -----------------------------------------------

def requested_system(argv=None, env=None):
    '''The system named by ``--system`` (or RFM_SYSTEM), without its partition.'''
    argv = sys.argv if argv is None else argv
    env = os.environ if env is None else env
    name = None
    for i, arg in enumerate(argv):
        if arg == '--system' and i + 1 < len(argv):
            name = argv[i + 1]
        elif arg.startswith('--system='):
            name = arg.split('=', 1)[1]

    name = name or env.get('RFM_SYSTEM')
    return name.split(':')[0] if name else None


_PART_REQUIRED = ('name', 'scheduler', 'launcher', 'environs')


def _check_system(sysdef, file, env_names):
    for key in ('name', 'partitions'):
        if key not in sysdef:
            raise SiteConfigError(f'{file}: missing required key {key!r}')

    if sysdef['name'] != file.stem:
        raise SiteConfigError(
            f'{file}: name: {sysdef["name"]!r} differs from the file name {file.stem!r}'
        )

    if not isinstance(sysdef['partitions'], list) or not sysdef['partitions']:
        raise SiteConfigError(f'{file}: partitions: expected a non-empty list')

    for i, part in enumerate(sysdef['partitions']):
        for key in _PART_REQUIRED:
            if key not in part:
                raise SiteConfigError(f'{file}: partitions[{i}]: missing required key {key!r}')

        for j, e in enumerate(part['environs']):
            if e not in env_names:
                raise SiteConfigError(
                    f'{file}: partitions[{i}].environs[{j}]: unknown environment {e!r} '
                    f'(defined in common.yaml: {", ".join(sorted(env_names))})'
                )


def detect_gpus(env=None):
    """The GPUs of this machine as its nvidia-smi (on ``env``'s PATH) lists them, for
    ``num_devices: detect`` of a partition's gpu devices (``gpunode``: one node vetted on
    its own)."""
    import subprocess

    cmd = ['nvidia-smi', '--query-gpu=index', '--format=csv,noheader']
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=60, env=env)
    except (OSError, subprocess.SubprocessError) as err:
        raise SiteConfigError(f'{" ".join(cmd)}: {err}') from None
    if out.returncode != 0:
        said = (out.stderr or out.stdout or '').strip().splitlines()
        raise SiteConfigError(f'{" ".join(cmd)} exited {out.returncode}'
                              + (f': {said[0]}' if said else ''))
    return sum(1 for line in out.stdout.splitlines() if line.strip().isdigit())


#: what a GPU partition declares that placeholders give as text: numbers and yes/no
_GPU_NUMBERS = ('count', 'memory_mib', 'pcie_gen', 'pcie_width')
_GPU_FLAGS = ('persistence', 'ecc', 'mig')


def _typed(value, kind, where):
    '''A placeholder's text as the number or flag the key holds; '' declares nothing.'''
    if not isinstance(value, str):
        return value
    text = value.strip().lower()
    if text == '':
        return None
    if kind == 'flag':
        if text in ('true', 'yes', '1', 'on'):
            return True
        if text in ('false', 'no', '0', 'off'):
            return False
        raise SiteConfigError(f'{where}: {value!r}: expected true or false')
    try:
        return int(text)
    except ValueError:
        raise SiteConfigError(f'{where}: {value!r}: expected a whole number') from None


def _fill_gpus(part, file, i, selected, env):
    '''``num_devices: detect`` from nvidia-smi (the selected system only: another system's
    partitions are never probed), or ``MDXBENCH_<SYSTEM>_GPUS`` where set; and the GPU
    facts that placeholders give as text, as numbers and flags.'''
    for j, dev in enumerate(part.get('devices') or []):
        if dev.get('num_devices') != 'detect':
            continue
        where = f'{file}: partitions[{i}].devices[{j}].num_devices'
        given = env.get(f'MDXBENCH_{file.stem.upper()}_GPUS', '')
        if given:
            dev['num_devices'] = _typed(given, 'number', where + f' (MDXBENCH_{file.stem.upper()}_GPUS)')
        elif selected:
            try:
                dev['num_devices'] = detect_gpus(env)
                if dev['num_devices'] < 1:
                    # a node vetted for its GPUs that shows none fails: its checks would
                    # skip ("declares no GPU") and the run pass
                    raise SiteConfigError('nvidia-smi lists no GPU on this node')
            except SiteConfigError as err:
                raise SiteConfigError(f'{where}: detect: {err} (set MDXBENCH_'
                                      f'{file.stem.upper()}_GPUS=N to declare the count)') from None
        else:
            dev['num_devices'] = 0
    extras = part.get('extras') or {}
    facts = extras.get('facts')
    if isinstance(facts, dict) and 'gpu_p2p' in facts:
        facts['gpu_p2p'] = bool(_typed(facts['gpu_p2p'], 'flag',
                                       f'{file}: partitions[{i}].extras.facts.gpu_p2p'))
    gpu = extras.get('gpu')
    if isinstance(gpu, dict):
        for key in _GPU_NUMBERS + _GPU_FLAGS:
            if key in gpu:
                gpu[key] = _typed(gpu[key], 'flag' if key in _GPU_FLAGS else 'number',
                                  f'{file}: partitions[{i}].extras.gpu.{key}')


def _fill_detected(part, file, i):
    if part.get('processor') == 'detect':
        part['processor'] = detect_local_processor()

    facts = part.get('extras', {}).get('facts')
    if facts == 'detect':
        part['extras']['facts'] = detect_local_facts()
    elif isinstance(facts, dict) and facts.get('detect') is True:
        # detected, and what the site declares on top (e.g. a pinned kernel release);
        # an empty placeholder declares nothing
        part['extras']['facts'] = dict(detect_local_facts(), **{
            k: v for k, v in facts.items() if k != 'detect' and v not in ('', None)})


def spack_environ(sysdef, template):
    '''The ReFrame environment `spack` of one system: its Spack environment's view first on
    PATH (binaries), LD_LIBRARY_PATH and MANPATH, and CPATH and LIBRARY_PATH for the
    checks that compile against its libraries (FFTW MPI).'''
    env = sysdef.pop('spack_environment', sysdef['name'])
    view = template.get('view', '').replace('@ENV@', env)
    return {
        'name': 'spack',
        'target_systems': [sysdef['name']],
        'cc': 'cc', 'cxx': 'c++', 'ftn': 'gfortran',
        'env_vars': [['MDXBENCH_SPACK_VIEW', view],
                     ['PATH', f'{view}/bin:$PATH'],
                     ['LD_LIBRARY_PATH', f'{view}/lib:{view}/lib64:$LD_LIBRARY_PATH'],
                     ['MANPATH', f'{view}/share/man:$MANPATH'],
                     ['CPATH', f'{view}/include:$CPATH'],
                     ['LIBRARY_PATH', f'{view}/lib:{view}/lib64:$LIBRARY_PATH']],
        'extras': {'spack_env': str(REPO_ROOT / 'spack' / env), 'spack_view': view},
    }


def system_files(site_dir):
    return sorted(pathlib.Path(site_dir, 'systems').glob('*.yaml'))


def inside_allocation(part):
    '''The partition as seen from inside one node's Slurm job (``mdxbench accept``): the
    checks run one after another in that allocation (ReFrame's ``local`` scheduler, the
    partition's launcher within the job), so a node costs one job whatever the number of
    checks. Name, processor, features and environments stay: records name the partition.'''
    part['scheduler'] = 'local'
    part['access'] = []
    part['max_jobs'] = 1


#: ``$MDXBENCH_STATE_DIR``, or ``.mdxbench`` in the repository (:mod:`mdxbench.settings`)
state_dir = settings.state_dir


def build_config(site_dir, selected=None, env=None):
    '''Return ReFrame's ``site_configuration`` dictionary.'''
    site_dir = pathlib.Path(site_dir)
    env = dict(os.environ if env is None else env)
    state = env.setdefault('MDXBENCH_STATE_DIR', str(state_dir(env)))
    env.setdefault('MDXBENCH_ROOT', str(REPO_ROOT))
    # ReFrame's file log handler writes there from the start: a fresh clone has none yet
    pathlib.Path(state).mkdir(parents=True, exist_ok=True)
    common_file = site_dir / 'common.yaml'
    common = load_yaml(common_file)
    common = expand(common, file=common_file, env=env)
    env_names = {e['name'] for e in common.get('environments', [])} | {'spack'}
    spack_tmpl = common.pop('spack_environ', {})
    spack_environs = []
    files = system_files(site_dir)
    names = [f.stem for f in files]
    if selected is not None and selected not in names:
        raise SiteConfigError(
            f'{site_dir / "systems"}: no system {selected!r} (file {selected}.yaml); '
            f'known systems: {", ".join(names)}'
        )

    systems, system_general = [], []
    for f in files:
        raw = load_yaml(f)
        sysdef = expand(raw, file=f, env=env, strict=(f.stem == selected))
        slurm_conf = sysdef.pop('slurm_conf', None)
        # `general:` in a system's file: ReFrame's general options for that system only
        # (ReFrame resolves each option of the unnamed `general` objects by system, the
        # system's own value first), e.g. how often to poll a scheduler
        general = sysdef.pop('general', None)
        if general is not None:
            if not isinstance(general, dict):
                raise SiteConfigError(f'{f}: general: expected a mapping of ReFrame general '
                                      f'options, got {type(general).__name__}')
            system_general.append(dict(general, target_systems=[sysdef.get('name', f.stem)]))
        if slurm_conf and f.stem == selected:
            # ReFrame runs sbatch/squeue/sacct with its own environment
            os.environ['SLURM_CONF'] = slurm_conf

        # a partition the site may or may not have (a flavour without virtio multiqueue):
        # `present_if: '${VAR:-}'` keeps it only where VAR names it, so `--system S` never
        # submits to a Slurm partition the site lacks
        sysdef['partitions'] = [part for part in sysdef.get('partitions') or []
                                if part.pop('present_if', True) not in ('', None, False)]
        instead = sysdef.pop('spack_when_built', None)
        environ = spack_environ(sysdef, spack_tmpl)
        spack_environs.append(environ)
        if instead and os.path.isdir(environ['extras']['spack_view']):
            # Spack's view is built (ci/spack-build.sh): `spack` (the view first on PATH,
            # the machine's tools after it) takes the place of that environment, so each
            # check runs once, on Spack's build where there is one
            for part in sysdef['partitions']:
                part['environs'] = ['spack' if e == instead else e for e in part['environs']]

        _check_system(sysdef, f, env_names)
        for i, part in enumerate(sysdef['partitions']):
            _fill_detected(part, f, i)
            _fill_gpus(part, f, i, f.stem == selected, env)
            part['features'] = list(part.get('features', [])) + target_features(part)
            if f.stem == selected and settings.get('MDXBENCH_INSIDE_ALLOCATION', env) and \
                    env.get('SLURM_JOB_ID'):
                inside_allocation(part)

        systems.append(sysdef)

    # A system listed later is only autodetected if the earlier ones do not match, so
    # `local` (whose hostnames match anything by default) goes last.
    systems.sort(key=lambda s: (s['name'] == 'local', s['name']))
    config = {k: v for k, v in common.items() if k != 'perflog'}
    config['general'] = list(common.get('general', [])) + system_general
    config['environments'] = list(common.get('environments', [])) + spack_environs
    config['systems'] = systems
    plog = common.get('perflog', {})
    config['logging'] = [{
        'level': 'debug',
        'handlers': common.get('log_handlers', []),
        'handlers_perflog': [{
            'type': 'filelog',
            'prefix': '%(check_system)s/%(check_partition)s',
            'basedir': plog.get('basedir', str(state_dir(env) / 'perflogs')),
            'level': 'info',
            'append': True,
            'datefmt': '%Y-%m-%dT%H:%M:%S%:z',
            'format': perflog.reframe_format(),
            'format_perfvars': perflog.reframe_format_perfvars(),
        }] + plog.get('extra_handlers', []),
    }]
    config.pop('log_handlers', None)
    return config


def target_features(part):
    '''The partition features its declared targets give it, so that checks select the
    partitions they can run on with ReFrame's ``valid_systems = ['+storage_<name>']``:
    ``storage_<name>`` for each storage target (``extras.storage_targets``: a directory,
    or ``{path, shared: true}`` for one every node sees), ``shared_storage_<name>`` for
    the shared ones (multi-node I/O), and
    ``object_<name>`` for each S3 target with an endpoint (``extras.object_targets``; one
    whose endpoint is empty is not usable, so no check case is made for it), and
    ``network_peer`` where a netserver peer is declared.'''
    extras = part.get('extras') or {}
    storage = extras.get('storage_targets') or {}
    feats = [f'storage_{n}' for n in storage]
    feats += [f'shared_storage_{n}' for n, t in storage.items()
              if isinstance(t, dict) and t.get('shared')]
    feats += [f'object_{n}' for n, t in (extras.get('object_targets') or {}).items()
              if (t or {}).get('endpoint')]
    # a netserver every node can reach (`extras.network_peer: {host, port}`): the per-node
    # network acceptance check measures each node against it
    if (extras.get('network_peer') or {}).get('host'):
        feats.append('network_peer')
    return feats


def declared_names(key, site_dir=None):
    '''Names of every entry any partition declares under ``extras.<key>`` (e.g.
    ``storage_targets``, ``object_targets``), read from the YAML without expanding
    placeholders: the parameter values of the checks that run on such targets; each case
    selects the partitions that declare its target (:func:`target_features`).'''
    site_dir = pathlib.Path(site_dir or REPO_ROOT / 'site-configs')
    names = set()
    for f in system_files(site_dir):
        for part in load_yaml(f).get('partitions', []):
            names.update((part.get('extras') or {}).get(key) or {})

    return sorted(names)


def storage_target_names(site_dir=None):
    '''Storage targets (directories) of every partition: ``extras.storage_targets``.'''
    return declared_names('storage_targets', site_dir)


def object_target_names(site_dir=None):
    '''S3 object-storage targets of every partition: ``extras.object_targets``.'''
    return declared_names('object_targets', site_dir)
