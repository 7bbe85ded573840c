'''What the GPU checks share: how many GPUs a partition has (ReFrame's ``devices`` of the
site configuration, ``type: gpu``), what it declares about them (``extras.gpu``), and
their figures per GPU.

A figure measured on each GPU is a performance variable per GPU, ``gpu<i>_<name>``
(``gpu3_triad``): each is its own series in regression tracking, node acceptance compares
GPU 3 of a node with GPU 3 of the others, and a failure names the GPU. A reference given
for ``<name>`` (site-configs/references) applies to every GPU's ``gpu<i>_<name>``.

A partition without GPUs declares none, and the checks skip there, saying so, before they
look for their binaries: what a partition has is declared in its site configuration, never
probed by a check (``gpunode``, one node vetted on its own, reads its count from the node's
nvidia-smi when the configuration loads). Each job asks the scheduler for the node's GPUs
and the node alone, lists them with nvidia-smi, and ties every figure to a bus id.'''
import os

import reframe as rfm
from reframe.core.builtins import run_after, run_before, variable

from mdxbench.parsers import ParseError, nvsmi

#: the GPUs of the node as the job's nvidia-smi lists them (index, bus id, uuid, name):
#: what a GPU check's figures are tied to, and what the program's own count is compared with
GPU_LIST = 'gpus.csv'
GPU_LIST_QUERY = 'index,pci.bus_id,uuid,name'

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


def seen_failures(declared, listed, program, found, bus_ids=None):
    '''How the GPUs a program saw (``found`` of them; ``bus_ids``, index-ordered, where it
    prints them) differ from the ``listed`` ones (nvidia-smi in the same job: parse_query)
    and the ``declared`` count, as sentences; empty where all agree. With
    ``CUDA_DEVICE_ORDER=PCI_BUS_ID`` (the GPU checks set it) CUDA numbers the GPUs in
    nvidia-smi's order: "gpu5" of a figure is nvidia-smi's GPU 5, the bus id in the record.'''
    out = []
    if len(listed) != declared:
        out.append(f'nvidia-smi lists {len(listed)} GPU(s), the partition declares {declared}')
    if found != len(listed):
        out.append(f'{program} saw {found} GPU(s), nvidia-smi lists {len(listed)}')
    for i, (bus, g) in enumerate(zip(bus_ids or [], listed)):
        if nvsmi.bus_key(bus) != nvsmi.bus_key(g.get('pci.bus_id')):
            out.append(f'{program} GPU {i} is {bus}, nvidia-smi GPU {i} is '
                       f'{g.get("pci.bus_id")}: the figures would name the wrong GPU')
    return out


def peer_failures(declared_p2p, n, ran, waived, unmeasured):
    '''How a node's device-to-device cases (nvbandwidth: ``ran``, the cases measured, and
    ``waived``; ``unmeasured``: ``{case: ["i-j", ...]}``, pairs printed N/A) differ from the
    peer-to-peer its partition declares (``extras.facts.gpu_p2p``), as sentences. Declared:
    every pair measured. Not declared (PCIe passthrough): nvbandwidth waives every pair
    case; a pair measured means peer access the site says is not there (the references
    stated without P2P do not apply).'''
    if n < 2:
        return []
    if declared_p2p:
        out = [f'{case}: waived by nvbandwidth (no GPU pair has peer access), the '
               'partition declares peer-to-peer (extras.facts.gpu_p2p: true)'
               for case in waived]
        out += [f'{case}: GPU pair(s) {", ".join(pairs)} not measured (no peer access), '
                'the partition declares peer-to-peer between all its GPUs'
                for case, pairs in unmeasured.items()]
        return out
    return [f'{case}: measured between GPUs with peer access, the partition declares none '
            '(extras.facts.gpu_p2p: false)' for case in ran]


def connectivity_failures(declared_p2p, connectivity):
    '''How ``p2pBandwidthLatencyTest``'s P2P connectivity matrix differs from the declared
    peer-to-peer (every pair 1 where declared, none where not), naming the pairs.'''
    n = len(connectivity)
    pairs = [(i, j) for i in range(n) for j in range(n) if i != j]
    wrong = [f'{i}-{j}' for i, j in pairs if bool(connectivity[i][j]) != bool(declared_p2p)]
    if not wrong:
        return []
    if declared_p2p:
        return [f'{len(wrong)} of {len(pairs)} GPU pairs without P2P ({", ".join(wrong)}), '
                'the partition declares peer-to-peer (extras.facts.gpu_p2p: true)']
    return [f'{len(wrong)} of {len(pairs)} GPU pairs with P2P ({", ".join(wrong)}), the '
            'partition declares none (extras.facts.gpu_p2p: false)']


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
    #: the pair figures need peer access (nvbandwidth's device-to-device cases): measured
    #: only where the partition declares it (``extras.facts.gpu_p2p``)
    pairs_need_p2p = variable(bool, value=False)
    #: the job lists the node's GPUs with nvidia-smi first (GPU_LIST); the conformance
    #: check, which reads nvidia-smi whole, does not
    lists_gpus = variable(bool, value=True)

    @run_after('setup')
    def per_gpu_variables(self):
        '''The perf table and the references per GPU, before the base class builds the
        performance variables (it does so last).'''
        self.num_gpus = gpu_count(self.current_partition)
        pairs = self.pair_table if self.num_gpus > 1 and (
            self.declared_p2p() or not self.pairs_need_p2p) else {}
        self.perf_table = expand_table(dict(self.perf_table, **pairs), self.per_gpu_table,
                                       self.num_gpus)
        if self.reference:
            self.reference = expand_reference(self.reference, self.per_gpu_table,
                                              self.num_gpus)

    @run_before('run')
    def one_process_on_the_node(self):
        '''The GPU programs drive every GPU of the node from one process (a check's own hook,
        after this one, sets its options), in a job that has the node to itself and
        asks Slurm for its GPUs (the partition's ``gpu`` resource, ``--gres=gpu:N``):
        under cgroup device confinement a job that asks for none sees none, and two GPU
        checks on one node would measure each other.'''
        self.num_tasks = 1
        self.num_tasks_per_node = 1
        self.exclusive_access = True
        self.executable = self.bench_path
        if self.num_gpus and 'gpu' in self.current_partition.resources:
            self.extra_resources = dict(self.extra_resources or {},
                                        gpu={'num_gpus_per_node': self.num_gpus})
        # CUDA numbers the GPUs by PCI bus id, as nvidia-smi does (its default is fastest
        # first): gpu5 of a figure is nvidia-smi's GPU 5, its bus id in the record
        self.env_vars['CUDA_DEVICE_ORDER'] = 'PCI_BUS_ID'
        if self.lists_gpus:
            self.prerun_cmds += [f'nvidia-smi --query-gpu={GPU_LIST_QUERY} --format=csv '
                                 f'> {GPU_LIST} 2>&1 || true']

    def check_gpus_seen(self, found, program, bus_ids=None):
        '''The program saw the GPUs nvidia-smi lists in the same job (``found`` of them, at
        ``bus_ids`` where it prints them), as many as the partition declares, or the case
        fails; the record ties each GPU index to its bus id (``meta.gpu_bus_ids``).'''
        try:
            with open(os.path.join(self.stagedir, GPU_LIST)) as fp:
                listed = nvsmi.parse_query(fp.read())
        except (OSError, ParseError) as err:
            raise ValueError(f'the job\'s GPU list ({GPU_LIST}, nvidia-smi): {err}') from None
        self.mdx_extra = dict(self.mdx_extra, gpu_bus_ids={
            str(g['index']): g.get('pci.bus_id') for g in listed})
        wrong = seen_failures(self.num_gpus, listed, program, found, bus_ids)
        if wrong:
            raise ValueError(f'{self.current_system.name}:{self.current_partition.name}: '
                             + '; '.join(wrong))

    def declared_p2p(self):
        '''Peer-to-peer between the node's GPUs, as the partition declares it.'''
        return bool((self.current_partition.extras.get('facts') or {}).get('gpu_p2p'))

    def not_here(self):
        if gpu_count(self.current_partition) < 1:
            return (f'{self.current_system.name}:{self.current_partition.name} declares no '
                    'GPU (no devices of type gpu in its site configuration)')
        return None

    def declared_gpu(self):
        '''What the partition declares about its GPUs (``extras.gpu``) and their count.'''
        return dict(self.current_partition.extras.get('gpu') or {}, count=self.num_gpus)
