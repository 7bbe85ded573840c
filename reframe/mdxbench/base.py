'''Base classes of the mdxbench checks.

A check derives from :class:`MdxBenchTest` and declares:

* ``bench_name`` and ``bench_binary`` -- what it runs; the check is skipped, with the
  reason, where the binary is not on the PATH of the selected environment;
* ``parser`` -- a pure function (``mdxbench.parsers``) from the output text to a dict;
* ``perf_table`` -- ``{perf variable: (key of the parser's dict, unit, better)}``, where
  ``better`` is ``'higher'`` or ``'lower'``: which way is better for that variable. It is
  declared here and nowhere else; the perflog (``meta.better``), Elasticsearch
  (``perf_better``), regression tracking, acceptance and the reports read it from there.

The base class reads the output, turns a parser error into a sanity failure with the
parser's message, builds the performance variables, and records the provenance that the
perflog ``meta`` column carries (suite commit, benchmark version, exact command line).
'''
import functools
import json
import math
import os
import re
import shutil
import subprocess

import reframe as rfm
import reframe.utility.typecheck as typ
from reframe.core.builtins import (loggable, performance_function, run_after,
                                   run_before, sanity_function, variable)
from reframe.core.exceptions import SanityError

from mdxbench import REPO_ROOT, perflog, references, rfmwarnings, settings
from mdxbench.provenance import archive_spec, binary_provenance
from mdxbench.parsers import ParseError, PartialResult

SCRIPTS = os.path.join(os.path.dirname(__file__), 'scripts')
BETTER = perflog.BETTER
NODE_KERNEL_FILE = 'node-kernel.txt'
# ReFrame's start-up without its stack walk for warnings it suppresses (see the module)
rfmwarnings.install()


def lengthened(value, factor, power):
    '''``value`` for a run ``factor`` times as long: ``value * factor ** power``, rounded up
    to a whole number where ``value`` is one (a duration in seconds, a matrix order).'''
    if factor <= 0:
        raise ValueError(f'length_factor {factor}: a run cannot be made {factor} times as long')
    scaled = value * factor ** power
    return math.ceil(round(scaled, 9)) if isinstance(value, int) else scaled


#: the modules of the classes a check is built on (ReFrame, hpctestlib, this library):
#: their variables are the machinery, not what a run of the check was given
LIBRARY_MODULES = ('reframe.', 'hpctestlib.', 'mdxbench.')


def check_variables(test):
    '''{name: value} of every variable the check's own classes declare (those of
    ``checks/``, not ReFrame's or this library's): what the run was given -- the default,
    ``-S``, a hook's choice for the partition or the lengthening -- as the run had it.
    JSON values (a value JSON cannot hold is its text).'''
    cls = type(test)
    lib = set()
    for base in cls.__mro__:
        if base.__module__.startswith(LIBRARY_MODULES) and hasattr(base, '_rfm_var_space'):
            lib |= set(base._rfm_var_space.vars)
    out = {}
    for name in sorted(set(cls._rfm_var_space.vars) - lib):
        value = getattr(test, name, None)
        try:
            json.dumps(value)
        except (TypeError, ValueError):
            value = str(value)
        out[name] = list(value) if isinstance(value, tuple) else value
    return out


def run_seconds(job):
    '''Seconds from the job's submission to its completion (its queue wait included), or
    None where the scheduler did not say.'''
    try:
        start, end = job.submit_time, job.completion_time
    except AttributeError:
        return None
    return round(end - start, 1) if start and end and end >= start else None


@functools.lru_cache(maxsize=None)
def suite_commit():
    '''The git commit of this suite, with ``+dirty`` when tracked files were changed.'''
    try:
        head = subprocess.run(['git', '-C', str(REPO_ROOT), 'rev-parse', 'HEAD'],
                              capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(['git', '-C', str(REPO_ROOT), 'status', '--porcelain',
                                '--untracked-files=no'],
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return settings.get('MDXBENCH_SUITE_COMMIT', default='unknown')

    return head + ('+dirty' if dirty else '')


#: the tag of the records of `mdxbench incident split` runs (readers keep them out of the
#: nightly series)
SPLIT_TAG = perflog.SPLIT_TAG


def split_run():
    '''What ``mdxbench incident split`` says this run is (``MDXBENCH_SPLIT``, a JSON object:
    the incident, which build, its Spack hash, the round), or None for an ordinary run. A
    value that is not a JSON object is kept as it is, under ``error``: the run is still a
    split's, never a nightly one.'''
    raw = settings.get('MDXBENCH_SPLIT')
    if not raw:
        return None
    try:
        value = json.loads(raw)
    except ValueError:
        value = None
    return value if isinstance(value, dict) else {
        'error': f'MDXBENCH_SPLIT is not a JSON object: {raw[:200]}'}


def pair_run(job_nodes):
    '''What ``mdxbench accept`` says this run of a pair check is: run *for* one of its two
    nodes (``MDXBENCH_PAIR_SUBJECT``), with the other (from the job's nodes) as partner --
    ``{pair_subject, pair_partner}`` -- or nothing for an ordinary run. The acceptance
    takes the figure as the subject's reading (``verdicts.acceptance_records``).'''
    subject = settings.get('MDXBENCH_PAIR_SUBJECT')
    if not subject:
        return {}
    others = [n for n in job_nodes or [] if n != subject]
    return {'pair_subject': subject,
            **({'pair_partner': others[0]} if len(others) == 1 else {})}


def expand(text, env):
    '''$VAR and ${VAR} of text from env (unknown variables stay as they are).'''
    return re.sub(r'\$(\w+)|\$\{(\w+)\}',
                  lambda m: env.get(m.group(1) or m.group(2), m.group(0)), text)


def job_environment(environ, partition):
    '''The variables the job will see: ours, then the partition's and the environment's
    ``env_vars`` in the order the job script sets them (e.g. a Spack view's bin/ first
    on PATH, MDXBENCH_SPACK_VIEW).'''
    env = dict(os.environ)
    for env_vars in (partition.local_env.env_vars, environ.env_vars):
        for name, val in env_vars.items():
            env[name] = expand(str(val), env)

    return env


def partition_facts(partition):
    '''The facts of a partition the checks size themselves from: cores, sockets, threads
    per core and cache sizes from ReFrame's processor (``processor`` of the site config, or
    ReFrame's own detection), and what ReFrame has no field for (``clock_ghz``,
    ``flops_per_cycle``, ``memory_gib``, ``pmu``) from ``extras.facts``.'''
    proc = partition.processor
    caches = {c.get('type'): c.get('size') for c in (proc.topology or {}).get('caches', [])}
    levels = [caches[k] for k in ('L3', 'L2') if caches.get(k)]
    facts = dict(partition.extras.get('facts') or {})
    facts.update(cores=proc.num_cores, sockets=proc.num_sockets or 1,
                 threads_per_core=proc.num_cpus_per_core or 1, l1d_bytes=caches.get('L1'),
                 l2_bytes=caches.get('L2'), llc_bytes=levels[0] if levels else None)
    return facts


#: Guidi et al.'s MPI ranks per node for the collectives and the applications: 32 on
#: most platforms (Figs 5-6, alltoall: Haswell, R5 and C5 32, KNL 64; Figs 13-16, the FFT:
#: Haswell, KNL and R5 32, C5 36)
PAPER_RANKS_PER_NODE = 32


def ranks_per_node(cores, asked=PAPER_RANKS_PER_NODE):
    '''(ranks per node, the rule as the record says it) on a node of ``cores`` cores:
    ``asked`` ranks (the paper's 32 by default), or all the node's cores where it has fewer;
    ``asked`` 0 is the node's cores.'''
    if not asked:
        return cores, f'all {cores} cores of the node (0 asked)'
    if asked <= cores:
        return asked, 'as asked'
    return cores, f'all {cores} cores of the node (fewer than the {asked} asked)'


def compute_threads(facts):
    '''(threads, OpenMP places, the rule as the record says it) of the shared-memory compute
    and memory checks (MklLinpackShm, BabelStreamOmp): one thread per core, unless the
    partition's facts say its figures are of every vCPU (``all_vcpus: true``: AWS
    c7i.4xlarge, whose 16 vCPUs are 8 cores x 2 threads and which Takahashi et al. measured
    as a 16-vCPU instance, Table 1), then one per vCPU, both hyperthreads of each core.'''
    cores, per_core = facts['cores'], facts.get('threads_per_core', 1)
    if facts.get('all_vcpus') and per_core > 1:
        return (cores * per_core, 'threads',
                f'all {cores * per_core} vCPUs ({cores} cores x {per_core} threads, facts.all_vcpus)')
    return cores, 'cores', f'one thread per core ({cores})'


def pinned_version_mismatch(pins, bench, version):
    '''Why a run of ``bench`` that reported ``version`` is not the version the partition
    pins (``extras.bench_versions: {bench: version}``, e.g. the paper's warp 1.0.8 where a
    site builds it), or None. A pinned benchmark that reports no version fails too.'''
    want = (pins or {}).get(bench)
    if want is None or str(version) == str(want):
        return None
    return (f'the partition pins {bench} {want} (extras.bench_versions), this run reported '
            f'{version or "no version"}')


def peak_gflops(facts):
    '''(GFLOPS, GHz, which clock) of the nominal double-precision peak: cores x clock x
    FLOPs per cycle, at the AVX-512 all-core frequency where the facts know it
    (``avx512_clock_ghz``), else at ``clock_ghz`` (``clock_kind`` says which clock that is:
    the base clock where a site declares it). Turbo can exceed a peak taken at the base
    clock: the figure is nominal, and named so.'''
    missing = [k for k in ('cores', 'clock_ghz', 'flops_per_cycle') if not facts.get(k)]
    if missing:
        raise ValueError(f'partition facts lack {", ".join(missing)}: cannot compute the peak')

    if facts.get('avx512_clock_ghz'):
        clock, kind = facts['avx512_clock_ghz'], 'the AVX-512 all-core frequency'
    else:
        clock, kind = facts['clock_ghz'], facts.get('clock_kind') or 'the base clock'
    return facts['cores'] * clock * facts['flops_per_cycle'], clock, kind


class MdxBenchMixin(rfm.RegressionTestPlugin):
    '''What every mdxbench check has, built or run-only: a benchmark whose output a pure
    parser turns into performance values, with their direction and provenance.'''

    def __init_subclass__(cls, **kwargs):
        # a check's references are held to its table when the class is made: a bad entry
        # stops `reframe -l` at once, naming file, system, check and field, where an error
        # in a test's init hook only skips that test with a warning
        super().__init_subclass__(**kwargs)
        try:
            table = cls.perf_table
        except AttributeError:      # the base classes, before ReFrame merged the mixin's
            return
        references.check_against(cls.__name__, table)

    #: the benchmark calls BLAS (mdxbench.blas.BlasMixin says so)
    uses_blas = False

    #: Name of the benchmark as recorded in the perflog (e.g. ``hpcc``)
    bench_name = variable(str)

    #: Executable that must exist on the environment's PATH, or the check is skipped
    #: (empty for a benchmark the test builds: :class:`MdxBenchBuiltTest`)
    bench_binary = variable(str)

    #: File to parse, relative to the stage directory; empty: the job's stdout
    output_file = variable(str, value='')

    #: ``{perf variable: (key in the parser's result, unit, 'higher' | 'lower')}``
    perf_table = variable(dict, value={})

    #: Extra provenance for the perflog meta column (curves, NIC queues, ...)
    mdx_extra = variable(dict, value={})

    #: Parsed results (filled by the sanity stage)
    results = variable(dict, value={})

    #: Resolved path of ``bench_binary``
    bench_path = variable(str, value='')

    #: Where the binary comes from when it is nobody's package (said when it is missing)
    bench_origin = variable(str, value='')

    #: How a longer run of this check is made: ``{variable: power}``, each variable
    #: multiplied by ``length_factor ** power`` (fio's runtime: 1; HPL's N: 1/3, its work
    #: grows as N cubed). ``mdxbench accept`` runs a suspect's check longer this way where
    #: its noise is too large to decide within the budget; {}: no such knob
    lengthen = {}

    #: This run measures this many times as long as the check is sized (``-S
    #: Check.length_factor=F``, through ``lengthen``); the record says so (``meta.length``)
    length_factor = variable(int, float, value=1)

    @staticmethod
    def parser(text):
        raise NotImplementedError('a check must set parser to a mdxbench.parsers function')

    def param_values(self):
        '''This test's parameter values, by name.'''
        return {name: getattr(self, name) for name in type(self).param_space.params}

    @run_after('init')
    def apply_length_factor(self):
        for name, power in self.lengthen.items():
            setattr(self, name, lengthened(getattr(self, name), self.length_factor, power))

    @run_after('init')
    def load_references(self):
        '''References from site-configs/references (data, with their sources).'''
        ref = references.for_check(type(self).__name__, self.param_values())
        if ref:
            self.reference = ref

    #: Extra directories searched for ``bench_binary`` after PATH (e.g. the MKL
    #: benchmarks directory); variables are expanded as the job will see them
    bench_search_dirs = variable(typ.List[str], value=[])

    def find_or_skip(self, binary, what):
        '''Path of ``binary`` as the job will find it (its PATH, then
        ``bench_search_dirs``); the test is skipped, naming ``what``, where it is not.'''
        env = job_environment(self.current_environ, self.current_partition)
        extra = [expand(d, env) for d in self.bench_search_dirs]
        path = os.pathsep.join([env.get('PATH', '')] + [d for d in extra if '$' not in d])
        found = shutil.which(binary, path=path)
        self.skip_if(
            found is None,
            f'{binary} ({what}) is not installed on '
            f'{self.current_system.name}:{self.current_partition.name} with environment '
            f'{self.current_environ.name}: not found on PATH={path}'
            + (f' ({self.bench_origin})' if self.bench_origin else '')
        )
        return found

    def not_here(self):
        '''Why the check cannot run on the current partition, by what the partition
        declares (its site configuration), or None: asked before the binary is looked for,
        so the skip names the reason that matters (no GPU, not "nvidia-smi not found").'''
        return None

    @run_after('setup')
    def locate_binary(self):
        why = self.not_here()
        self.skip_if(why is not None, why or '')
        if self.bench_binary:       # empty: the benchmark is the program the test builds
            self.bench_path = self.find_or_skip(self.bench_binary, self.bench_name)
            # what a check runs is its benchmark, unless it says otherwise (a wrapper
            # script, another interpreter: set in its own hook, which runs after this)
            if getattr(self, 'executable', None) is None:
                self.executable = self.bench_path

    @run_before('run', always_last=True)
    def stay_on_the_step_node(self):
        '''In a paired round of ``mdxbench accept`` -- one job of several nodes, ReFrame in a
        step of its own on each (``MDXBENCH_STEP_NODE``) -- the steps the launcher starts
        go to that node, with the check's task count (as the check's own hooks set it:
        last): what a job of its own would give. A pair run's two nodes
        (``MDXBENCH_STEP_NODE=a,b``, a pair check's) get the check's tasks per node too.
        (srun has no input variable for the node list, and its default task count in a
        job of several nodes is the job's, not the node's.)'''
        node = settings.get('MDXBENCH_STEP_NODE')
        if node and getattr(self.job.launcher, 'registered_name', '') == 'srun':
            self.job.launcher.options += [f'--nodelist={node}'] + (
                [f'--ntasks={self.num_tasks}'] if (self.num_tasks or 0) > 0 else []) + (
                # two nodes (a pair check's): the check's tasks per node, not a block
                [f'--ntasks-per-node={self.num_tasks_per_node}']
                if ',' in node and (self.num_tasks_per_node or 0) > 0 else [])

    @run_before('run', always_last=True)
    def record_node_kernel(self):
        '''The compute node's kernel release (``uname -r`` in the job, not on the login
        node) goes to ``meta.node_kernel``: a kernel update is a change point's usual cause.'''
        # and the nodes of the job's allocation, as the job itself sees them: the record's
        # nodelist from Slurm's accounting, as ReFrame polls it, has named one node of a
        # two-node job on a loaded machine (CI, 2026-11-25)
        self.prerun_cmds = [
            f'{{ uname -r; hostname; if [ -n "${{SLURM_JOB_NODELIST:-}}" ]; then '
            f'scontrol show hostnames "$SLURM_JOB_NODELIST"; fi; }} > {NODE_KERNEL_FILE}'
        ] + self.prerun_cmds

    def node_kernel(self):
        '''(kernel release, host name, [nodes of the Slurm allocation]) of the node the
        job script ran on; no nodes outside Slurm.'''
        try:
            with open(os.path.join(self.stagedir, NODE_KERNEL_FILE)) as fp:
                lines = fp.read().split()
        except OSError:
            lines = []
        kernel, host, *nodes = lines + ['unknown', 'unknown'][len(lines):]
        return kernel, host, nodes

    @run_after('init')
    def check_perf_table(self):
        for name, entry in self.perf_table.items():
            if len(entry) != 3 or entry[2] not in BETTER:
                raise ValueError(
                    f'{type(self).__name__}.perf_table[{name!r}] = {entry!r}: expected '
                    f'(key, unit, better) with better one of {", ".join(BETTER)}')

    @run_after('setup', always_last=True)
    def build_perf_variables(self):
        # last of the setup hooks: a check may size its table to the partition first
        # (the GPU checks: one variable per GPU, mdxbench.gpu)
        self.perf_variables = {
            name: self._make_perf(key, unit) for name, (key, unit, _) in self.perf_table.items()
        }

    def _make_perf(self, key, unit):
        @performance_function(unit)
        def _value(test):
            return test.results[key]

        return _value(self)

    @property
    def output_path(self):
        name = self.output_file or self.stdout.evaluate()
        return os.path.join(self.stagedir, name)

    def job_report(self):
        '''The scheduler's word on the job, for failure messages: state and exit code.'''
        job = self.job
        if job is None:
            return ''

        state = getattr(job, 'state', None)
        code = getattr(job, 'exitcode', None)
        if state in (None, 'COMPLETED') and code in (None, 0):
            return ''

        return f' [job {job.jobid}: scheduler state {state}, exit code {code}]'

    @sanity_function
    def assert_output_parsed(self):
        '''Parse, derive and check the output; a failure's message also goes to the
        perflog (``meta.failure``), so acceptance can say why a node failed.'''
        try:
            return self._parse_and_check()
        except SanityError as err:
            self.mdx_extra = dict(self.mdx_extra, failure=str(err))
            raise

    def _parse_and_check(self):
        # the batch host too: ReFrame's squeue backend may not see the nodes of a short job
        kernel, host, nodes = self.node_kernel()
        self.mdx_extra = dict(self.mdx_extra, node_kernel=kernel, job_host=host)
        if nodes:
            self.mdx_extra['job_nodes'] = nodes
        try:
            with open(self.output_path, errors='replace') as fp:
                text = fp.read()
        except OSError as err:
            raise SanityError(f'{self.bench_name}: cannot read its output: {err}'
                              f'{self.job_report()}') from None

        try:
            self.results = type(self).parser(text)
        except PartialResult as err:
            raise SanityError(
                f'{self.bench_name}: partial result in {self.output_path}: {err} '
                f'(partial: {err.partial}){self.job_report()}') from None
        except ParseError as err:
            raise SanityError(f'{self.bench_name}: {self.output_path}: {err}'
                              f'{self.job_report()}') from None

        try:
            self.derive(self.results)
        except (ValueError, KeyError) as err:
            raise SanityError(f'{self.bench_name}: {err}') from None

        why = pinned_version_mismatch(self.current_partition.extras.get('bench_versions'),
                                      self.bench_name, self.results.get('version'))
        if why:
            raise SanityError(f'{self.bench_name}: {why} '
                              f'({self.current_system.name}:{self.current_partition.name})')

        self.verify()

        missing = [k for k, _, _ in self.perf_table.values() if k not in self.results]
        if missing:
            raise SanityError(f'{self.bench_name}: parser gave no {", ".join(missing)}')

        return True

    def verify(self):
        '''What a kind of check verifies of a run after its figures are derived (nothing
        here; mdxbench.blas.BlasMixin: the BLAS the job resolved).'''

    def derive(self, results):
        '''Add derived figures to the parsed results (e.g. percentage of peak).'''

    def command_line(self):
        '''The exact command the job ran (launcher included).'''
        try:
            launcher = self.job.launcher.run_command(self.job)
        except Exception:
            launcher = ''

        cmd = ' '.join([self.executable] + [str(o) for o in self.executable_opts])
        return f'{launcher} {cmd}'.strip()

    def binary_meta(self):
        '''Where the benchmark binary comes from; a Spack build's concrete spec is kept
        beside the perflogs (``specs/<hash>.json``), so the record can name what to
        install again.'''
        prov = binary_provenance(self.bench_path)
        archive_spec(prov)
        return prov

    def toolchain_meta(self):
        '''Provenance of the compiler of a built benchmark (nothing for run-only tests).'''
        return {}

    @loggable
    @property
    def mdx_meta(self):
        meta = {
            'suite_commit': suite_commit(),
            'bench': self.bench_name,
            'bench_version': self.results.get('version', 'unknown') if self.results else 'unknown',
            'bench_path': self.bench_path,
            'binary': self.binary_meta(),
            'command': self.command_line() if self.job else '',
            'num_tasks': self.num_tasks,
            'tags': sorted(self.tags),
            'num_cpus_per_task': self.num_cpus_per_task,
            'better': {name: better for name, (_, _, better) in self.perf_table.items()},
        }
        if self.current_partition:
            target = f'{self.current_system.name}:{self.current_partition.name}'
            srcs = references.sources_for(type(self).__name__, self.param_values(), target)
            if srcs:
                meta['reference_source'] = srcs

        if self.lengthen:
            meta['length'] = {'factor': self.length_factor, 'knobs': dict(self.lengthen)}
        meta.update(self.toolchain_meta())
        meta.update(self.param_values())
        meta['params'] = self.param_values()    # the parameters alone, for readers
        # what the run was given (defaults, -S, hooks), compared across a change point and
        # given again by a split; and how long its job took (a split's time limit)
        meta['variables'] = check_variables(self)
        if self.job:
            meta['run_seconds'] = run_seconds(self.job)
        meta.update(self.mdx_extra)
        meta.update(pair_run(meta.get('job_nodes')))
        split = split_run()
        if split:
            # a run of `mdxbench incident split`: never a run of the nightly series
            meta['split'] = split
            meta['tags'] = sorted(set(meta['tags']) | {SPLIT_TAG})
        return perflog.encode_meta(meta)


class MdxBenchTest(rfm.RunOnlyRegressionTest, MdxBenchMixin):
    '''A run-only benchmark: its binary comes from the environment (Debian's tools, the
    Spack view, a module).'''

    valid_systems = ['*']
    #: environments that swap the BLAS (extras ``blas``, e.g. ``mkl``) only serve the
    #: checks whose benchmark uses one (they set ``uses_blas``)
    valid_prog_environs = ['-blas']
    maintainers = ['mdxbench']


@functools.lru_cache(maxsize=None)
def compiler_version(path):
    '''First line of ``path --version`` (the MPI wrapper shows the compiler behind it).'''
    try:
        out = subprocess.run([path, '--version'], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError) as err:
        return f'unknown ({err})'
    return (out.stdout or out.stderr).strip().splitlines()[0] if (out.stdout or out.stderr) \
        else 'unknown'


class MdxBenchBuiltTest(rfm.RegressionTest, MdxBenchMixin):
    '''A benchmark that ReFrame builds from the check's ``src/`` with one of its build
    systems (``SingleSource``, ``Make``, ...), then runs. ``compiler`` is the compiler the
    build uses (an MPI wrapper for an MPI program), looked up like a benchmark binary (the
    test is skipped where the environment has none); it is the toolchain, recorded in
    ``meta.toolchain`` (path, package or Spack spec, ``--version``), while the benchmark
    recorded in ``meta.bench_path`` is the program built in the stage directory.'''

    valid_systems = ['*']
    valid_prog_environs = ['-blas']
    maintainers = ['mdxbench']
    sourcesdir = 'src'
    bench_binary = ''

    #: the build's C compiler (an MPI wrapper for MPI programs)
    compiler = variable(str, value='cc')

    #: resolved path of ``compiler``
    compiler_path = variable(str, value='')

    @run_after('setup')
    def locate_compiler(self):
        self.compiler_path = self.find_or_skip(self.compiler,
                                               f'the compiler of {self.bench_name}')

    @run_before('compile')
    def use_compiler(self):
        self.build_system.cc = self.compiler_path

    @run_after('compile')
    def built_program(self):
        if not self.bench_binary:
            self.bench_path = os.path.join(self.stagedir, os.path.basename(self.executable))

    def toolchain_meta(self):
        if not self.compiler_path:
            return {}
        return {'toolchain': {'compiler': self.compiler_path,
                              'version': compiler_version(self.compiler_path),
                              **binary_provenance(self.compiler_path)}}
