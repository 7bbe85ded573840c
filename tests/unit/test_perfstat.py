'''perf stat -x, output captured from Debian's perf 6.1 on this machine (a VM with no
virtual PMU: hardware events are not supported, software events count).'''
import pytest

from mdxbench.parsers import ParseError, perfstat

CAPTURED = 'perf/perf-6.1-stat-x-fft-novpmu.csv'


def test_software_events_count_hardware_events_are_none(fixture_text):
    r = perfstat.parse(fixture_text(CAPTURED))
    ev = r['events']
    assert ev['page-faults'] == 13573 and ev['task-clock'] == pytest.approx(715.79)
    assert r['units']['task-clock'] == 'msec'
    for hw in ('instructions', 'cycles', 'cache-references', 'cache-misses'):
        assert ev[hw] is None                     # never a 0 that looks like a count
    assert 'instructions <not supported>' in r['not_counted']


def test_not_perf_output(fixture_text):
    with pytest.raises(ParseError, match='empty'):
        perfstat.parse('\n')
    text = fixture_text(CAPTURED)
    with pytest.raises(ParseError, match='no event line'):
        perfstat.parse(text[:text.index('<not supported>')])   # cut after the header
    with pytest.raises(ParseError, match='line 1: expected "value,unit,event'):
        perfstat.parse(fixture_text('sockperf/sockperf-3.7-ping-pong-tcp.out'))
