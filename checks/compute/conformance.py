# Conformance before performance (node acceptance): the node is what the site config
# declares -- CPUs, threads per core, sockets (ReFrame's processor), memory, CPU model,
# the queue count of the NIC the network checks use (virtio-net multiqueue: the mdx II
# paper's key finding), the storage targets mounted, and the kernel release where the site
# pins one (extras.facts). A mismatch fails naming the fact, the declared and the found
# value; the node's facts go to the perflog either way.
import reframe as rfm
from reframe.core.builtins import run_before

from mdxbench.base import SCRIPTS, MdxBenchTest, partition_facts
from mdxbench.parsers import nodefacts


@rfm.simple_test
class NodeConformance(MdxBenchTest):
    descr = 'The node is what the site declares: CPUs, memory, CPU model, NIC queues, targets, kernel'
    tags = {'acceptance', 'conformance'}
    bench_name = 'nodefacts'
    bench_binary = 'lscpu'
    parser = staticmethod(nodefacts.parse)
    perf_table = {'cpus': ('cpus', 'count', 'higher'),
                  'memory': ('memory_gib', 'GiB', 'higher')}

    @run_before('run')
    def set_command(self):
        self.num_tasks = 1
        self.num_tasks_per_node = 1
        nic = partition_facts(self.current_partition).get('nic')
        targets = self.current_partition.extras.get('storage_targets') or {}
        self.executable = f'sh {SCRIPTS}/nodefacts.sh'
        self.executable_opts = ((['--nic', nic['device']] if nic else []) +
                                [f'{name}={t["path"] if isinstance(t, dict) else t}'
                                 for name, t in sorted(targets.items())])

    def declared(self):
        proc = self.current_partition.processor
        facts = partition_facts(self.current_partition)
        targets = self.current_partition.extras.get('storage_targets') or {}
        return {'cpus': proc.num_cpus, 'threads_per_core': proc.num_cpus_per_core,
                'sockets': proc.num_sockets, 'memory_gib': facts.get('memory_gib'),
                'cpu_model': facts.get('cpu_model'), 'kernel': facts.get('kernel'),
                'nic': facts.get('nic'),
                'targets': {name: t if isinstance(t, dict) else {'path': t}
                            for name, t in sorted(targets.items())}}

    def derive(self, results):
        self.mdx_extra = dict(self.mdx_extra, facts={
            k: results[k] for k in ('hostname', 'cpu_model', 'threads_per_core', 'sockets',
                                    'nics', 'targets', 'mounts')})
        wrong = nodefacts.mismatches(self.declared(), results)
        if wrong:
            raise ValueError(f'node {results["hostname"]} is not what '
                             f'{self.current_system.name}:{self.current_partition.name} '
                             f'declares: ' + '; '.join(wrong))
