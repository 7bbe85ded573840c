'''What the GPU checks share: how many GPUs a partition has (ReFrame's ``devices`` of the
site configuration, ``type: gpu``), what it declares about them (``extras.gpu``), and
their figures per GPU.

A figure measured on each GPU is a performance variable per GPU, ``gpu<i>_<name>``
(``gpu3_triad``): each is its own series in regression tracking, node acceptance compares
GPU 3 of a node with GPU 3 of the others, and a failure names the GPU. A reference given
for ``<name>`` (site-configs/references) applies to every GPU's ``gpu<i>_<name>``.

A partition without GPUs declares none, and the checks skip there, saying so, before they
look for their binaries: what a partition has is declared in its site configuration, never
probed at run time.'''
import reframe as rfm
from reframe.core.builtins import run_after, run_before, variable

def gpu_count(partition):
    '''The GPUs a node of ``partition`` has: ReFrame's ``devices`` of type gpu.'''
    return sum(d.num_devices or 0 for d in partition.select_devices('gpu'))


def gpu_arch(partition):
    '''The CUDA architecture the partition declares (``sm_80``), or None.'''
    archs = {d.arch for d in partition.select_devices('gpu') if d.arch}
    return archs.pop() if len(archs) == 1 else None


def per_gpu_var(i, name):
    return f'gpu{i}_{name}'


def expand_table(shared, per_gpu, n):
    '''The perf table of a node of ``n`` GPUs: ``shared`` as it is, each entry of
    ``per_gpu`` once per GPU (``gpu<i>_<name>``, its key in the results ``gpu<i>_<key>``).'''
    table = dict(shared)
    for i in range(n):
        for name, (key, unit, better) in per_gpu.items():
            table[per_gpu_var(i, name)] = (per_gpu_var(i, key), unit, better)
    return table


def expand_reference(reference, per_gpu, n):
    '''ReFrame's reference (``{'sys:part': {var: (value, lower, upper, unit)}}``, or the
    ScopedDict ReFrame keeps it as, keys ``'sys:part:var'``) as a plain two-level
    dictionary, each per-GPU variable's entry copied to every GPU's variable (``triad`` ->
    ``gpu0_triad`` .. ``gpu<n-1>_triad``).'''
    levels = {}
    for key, value in (reference or {}).items():
        if isinstance(value, dict):
            levels.setdefault(key, {}).update(value)
        else:
            target, var = key.rsplit(':', 1)
            levels.setdefault(target, {})[var] = value
    for refs in levels.values():
        for name in per_gpu:
            if name in refs:
                for i in range(n):
                    refs.setdefault(per_gpu_var(i, name), refs[name])
    return levels


class GpuMixin(rfm.RegressionTestPlugin):
    '''A check measuring the GPUs of a node: ``per_gpu_table`` (as ``perf_table``, each
    entry once per GPU) and ``pair_table`` (entries that need two GPUs or more: dropped on
    a node of one, where they are not measured).'''

    #: ``{name: (key, unit, better)}`` measured on each GPU; the parser gives ``gpu<i>_<key>``
    per_gpu_table = variable(dict, value={})
    #: ``{name: (key, unit, better)}`` measured between GPUs (worst pair)
    pair_table = variable(dict, value={})
    #: GPUs of the node (from the partition's devices)
    num_gpus = variable(int, value=0)

    @run_after('setup')
    def per_gpu_variables(self):
        '''The perf table and the references per GPU, before the base class builds the
        performance variables (it does so last).'''
        self.num_gpus = gpu_count(self.current_partition)
        pairs = self.pair_table if self.num_gpus > 1 else {}
        self.perf_table = expand_table(dict(self.perf_table, **pairs), self.per_gpu_table,
                                       self.num_gpus)
        if self.reference:
            self.reference = expand_reference(self.reference, self.per_gpu_table,
                                              self.num_gpus)

    @run_before('run')
    def one_process_on_the_node(self):
        '''The GPU programs drive every GPU of the node from one process (a check's own hook,
        after this one, sets its options).'''
        self.num_tasks = 1
        self.num_tasks_per_node = 1
        self.executable = self.bench_path

    def check_gpus_seen(self, found, program):
        '''The program saw as many GPUs as the partition declares, or the case fails.'''
        if found != self.num_gpus:
            raise ValueError(f'{program} saw {found} GPU(s), {self.current_system.name}:'
                             f'{self.current_partition.name} declares {self.num_gpus}')

    def not_here(self):
        if gpu_count(self.current_partition) < 1:
            return (f'{self.current_system.name}:{self.current_partition.name} declares no '
                    'GPU (no devices of type gpu in its site configuration)')
        return None

    def declared_gpu(self):
        '''What the partition declares about its GPUs (``extras.gpu``) and their count.'''
        return dict(self.current_partition.extras.get('gpu') or {}, count=self.num_gpus)
