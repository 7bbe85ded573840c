'''netperf 2.7 request/response tests (``TCP_RR``, ``UDP_RR``) and ``TCP_STREAM`` run with
``-o`` output selectors (CSV: a header line of selector names, a line of values).'''
import csv
import io
import re

from . import require

# netperf's names of the selectors we ask for (-o THROUGHPUT,THROUGHPUT_UNITS,P50_LATENCY,
# P90_LATENCY,P99_LATENCY,MEAN_LATENCY,STDDEV_LATENCY,MIN_LATENCY,MAX_LATENCY)
_NAMES = {
    'Throughput': 'throughput',
    'Throughput Units': 'throughput_units',
    '50th Percentile Latency Microseconds': 'p50_us',
    '90th Percentile Latency Microseconds': 'p90_us',
    '99th Percentile Latency Microseconds': 'p99_us',
    'Mean Latency Microseconds': 'mean_us',
    'Stddev Latency Microseconds': 'stddev_us',
    'Minimum Latency Microseconds': 'min_us',
    'Maximum Latency Microseconds': 'max_us',
}


def _selectors(text, banner, what):
    '''(banner match, [(selector name, value)]) of a netperf run with -o selectors.'''
    require(text and text.strip(), 'netperf output is empty')
    m = re.search(banner, text, re.M)
    require(m, f'no "{what}" banner: not a netperf {what}')
    # The header may be wrapped over several lines (as in netperf's own terminal output):
    # join everything between the banner and the first line that starts with a number.
    # The banner itself may wrap: the header starts at the first line that starts with a
    # selector name.
    lines = text[m.end():].splitlines()
    firsts = tuple({n.split()[0] for n in _NAMES})
    start = next((i for i, ln in enumerate(lines) if ln.startswith(firsts)), None)
    require(start is not None, 'no -o selector header (Throughput,...) after the banner')
    header, values = [], None
    for line in lines[start:]:
        if re.match(r'^-?[0-9.]+,', line):
            values = line
            break

        header.append(line)

    require(values, 'netperf output has no line of values after the selector header')
    names = next(csv.reader(io.StringIO(' '.join(h.strip() for h in header if h.strip())
                                        .replace(', ', ','))))
    vals = next(csv.reader(io.StringIO(values)))
    require(len(names) == len(vals),
            f'netperf: {len(names)} selector names but {len(vals)} values: truncated?')
    return m, list(zip(names, vals))


def _version(text):
    # `netperf -V` before the test (the checks run it): "Netperf version 2.7.0"
    ver = re.search(r'^Netperf version (\S+)', text, re.M)
    return ver.group(1) if ver else 'unknown'


def parse_stream(text):
    '''A ``TCP_STREAM`` run with ``-o THROUGHPUT,THROUGHPUT_UNITS,...``:
    ``{'test', 'version', 'throughput_gbps', 'elapsed_s'}``.'''
    _, pairs = _selectors(text, r'^(?:MIGRATED )?TCP STREAM TEST', 'TCP STREAM TEST')
    sel = {n.strip(): v for n, v in pairs}
    require('Throughput' in sel and sel.get('Throughput Units') == '10^6bits/s',
            'netperf TCP_STREAM: no Throughput in 10^6bits/s (run with '
            '-o THROUGHPUT,THROUGHPUT_UNITS)')
    out = {'test': 'TCP_STREAM', 'version': _version(text),
           'throughput_gbps': float(sel['Throughput']) / 1000}
    if 'Elapsed Time (sec)' in sel:
        out['elapsed_s'] = float(sel['Elapsed Time (sec)'])
    return out


def parse_rr(text):
    m, pairs = _selectors(text, r'^(?:MIGRATED )?(TCP|UDP) REQUEST/RESPONSE TEST',
                          'TCP/UDP REQUEST/RESPONSE TEST')
    names, vals = [n for n, _ in pairs], [v for _, v in pairs]
    out = {'test': f'{m.group(1)}_RR', 'version': _version(text)}
    for n, v in zip(names, vals):
        key = _NAMES.get(n.strip())
        if key is None:
            continue

        out[key] = v if key == 'throughput_units' else float(v)

    require('p50_us' in out or 'mean_us' in out,
            'netperf output has no latency selector (run with -o ...P50_LATENCY,MEAN_LATENCY...)')
    if 'mean_us' not in out and out.get('throughput_units') == 'Trans/s' and out.get('throughput'):
        # one transaction in flight: the mean round trip is the inverse of the rate
        out['mean_us'] = 1e6 / out['throughput']
        out['mean_from_rate'] = True

    return out
