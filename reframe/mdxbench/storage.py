'''Storage targets: directories a partition declares in ``extras.storage_targets``.'''
from reframe.core.builtins import parameter, run_after, run_before, variable

from mdxbench.base import MdxBenchTest
from mdxbench.sitecfg import storage_target_names


class StorageTargetTest(MdxBenchTest):
    #: one test per storage target any system declares; skipped where the current
    #: partition does not declare it
    target = parameter(storage_target_names())

    #: directory of the target on the current partition
    target_dir = variable(str, value='')

    @run_after('setup')
    def resolve_target(self):
        targets = self.current_partition.extras.get('storage_targets') or {}
        self.skip_if(
            self.target not in targets,
            f'{self.current_system.name}:{self.current_partition.name} declares no storage '
            f'target {self.target!r} (it declares: {", ".join(sorted(targets)) or "none"})'
        )
        self.target_dir = targets[self.target]

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
