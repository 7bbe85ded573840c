# IOR against an S3 object store, as the mdx I paper ran it (seeds/003 sec. 5.3, Fig. 7):
# IOR's S3-libs3 backend (`ior +s3`, spack/repo), mdx I's options with the paper's S3 sizes
# -- `-w -r -C -g -i 3 -e -F -s 1 -b 4g -t 4g` ("the largest size it runs with", one
# segment) -- against the process count in one node: aggregate write and read GB/s, best of
# the repetitions, as `Ior`. Endpoints are the partition's object targets
# (extras.object_targets), as warp's; keys never enter the job script, the perflog or this
# process: the job writes them into a 0600 IOR script in a directory of its own, removed
# when the job ends (IOR takes its S3 keys as options, which `ps` would show on a command
# line).
import reframe as rfm
from reframe.core.builtins import parameter, run_after, run_before, variable

from mdxbench.base import partition_facts
from mdxbench.parsers import ior
from mdxbench.storage import ObjectTargetTest


@rfm.simple_test
class IorS3(ObjectTargetTest):
    descr = "IOR S3-libs3 write and read of an object store, aggregate over one node's ranks"
    tags = {'storage', 'object'}
    bench_name = 'ior'
    bench_binary = 'ior'
    parser = staticmethod(ior.parse)
    #: IOR processes in the node: mdx I's sweep of the process count (Fig. 7: S3 beside
    #: Lustre over TCP, 7.5x below `large` at 2, 18x below `fast` at 8); a target's sweep
    #: (``sweep: {ior_ranks: [...]}``) may run fewer
    ranks = parameter([1, 2, 4, 8, 16, 32, 64])
    #: the paper's S3 sizes: one segment of a 4 GiB block in 4 GiB transfers per rank; a
    #: target's sweep may size them down (``ior_block``, ``ior_transfer``); -S wins
    block_size = variable(str, value='4g')
    transfer_size = variable(str, value='4g')
    repetitions = variable(int, value=3)
    #: the bucket names' prefix (IOR adds a hash to it); IOR deletes what it wrote
    bucket_prefix = variable(str, value='mdxbench-ior')
    perf_table = {'write_bw': ('write_gbs', 'GB/s', 'higher'),
                  'read_bw': ('read_gbs', 'GB/s', 'higher')}
    #: the class defaults a target's ``sweep`` may change: variable: (key, class default)
    SWEEP_VARIABLES = {'block_size': ('ior_block', '4g'), 'transfer_size': ('ior_transfer', '4g')}

    @run_after('setup')
    def apply_target_sweep(self):
        sweep = self.object_target.get('sweep') or {}
        self.short_sweep(self.ranks, sweep.get('ior_ranks'), f'IOR with {self.ranks} processes')
        cores = partition_facts(self.current_partition)['cores']
        where = f'{self.current_system.name}:{self.current_partition.name}'
        self.skip_if(self.ranks > cores, f'{self.ranks} IOR processes: {where} has {cores} cores')

    @run_before('run')
    def set_command(self):
        t = self.object_target
        self.num_tasks = self.num_tasks_per_node = self.ranks
        # the keys from the environment s3cred.sh exported, into a file only this user reads
        script = [f'--S3-libs3.host={t["endpoint"]}',
                  f'--S3-libs3.bucket-name-prefix={self.bucket_prefix}',
                  '--S3-libs3.access-key=$WARP_ACCESS_KEY',
                  '--S3-libs3.secret-key=$WARP_SECRET_KEY']
        if t.get('region'):
            script.append(f'--S3-libs3.region={t["region"]}')
        lines = ['IOR START', 'api=S3-libs3', *script, 'RUN', 'IOR STOP']
        self.prerun_cmds += [
            'iorkeys=$(mktemp -d) || exit 1',
            'trap \'rm -rf "$iorkeys"\' EXIT',
            f'{self.bench_path} -h 2>&1 | grep -q "S3-libs3" || {{ echo "mdxbench: '
            f'{self.bench_path} has no S3-libs3 backend (Spack: ior +s3)" >&2; exit 1; }}',
            '(umask 077; printf \'%s\\n\' ' + ' '.join(f'"{x}"' for x in lines)
            + ' > "$iorkeys/s3.ior")',
        ]
        self.executable_opts = [
            '-w', '-r', '-C', '-g', '-i', str(self.repetitions), '-e', '-F', '-s', '1',
            '-b', self.block_size, '-t', self.transfer_size, '-o', 'ior',
        ] + (['--S3-libs3.use-ssl'] if t.get('tls') else []) + ['-f', '"$iorkeys/s3.ior"']
        self.mdx_extra = dict(self.mdx_extra, api='S3-libs3', block_size=self.block_size,
                              transfer_size=self.transfer_size)

    def derive(self, results):
        self.mdx_extra = dict(self.mdx_extra, **{
            k: results[k] for k in ('tasks_per_node', 'aggregate_bytes') if k in results})
