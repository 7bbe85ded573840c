'''Histories for the tests of the operator's loop, derived from the real history recorded
on `local` (tests/fixtures/perflogs/history-local, see the fixtures README): a copy whose
perf values from one run on are scaled stands for a slowdown; nothing here is typed by hand.'''
import pathlib

from mdxbench import perflog

HISTORY = pathlib.Path(__file__).resolve().parent / 'fixtures' / 'perflogs' / 'history-local'


def shifted(src, dst, start, factor):
    '''Copy a real perflog, the perf values of its runs from ``start`` on times ``factor``.'''
    nfix = len(perflog.FIXED_FIELDS)
    out, run = [], 0
    for ln in src.read_text().splitlines(keepends=True):
        if not perflog.is_header(ln):
            cols = ln.rstrip('\n').split('|')
            if run >= start:
                for g in range(nfix, len(cols), 7):
                    cols[g + 1] = repr(float(cols[g + 1]) * factor)
            run += 1
            ln = '|'.join(cols) + '\n'
        out.append(ln)
    dst.parent.mkdir(parents=True, exist_ok=True)
    dst.write_text(''.join(out))


def slowed_sockperf(base, start=24, factor=1.5):
    '''<base>/perflogs with SockperfPingPong's latencies ``factor`` x from run ``start + 1``.'''
    d = base / 'perflogs' / 'local' / 'debug'
    shifted(HISTORY / 'local' / 'debug' / 'SockperfPingPong.log', d / 'SockperfPingPong.log',
            start, factor)
    return base / 'perflogs'
