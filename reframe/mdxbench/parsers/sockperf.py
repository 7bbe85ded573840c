'''sockperf 3.x ``ping-pong``: latency percentiles. sockperf reports one-way latency
(half the round trip); the round trip is twice that.'''
import re

from . import require

_ANSI = re.compile(r'\x1b\[[0-9;]*m')


def parse(text):
    '''``{'version', 'avg_us', 'stddev_us', 'p50_us', 'p90_us', 'p99_us', 'rtt_avg_us',
    'rtt_p50_us', 'rtt_p99_us', 'observations'}`` (``*_us`` one-way, as sockperf prints).'''
    require(text and text.strip(), 'sockperf output is empty')
    text = _ANSI.sub('', text)
    v = re.search(r'== version #(\S+)', text)
    require(v, 'no "== version #" banner: not sockperf output')
    require('ERROR' not in text, 'sockperf reports an error: ' +
            next((ln for ln in text.splitlines() if 'ERROR' in ln), ''))
    m = re.search(r'avg-latency=([0-9.]+) \(std-dev=([0-9.]+)\)', text)
    require(m, 'no "avg-latency=... (std-dev=...)": not a ping-pong run, or it did not finish')
    out = {'version': v.group(1), 'avg_us': float(m.group(1)), 'stddev_us': float(m.group(2))}
    for p in ('50.000', '90.000', '99.000'):
        pm = re.search(rf'percentile {re.escape(p)} =\s*([0-9.]+)', text)
        require(pm, f'no "percentile {p}" line: truncated sockperf output')
        out[f'p{p.split(".")[0]}_us'] = float(pm.group(1))

    n = re.search(r'Total (\d+) observations', text)
    require(n, 'no "Total N observations": truncated sockperf output')
    out['observations'] = int(n.group(1))
    for k in ('avg', 'p50', 'p90', 'p99'):
        out[f'rtt_{k}_us'] = 2 * out[f'{k}_us']

    return out
