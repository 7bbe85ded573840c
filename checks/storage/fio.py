# Block and file-system I/O with fio, as the mdx II paper ran it (Tables 2 and 3): libaio,
# queue depth 256, direct I/O; sequential 1 MiB read and write (GB/s) and random 4 KiB
# read and write (KIOPS), on each storage target the partition declares.
import reframe as rfm
from reframe.core.builtins import parameter, run_before, variable

from mdxbench.parsers import fio
from mdxbench.storage import StorageTargetTest

WORKLOADS = {  # name: (fio --rw, block size)
    'seqread': ('read', '1M'), 'seqwrite': ('write', '1M'),
    'randread': ('randread', '4k'), 'randwrite': ('randwrite', '4k'),
}


@rfm.simple_test
class FioTarget(StorageTargetTest):
    descr = 'fio libaio iodepth=256 direct=1: sequential 1 MiB and random 4 KiB'
    tags = {'storage', 'acceptance'}
    bench_name = 'fio'
    bench_binary = 'fio'
    output_file = 'fio.json'
    parser = staticmethod(fio.parse)
    workload = parameter(list(WORKLOADS))
    #: file size and run time (time_based)
    size = variable(str, value='4G')
    runtime = variable(int, value=30)
    lengthen = {'runtime': 1}
    iodepth = variable(int, value=256)
    perf_table = {'bandwidth': ('bw_gbs', 'GB/s', 'higher'), 'iops': ('kiops', 'KIOPS', 'higher')}

    @run_before('run')
    def set_command(self):
        rw, bs = WORKLOADS[self.workload]
        self.num_tasks = 1
        self.executable_opts = [
            f'--name={self.workload}', '--directory="$workdir"', f'--size={self.size}',
            f'--rw={rw}', f'--bs={bs}', '--ioengine=libaio', f'--iodepth={self.iodepth}',
            '--direct=1', f'--runtime={self.runtime}', '--time_based',
            '--output-format=json', f'--output={self.output_file}',
        ]

    def derive(self, results):
        # fio's report says how many reads reached the devices under the target: a read
        # served from memory (direct=1 not honoured, page cache) is no storage figure
        why = fio.read_not_from_storage(results)
        if why:
            raise ValueError(why)
        self.mdx_extra = dict(self.mdx_extra, devices=results['devices'],
                              device_ios=results['device_ios'], job_ios=results['job_ios'])
