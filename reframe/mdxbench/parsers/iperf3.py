'''iperf3 3.x ``-J`` (JSON) client output: TCP throughput in Gbit/s (1e9 bit/s).'''
import json

from . import ParseError, require


def parse(text):
    '''``{'version', 'streams', 'zerocopy', 'sent_gbps', 'received_gbps', 'retransmits',
    'duration', 'omit', 'start_s'}``. ``received_gbps`` is what the server got: the
    throughput (over ``duration`` seconds, after the ``omit`` seconds of ramp-up iperf3
    leaves out with ``-O``); ``start_s`` is when the client started (epoch seconds).'''
    require(text and text.strip(), 'iperf3 output is empty')
    try:
        data = json.loads(text[text.find('{'):])
    except (json.JSONDecodeError, ValueError) as err:
        raise ParseError(f'iperf3 JSON does not parse ({err}): truncated, or not run with -J') from None

    require(isinstance(data, dict), 'iperf3 JSON is not an object')
    require(not data.get('error'), f'iperf3 reports an error: {data.get("error")}')
    start, end = data.get('start', {}), data.get('end', {})
    require('sum_received' in end and 'sum_sent' in end,
            'iperf3 JSON has no end.sum_sent/sum_received: a UDP test, or the run did not finish')
    ver = start.get('version', '')
    require(ver.startswith('iperf 3'), f'expected "iperf 3.x" in start.version, got {ver!r}')
    ts = start.get('test_start', {})
    try:
        return {
            'version': ver.removeprefix('iperf ').strip(),
            'streams': int(ts['num_streams']),
            'zerocopy': bool(start.get('zerocopy', ts.get('zerocopy', 0))),
            'duration': float(ts['duration']),
            'sent_gbps': float(end['sum_sent']['bits_per_second']) / 1e9,
            'received_gbps': float(end['sum_received']['bits_per_second']) / 1e9,
            'retransmits': int(end['sum_sent'].get('retransmits', 0)),
            'omit': int(ts.get('omit', 0)),
            'start_s': int(start['timestamp']['timesecs']),
        }
    except (KeyError, TypeError, ValueError) as err:
        raise ParseError(f'iperf3 JSON lacks {err}') from None


def parse_pairs(text):
    '''Several clients' JSON, each after "### mdxbench iperf3 pair I": the aggregate, and
    how far apart the clients started (``start_spread_s``, whole seconds as iperf3 records
    them): pairs meant to run together that did not are no aggregate.'''
    import re

    parts = re.split(r'^### mdxbench iperf3 pair (\d+)\s*$', text or '', flags=re.M)
    require(len(parts) >= 3, 'no "### mdxbench iperf3 pair" section: the clients did not run')
    pairs = [parse(parts[k + 1]) for k in range(1, len(parts), 2)]
    versions = {p['version'] for p in pairs}
    return {'version': ','.join(sorted(versions)), 'pairs': len(pairs),
            'aggregate_gbps': sum(p['received_gbps'] for p in pairs),
            'per_pair_gbps': [p['received_gbps'] for p in pairs],
            'min_pair_gbps': min(p['received_gbps'] for p in pairs),
            'omit_s': min(p['omit'] for p in pairs),
            'start_spread_s': max(p['start_s'] for p in pairs) - min(p['start_s'] for p in pairs)}
