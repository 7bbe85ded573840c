'''The ``mdxbench-nic:`` line of ``mdxbench/scripts/nicinfo.sh``.'''
import re

from . import require


def parse(text):
    m = re.search(r'^mdxbench-nic: (.+)$', text or '', re.M)
    require(m, 'no "mdxbench-nic:" line (nicinfo.sh did not run on the client node)')
    info = dict(kv.split('=', 1) for kv in m.group(1).split())
    for k in ('rx_queues', 'tx_queues'):
        info[k] = int(info.get(k, 0))

    info['multiqueue'] = max(info['rx_queues'], info['tx_queues']) > 1
    return info
