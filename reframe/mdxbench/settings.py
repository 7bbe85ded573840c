'''Every ``MDXBENCH_*`` setting, in one table: its name, its default and what it means
(:data:`SETTINGS`). The settings reference (docs/settings.md) is generated from it, with
the files that read each one found in the repository (:func:`readers`), and
``tests/unit/test_settings.py`` holds the code to it: a name read anywhere -- the Python
packages, the checks, the ``ci/`` scripts -- is declared here or is a site variable of a
site file (``site-configs/systems/*.yaml``, documented there and in docs/sites.md); each
name declared here is read somewhere; Python reads a setting only through :func:`get`.

The site variables (``MDXBENCH_<SYSTEM>_...``: partitions, host names, storage paths,
credentials files) are not here: each site file declares its own, with what it means.
Nor are ``ci/spack.sh``'s ``MDXBENCH_<PIN>``, one per pin of ``spack/pins.env`` (a site
may pin another Spack commit).'''
import dataclasses
import os
import pathlib
import re


@dataclasses.dataclass(frozen=True)
class Setting:
    name: str
    default: str        #: as a reader of the docs reads it
    meaning: str
    area: str           #: the group the reference lists it under
    #: the default as the code takes it, where it is a plain value: written here only
    #: (:func:`get` returns it; the docs' default is this value)
    value: str = None


_S = Setting


def _V(name, value, meaning, area):
    '''A setting whose default is a plain value, said once.'''
    return Setting(name, f'`{value}`', meaning, area, value)
SETTINGS = (
    # --- where things are -------------------------------------------------------------
    _S('MDXBENCH_ROOT', 'the repository of the running code', 'the mdxbench checkout (the '
       'site config finds the checks and scripts under it)', 'paths'),
    _S('MDXBENCH_STATE_DIR', '`<repository>/.mdxbench`', 'where services, the venv, '
       'perflogs, the history copy, cycles and the site are kept', 'paths'),
    _S('MDXBENCH_PERFLOG_DIR', '`<state>/perflogs`', "where ReFrame writes the perflogs and "
       "every command reads them; the Spack specs of the builds are archived beside them",
       'paths'),
    _S('MDXBENCH_EVENTS', '`<state>/events.jsonl`', 'the system events file (`mdxbench '
       'event`)', 'paths'),
    _S('MDXBENCH_HISTORY_DIR', '`<state>/history`', "the local Parquet copy of "
       "Elasticsearch's records", 'paths'),
    _S('MDXBENCH_REFERENCE_DIR', '`site-configs/references`', 'the reference files the '
       'checks and `mdxbench references` read', 'paths'),
    _S('MDXBENCH_VENV', '`<state>/venv`', "the Python environment ci/ makes and uses",
       'paths'),
    _S('MDXBENCH_PYTHON', '`python3`', 'the Python the venv is made with', 'install'),
    _S('MDXBENCH_BUNDLE_MAX_MIB', '`60`', 'ci/gpunode-bundle.sh: the most the bundle that '
       'vets a GPU node offline may weigh', 'install'),
    _S('MDXBENCH_GPUNODE_GPUS', "nvidia-smi's count", "gpunode: the node's GPUs, declared "
       '(the checks then fail a node that shows another count)', 'jobs'),
    _S('MDXBENCH_PIP_EXTRAS', '`test,docs,datascience,mkl,spack` (ci/site-install.sh: '
       '`datascience`)', "the optional dependency groups installed into the venv "
       "(`pyproject.toml`)", 'install'),
    _S('MDXBENCH_PDS', '`1`', "`0`: do not make polars-benchmark's Python (PdsBenchmark "
       'then skips, saying so)', 'install'),
    _S('MDXBENCH_GO_TOOLS', '`1`', '`0`: do not build MinIO and warp (the S3 checks then '
       'skip)', 'install'),
    _S('MDXBENCH_GO_CACHE', '`/var/cache/mdxbench/go` as root, else in the state '
       'directory', "Go's module and build caches, kept per machine", 'install'),
    _S('MDXBENCH_GPU_BUILD', 'unset (set by `ci/test.sh`)', 'the file of the exit status '
       'of the GPU benchmarks\' background build (ci/spack-gpu.sh): test_spack waits for it',
       'ci'),
    _S('MDXBENCH_TESTS_BESIDE_DONE', 'unset (set by `ci/test.sh`)', 'the files, '
       'colon-separated, the pytest sessions beside the quiet one write their exit status '
       'to when they end: the integration modules that need the machine to themselves '
       '(the fleet\'s acceptance) wait for all of them', 'ci'),
    _S('MDXBENCH_GO_TOOLS_BUILD', 'unset (set by `ci/test.sh`)', 'the file of the exit '
       'status of MinIO\'s and warp\'s build beside the first tests: the integration tests '
       'that need them wait for it', 'install'),
    _S('MDXBENCH_GO_TOOLS_PID', 'unset (set by `ci/test.sh`)', 'the file of the PID of '
       'that build: a test at normal priority that waits for it takes the build to its '
       'own priority', 'install'),
    # --- Elasticsearch ----------------------------------------------------------------
    _V('MDXBENCH_ES_URL', 'http://127.0.0.1:9200', 'the Elasticsearch the commands use: '
       'its URL, or several nodes\' comma-separated',
       'elasticsearch'),
    _V('MDXBENCH_ES_INDEX_PREFIX', 'mdxbench-perf', 'indices `<prefix>-<system>-<yyyy.mm>` '
       'and the index template `<prefix>`', 'elasticsearch'),
    _V('MDXBENCH_ES_SHARDS', '1', 'primary shards of each monthly index (the index '
       'template; new indices only)', 'elasticsearch'),
    _V('MDXBENCH_ES_REPLICAS', '0-1', 'replicas of each monthly index: a number, or a '
       'range Elasticsearch expands to the nodes there are (`0-1`: none on one node, a '
       'copy on a cluster); the template and the existing indices take it', 'elasticsearch'),
    _V('MDXBENCH_ES_PAGE', '10000', 'documents per search request when the local copy '
       'reads a partition (smaller: less memory per request, more requests)',
       'elasticsearch'),
    _S('MDXBENCH_ES_SNAPSHOT_REPOSITORY', '`mdxbench`', 'the snapshot repository '
       '`mdxbench history snapshot|restore` use (registered by `--location`)',
       'elasticsearch'),
    _S('MDXBENCH_ES_USER', 'none', 'basic authentication user (with a password)',
       'elasticsearch'),
    _S('MDXBENCH_ES_PASSWORD', 'none', 'its password (never logged; prefer the file)',
       'elasticsearch'),
    _S('MDXBENCH_ES_PASSWORD_FILE', 'none', 'a file (mode 0600) holding the password',
       'elasticsearch'),
    _S('MDXBENCH_ES_API_KEY', 'none', 'an API key instead of a user (never logged)',
       'elasticsearch'),
    _S('MDXBENCH_ES_API_KEY_FILE', 'none', 'a file (mode 0600) holding the API key',
       'elasticsearch'),
    _S('MDXBENCH_ES_CA_CERTS', "the system's CAs", 'the CA bundle that verifies the '
       "server's certificate", 'elasticsearch'),
    _S('MDXBENCH_ES_INSECURE', 'unset', '`1`: TLS verification off (said with a warning on '
       'every run)', 'elasticsearch'),
    _S('MDXBENCH_ES_TIMEOUT', '`30` s per request; ci/elasticsearch.sh: `180` s',
       "the commands' request timeout; ci/elasticsearch.sh: how long to wait for the node "
       'to become healthy', 'elasticsearch'),
    _S('MDXBENCH_ES_VERSION', '`8.19.21`', 'the Elasticsearch ci/ fetches (Maven Central) '
       'and runs', 'elasticsearch'),
    _S('MDXBENCH_ES_HOME', '`<state>/es/elasticsearch-<MDXBENCH_ES_VERSION>`', 'the unpacked '
       'distribution ci/elasticsearch.sh runs', 'elasticsearch'),
    _S('MDXBENCH_ES_PORT', '`9200`', 'its HTTP port', 'elasticsearch'),
    _S('MDXBENCH_ES_HEAP', '`512m`', 'its JVM heap', 'elasticsearch'),
    _S('MDXBENCH_ES_CLUSTER_NODES', '`3`', 'the nodes of the test cluster '
       '`ci/es-cluster.sh` starts', 'elasticsearch'),
    _S('MDXBENCH_ES_CLUSTER_ADDRESS', '`127.0.0.11`', 'the loopback address of its first '
       'node, the others\' next to it (two checkouts\' clusters at once on one machine)',
       'elasticsearch'),
    _S('MDXBENCH_ES_CLUSTER_HEAP', '`256m`', 'the JVM heap of each of its nodes',
       'elasticsearch'),
    _S('MDXBENCH_ES_SECURITY', 'unset', '`1`: start it with security on (TLS, users)',
       'elasticsearch'),
    _S('MDXBENCH_ES_ADMIN_USER', 'none (required with security on)', 'the superuser '
       'ci/elasticsearch.sh makes when security is on', 'elasticsearch'),
    _S('MDXBENCH_ES_ADMIN_PASSWORD_FILE', 'none (required with security on)', 'its '
       'password, in a file of mode 0600', 'elasticsearch'),
    # --- Spack ------------------------------------------------------------------------
    _S('MDXBENCH_SPACK', '`spack` on PATH', 'the Spack that installs a previous build for '
       '`mdxbench incident split`', 'spack'),
    _S('MDXBENCH_SPACK_VIEW', "`spack/<system>/.spack-env/view`", "the Spack view whose "
       "binaries the checks of the `spack` environment run", 'spack'),
    _S('MDXBENCH_SPACK_TARBALL', 'unset', 'a Spack release archive to set Spack up from '
       '(air-gapped sites, CI: `../shared/spack`)', 'spack'),
    _S('MDXBENCH_SPACK_PACKAGES_TARBALL', 'unset', "the archive of Spack's builtin package "
       'repository that goes with it', 'spack'),
    _S('MDXBENCH_SPACK_MIRROR', 'unset', 'a source mirror the builds fetch from',
       'spack'),
    _S('MDXBENCH_SPACK_ARCHIVES', 'unset', 'more source archives, added to the mirror where '
       'one of our packages pins their checksum', 'spack'),
    _S('MDXBENCH_SPACK_FETCH', '`1`', '`0`: never fetch the pinned Spack release from the '
       'network', 'spack'),
    _S('MDXBENCH_SPACK_FETCH_TIMEOUT', '`900` (s)', 'how long that fetch may take', 'spack'),
    _S('MDXBENCH_SPACK_NETWORK', '`0`; `1` where Spack itself was fetched', "`1`: the "
       "builds also fetch from Spack's default mirrors (the network), not only the given "
       'one', 'spack'),
    # --- jobs and checks ---------------------------------------------------------------
    _S('MDXBENCH_INSIDE_ALLOCATION', 'unset', "set by `mdxbench accept`'s and the split's "
       'job scripts: the partition runs its checks locally inside the allocation',
       'jobs'),
    _S('MDXBENCH_STEP_NODE', 'unset', "set by `mdxbench accept`'s paired rounds in each "
       "node's job step: the steps a check's launcher starts go to that node", 'jobs'),
    _S('MDXBENCH_PAIR_SUBJECT', 'unset', "set by `mdxbench accept` in the job (or step) "
       'that runs the pair checks (tag `pair`: nccl-tests across nodes) on two nodes for '
       'one of them: the node whose reading the records are (`meta.pair_subject`, '
       '`meta.pair_partner`)', 'jobs'),
    _S('MDXBENCH_PDS_PYTHON', '`<state>/pds-venv/bin/python` (ci/install.sh)', 'the Python '
       'PdsBenchmark runs polars-benchmark\'s queries with (its libraries: '
       '`checks/apps/src/polars-benchmark.txt`)', 'jobs'),
    _S('MDXBENCH_SPLIT', 'unset', 'set by the split\'s job scripts: the JSON mark '
       '(incident, build, round) its records carry', 'jobs'),
    _S('MDXBENCH_SUITE_COMMIT', '`unknown`', 'the suite commit the records name where git '
       'cannot tell it (a copy without `.git`)', 'jobs'),
    _S('MDXBENCH_NIC_SET_QUEUES', 'unset', 'the command the one-queue network series runs '
       'to set a NIC\'s queue count (and back)', 'jobs'),
    _S('MDXBENCH_THP', 'unset (`PerfCountersFft` sets `off`)', "the FFT kernel's "
       'transparent huge pages: `off`, 4 KiB pages as the paper counted', 'jobs'),
    _S('MDXBENCH_PERF_CTL_FD', 'set by perf-timed.sh', "perf's control descriptor: the FFT "
       'kernel switches the counters on for its window only', 'jobs'),
    _S('MDXBENCH_PERF_WINDOW', '`timed` (`PerfCountersFft` sets its `window`)', 'what the FFT '
       'kernel counts: `run`, one transform from the first touch of its data (Guidi et '
       "al.'s Table IV), or `timed`, the timed phases of its repetitions; `plan` measures "
       "the plans and writes FFTW's wisdom (`MDXBENCH_FFTW_WISDOM`) and ends", 'jobs'),
    _S('MDXBENCH_FFTW_WISDOM', 'unset (`PerfCountersFft` sets it for its `run` window)',
       "the FFT kernel's FFTW wisdom file: written by the `plan` window, read by the `run` "
       'window, which plans from it without measuring (the measured plan, as the paper)',
       'jobs'),
    _S('MDXBENCH_PERF_ACK_FD', 'set by perf-timed.sh', "perf's acknowledgement descriptor",
       'jobs'),
    # --- the services and clusters of ci/ --------------------------------------------
    _S('MDXBENCH_SLURM_PARTITION', '`debug`', "the one-node Slurm's partition", 'ci'),
    _S('MDXBENCH_SLURMCTLD_PORT', '`6817`', "its slurmctld port", 'ci'),
    _S('MDXBENCH_SLURMD_PORT', '`6818`', "its slurmd port", 'ci'),
    _S('MDXBENCH_SLURM_TIMEOUT', '`60` (s)', 'how long to wait for Slurm to come up', 'ci'),
    _S('MDXBENCH_MINIO_ADDR', '`127.0.0.1`', "MinIO's address", 'ci'),
    _S('MDXBENCH_MINIO_PORT', '`9000`', "MinIO's port", 'ci'),
    _S('MDXBENCH_MINIO_NAME', '`minio`', "the name of MinIO's state and credentials",
       'ci'),
    _S('MDXBENCH_MINIO_USER', '`mdxbench-s3`', 'the unprivileged user MinIO runs as', 'ci'),
    _S('MDXBENCH_MINIO_TIMEOUT', '`60` (s)', 'how long to wait for MinIO to come up', 'ci'),
    _S('MDXBENCH_CLUSTER_NODES', '`3`', 'nodes of the namespace cluster (ci/cluster.sh)',
       'ci'),
    _S('MDXBENCH_CLUSTER_NODES_PER_HOST', '`2`', 'its nodes per stand-in physical host',
       'ci'),
    _S('MDXBENCH_CLUSTER_DISK_MB', '`256`', "each node's local disk (a loop file)", 'ci'),
    _S('MDXBENCH_CLUSTER_GPUS', '`8`', 'the GPUs each node declares as GRES gpu (scheduled '
       'by count; nscluster:gpu)', 'ci'),
    _S('MDXBENCH_CLUSTER_S3_PORT', '`9010`', "the cluster's MinIO port", 'ci'),
    _S('MDXBENCH_CLUSTER_TIMEOUT', '`90` (s)', 'how long to wait for its nodes', 'ci'),
    _S('MDXBENCH_MAIN_CLUSTER_NODES', '`8`', "ci/main.sh: the namespace cluster's nodes for "
       'the cases that need several (`0`: none)', 'ci'),
    _S('MDXBENCH_MAIN_DIR', '`<state>`', 'ci/main.sh: where its reports, logs, cycles and '
       'site go', 'ci'),
)

BY_NAME = {s.name: s for s in SETTINGS}
#: the areas, in the reference's order, with their titles
AREAS = {'paths': 'Where things are', 'install': 'Installing',
         'elasticsearch': 'Elasticsearch', 'spack': 'Spack', 'jobs': 'Jobs and checks',
         'ci': 'The services and clusters of `ci/`'}
#: a name as it is written in code and scripts
NAME = re.compile(r'\bMDXBENCH_[A-Z0-9_]*[A-Z0-9]\b')


def get(name, env=None, default=None):
    '''The value of setting ``name`` in ``env`` (default: this process's environment), or
    ``default`` where it is unset or empty -- or, given none, the setting's own default
    value (:class:`Setting` ``value``; None for most). A name not in :data:`SETTINGS` is an
    error.'''
    if name not in BY_NAME:
        raise KeyError(f'{name} is not an mdxbench setting (declare it in '
                       'mdxbench.settings.SETTINGS)')
    env = os.environ if env is None else env
    return env.get(name) or (BY_NAME[name].value if default is None else default)


def value(name):
    '''The default value of setting ``name``, as the code takes it where it is unset.'''
    return BY_NAME[name].value


def state_dir(env=None):
    '''``$MDXBENCH_STATE_DIR``, or ``.mdxbench`` in the repository.'''
    from mdxbench import REPO_ROOT

    return pathlib.Path(get('MDXBENCH_STATE_DIR', env) or REPO_ROOT / '.mdxbench')


def under_state(name, rel, env=None):
    '''A path setting whose default is ``rel`` under the state directory.'''
    return pathlib.Path(get(name, env) or state_dir(env) / rel)


def perflog_dir(env=None):
    '''Where ReFrame writes this site's perflogs and the commands read them.'''
    return under_state('MDXBENCH_PERFLOG_DIR', 'perflogs', env)


#: where the names are read: the packages, the checks, the site config and the ci/ scripts
SCANNED = ('reframe/mdxbench', 'postprocess', 'checks', 'site-configs', 'ci')
SUFFIXES = ('.py', '.sh', '.yaml', '.c', '.env')


def readers(root=None):
    '''{name: the repository files that mention it} over :data:`SCANNED` (this module
    left out).'''
    from mdxbench import REPO_ROOT

    root = pathlib.Path(root or REPO_ROOT)
    here = pathlib.Path(__file__).resolve()
    out = {}
    for top in SCANNED:
        for f in sorted((root / top).rglob('*')):
            if f.suffix not in SUFFIXES or not f.is_file() or f.resolve() == here:
                continue
            for name in set(NAME.findall(f.read_text(errors='replace'))):
                out.setdefault(name, []).append(str(f.relative_to(root)))
    return out


def table(root=None):
    '''The settings reference as Markdown: a table per area.'''
    found = readers(root)
    lines = []
    for area, title in AREAS.items():
        lines += [f'## {title}', '', '| setting | default | meaning | read by |',
                  '|---|---|---|---|']
        for s in SETTINGS:
            if s.area == area:
                by = ', '.join(f'`{f}`' for f in found.get(s.name, []))
                lines.append(f'| `{s.name}` | {s.default} | {s.meaning} | {by} |')
        lines.append('')
    return '\n'.join(lines)
