'''Storage targets: directories a partition declares in ``extras.storage_targets``, and
S3 object-storage endpoints it declares in ``extras.object_targets``.'''
import os

from reframe.core.builtins import parameter, run_after, run_before, variable

from mdxbench.base import MdxBenchTest
from mdxbench.sitecfg import object_target_names, storage_target_names


class StorageTargetTest(MdxBenchTest):
    #: one test per storage target any system declares; each runs only on the partitions
    #: that declare it (feature ``storage_<target>``, see sitecfg.target_features)
    target = parameter(storage_target_names())

    #: directory of the target on the current partition
    target_dir = variable(str, value='')

    @run_after('init')
    def select_target_partitions(self):
        self.valid_systems = [f'+storage_{self.target}']

    @run_after('setup')
    def resolve_target(self):
        t = self.current_partition.extras['storage_targets'][self.target]
        self.target_dir = t['path'] if isinstance(t, dict) else t

    def work_dir(self):
        '''A fresh directory inside the target for this job; the target itself must exist
        (it is never created: a missing mount must fail, not be replaced by a local dir).'''
        return f'{self.target_dir}/mdxbench-{self.bench_name}-${{SLURM_JOB_ID:-$$}}'

    @run_before('run')
    def make_work_dir(self):
        work = self.work_dir()
        self.prerun_cmds = [
            f'test -d "{self.target_dir}" || {{ echo "mdxbench: storage target '
            f'{self.target} ({self.target_dir}) does not exist on $(hostname)" >&2; exit 1; }}',
            f'workdir="{work}"',
            'mkdir "$workdir" || exit 1',
            'trap \'rm -rf "$workdir"\' EXIT',
        ] + self.prerun_cmds
        self.mdx_extra = dict(self.mdx_extra, target_dir=self.target_dir)


CREDENTIALS_SCRIPT = os.path.join(os.path.dirname(__file__), 'scripts', 's3cred.sh')


class ObjectTargetTest(MdxBenchTest):
    '''A benchmark of an S3 endpoint that a partition declares in ``extras.object_targets``
    (``endpoint`` host:port, ``tls``, ``region``, ``bucket``, ``lookup``, ``ca_file``,
    ``credentials``: a 0600 file of ``access_key=`` and ``secret_key=`` lines).

    Credentials never pass through this process: the job script names the file, and
    ``scripts/s3cred.sh`` exports them to the benchmark (or keeps WARP_ACCESS_KEY and
    WARP_SECRET_KEY when the job's environment already has both).'''

    #: one test per object target any system declares; each runs only on the partitions
    #: that declare it with an endpoint (feature ``object_<target>``)
    target = parameter(object_target_names())

    #: the resolved target of the current partition
    object_target = variable(dict, value={})

    @run_after('init')
    def select_target_partitions(self):
        self.valid_systems = [f'+object_{self.target}']

    #: the class defaults a target's ``sweep`` may shorten (`-S` on the command line wins):
    #: ``{variable: (key in sweep, class default)}``
    SWEEP_VARIABLES = {}

    def short_sweep(self, swept, listed, what):
        '''The target's short sweep (``sweep:`` in its site config entry, e.g. `local`'s
        MinIO on this machine's disk): the case is skipped where its swept value ``swept``
        (None: the case sweeps nothing) is not among ``listed`` (None: the sweep lists
        none), ``what`` naming it; every SWEEP_VARIABLES the check still has at its class
        default takes the sweep's value. Returns the sweep.'''
        sweep = self.object_target.get('sweep') or {}
        self.skip_if(listed is not None and swept is not None and swept not in listed,
                     f'{what} is not in the short sweep of object target {self.target} '
                     f'({listed}, site config)')
        for name, (key, default) in self.SWEEP_VARIABLES.items():
            if key in sweep and getattr(self, name) == default:
                setattr(self, name, type(default)(sweep[key]))
        return sweep

    @run_after('setup')
    def resolve_object_target(self):
        target = dict(self.current_partition.extras['object_targets'][self.target])
        target.setdefault('bucket', 'mdxbench-warp')
        target.setdefault('credentials', f'$HOME/.config/mdxbench/s3-{self.target}')
        self.object_target = target

    @run_before('run')
    def load_credentials(self):
        t = self.object_target
        cmds = [f'. {CREDENTIALS_SCRIPT}',
                f'mdxbench_s3_credentials {self.target} "{t["credentials"]}" || exit 1']
        if t.get('ca_file'):
            cmds.append(f'export SSL_CERT_FILE="{t["ca_file"]}"')
        # a server that is down fails the case at once, saying so, rather than warp retrying
        host, _, port = t['endpoint'].rpartition(':') if ':' in t['endpoint'] else \
            (t['endpoint'], '', '443' if t.get('tls') else '80')
        cmds.append(f'timeout 10 bash -c \'exec 3<>/dev/tcp/{host}/{port}\' 2>/dev/null || '
                    f'{{ echo "mdxbench: S3 endpoint {t["endpoint"]} of object target '
                    f'{self.target} does not accept connections (server down?)" >&2; exit 1; }}')
        self.prerun_cmds = cmds + self.prerun_cmds
        self.mdx_extra = dict(self.mdx_extra, endpoint=t['endpoint'], bucket=t['bucket'],
                              tls=bool(t.get('tls')))
