# S3 object storage with MinIO warp, as the mdx II paper ran it (sec. 3.2.4, warp 1.0.8):
# GET and PUT of 10 MiB objects (2500 for GET), total throughput against the number of
# concurrent operations, then the same from several client nodes at once (warp's
# distributed mode: `warp client` on every node, driven by one `warp get|put`).
# Endpoints are site-config data (extras.object_targets); keys never enter the job script,
# the perflog or this process (see mdxbench/scripts/s3cred.sh).
# warp deletes everything in the bucket it uses: the bucket is the target's own
# (default mdxbench-warp), never a bucket with data.
import os

import reframe as rfm
import reframe.utility.typecheck as typ
from reframe.core.backends import getlauncher
from reframe.core.builtins import parameter, run_after, run_before, variable

from mdxbench.jobsteps import background_step, job_port, skip_unless_nodes, spread_over_hosts
from mdxbench.parsers import warp
from mdxbench.storage import ObjectTargetTest

#: runs warp again with twice the duration where it had too few samples
ENOUGH = os.path.join(os.path.dirname(warp.__file__), '..', 'scripts', 'warp-enough.sh')


class _Warp(ObjectTargetTest):
    tags = {'storage', 'object'}
    bench_name = 'warp'
    bench_binary = 'warp'
    parser = staticmethod(warp.parse)
    op = parameter(['get', 'put'])
    obj_size = variable(str, value='10MiB')
    #: objects uploaded before a GET run (the pool it downloads from)
    objects = variable(int, value=2500)
    duration = variable(str, value='1m')
    #: where warp had too few samples of the operation in ``duration`` (many slow requests
    #: in a short run), run it again with twice the duration, at most this many times
    #: (scripts/warp-enough.sh): a shortened run cannot fail for lack of time on a slower
    #: machine. The durations run are in the perflog (meta durations_s).
    extend = variable(int, value=3)
    autoterm = variable(typ.Bool, value=False)
    perf_table = {'throughput': ('mibs', 'MiB/s', 'higher'),
                  'objects_rate': ('obj_s', 'obj/s', 'higher')}

    #: what a target's ``sweep`` may shorten (storage.ObjectTargetTest.short_sweep)
    SWEEP_VARIABLES = {'duration': ('duration', '1m'), 'objects': ('objects', 2500)}

    @run_after('setup')
    def apply_target_sweep(self):
        '''A target may declare a shorter sweep (``sweep:`` in its site config entry, e.g.
        `local`'s MinIO on this machine's disk): fewer concurrencies, a shorter duration,
        fewer objects. What ran is in the perflog meta.'''
        conc = (self.object_target.get('sweep') or {}).get('concurrency')
        conc = conc.get(self.op) if isinstance(conc, dict) else conc   # or one per operation
        sweep = self.short_sweep(self.sweep_concurrency, conc,
                                 f'concurrency {self.sweep_concurrency}')
        if sweep:
            self.mdx_extra = dict(self.mdx_extra, sweep=sweep, duration=self.duration,
                                  objects=self.objects)

    @property
    def sweep_concurrency(self):
        '''The swept concurrency of this case (None: not a concurrency sweep).'''
        return None

    def warp_options(self, concurrency):
        t = self.object_target
        opts = [self.op, f'--host={t["endpoint"]}', f'--bucket={t["bucket"]}',
                f'--obj.size={self.obj_size}', f'--concurrent={concurrency}',
                # plain seconds as the other checks take them (-S duration=30), else warp's
                f'--duration={self.duration}{"s" if str(self.duration).isdigit() else ""}',
                '--no-color', f'--benchdata=warp-{self.op}',
                # the JSON report is the one that says how many requests failed, whether an
                # operation had too few samples, and the request-time percentiles
                '--json']
        opts += ['--tls'] if t.get('tls') else []
        opts += [f'--region={t["region"]}'] if t.get('region') else []
        opts += [f'--lookup={t["lookup"]}'] if t.get('lookup') else []
        opts += [f'--objects={self.objects}'] if self.op == 'get' else []
        opts += ['--autoterm'] if self.autoterm else []
        return opts

    def enough_samples(self, opts):
        '''The command: warp through scripts/warp-enough.sh (executable, options).'''
        return os.path.normpath(ENOUGH), [self.op, str(self.extend), self.bench_path, *opts]

    def derive(self, results):
        rep = warp.select(results, self.op)
        results.update(rep)
        tried = os.path.join(self.stagedir, 'warp-durations.txt')
        if os.path.exists(tried):
            with open(tried) as f:
                self.mdx_extra = dict(self.mdx_extra, durations_s=[
                    int(v) for v in f.read().split() if v.isdigit()])
        self.mdx_extra = dict(self.mdx_extra, **{
            k: rep[k] for k in ('concurrency', 'clients', 'ran_s', 'requests', 'median_mibs',
                                'fastest_mibs', 'slowest_mibs', 'reqs_ms', 'ttfb_ms') if k in rep})


@rfm.simple_test
class WarpObjectStorage(_Warp):
    descr = 'MinIO warp GET/PUT throughput of 10 MiB objects against concurrent operations'
    #: concurrent operations, 1 to 256 as the axes of the paper's Figures 8 and 9 [002: 7
    #: and 8]
    concurrency = parameter([1, 2, 4, 8, 16, 32, 64, 128, 256])

    @property
    def sweep_concurrency(self):
        return self.concurrency

    @run_before('run')
    def set_command(self):
        self.num_tasks = 1
        self.executable, self.executable_opts = self.enough_samples(
            self.warp_options(self.concurrency))
        self.prerun_cmds += [f'{self.bench_path} --version || true']


@rfm.simple_test
class WarpMultiClient(_Warp):
    descr = 'MinIO warp GET/PUT total throughput from several client nodes at once'
    #: client nodes, 1 to 8 as the paper's Figure 10 [002: 9] (one VM per host there)
    clients = parameter([1, 2, 3, 4, 5, 6, 7, 8])
    #: concurrent operations per client node: 128, where one VM's GET peaked (Figure 9
    #: [002: 8]; the paper does not state the per-VM concurrency of Figure 10)
    concurrency = variable(int, value=128)
    #: TCP port of the `warp client` agents; 0 derives one from the job id
    port = variable(int, value=0)
    #: one client node a host, where the partition says its hosts (spread_over_hosts)
    run_conditions = ('distinct_hosts',)

    SWEEP_VARIABLES = dict(_Warp.SWEEP_VARIABLES, concurrency=('client_concurrency', 128))

    @run_after('setup')
    def require_nodes(self):
        skip_unless_nodes(self, self.clients, f'{self.clients} warp clients')
        # Figure 10 [002: 9]: one client VM per host, where the partition declares its hosts
        spread_over_hosts(self, self.clients)

    @run_before('run')
    def set_command(self):
        self.num_tasks = self.clients
        self.num_tasks_per_node = 1
        self.job.launcher = getlauncher('local')()   # the driver; agents are a job step
        self.prerun_cmds += [
            f'{self.bench_path} --version || true',
            f'port={job_port(self.port)}',
            'agents=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | sed "s/$/:$port/" '
            '| paste -sd,)',
            *background_step(f'srun --ntasks-per-node=1 bash -c \'exec {self.bench_path} '
                             'client "$(hostname):$0"\' "$port"', 'agents.out',
                             'warp clients', 3),
        ]
        self.executable, self.executable_opts = self.enough_samples(
            self.warp_options(self.concurrency) + ['--warp-client=$agents'])
