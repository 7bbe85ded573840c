'''The conformance check's facts: captured from reframe/mdxbench/scripts/nodefacts.sh on
this machine kind (tests/fixtures/nodefacts), compared with declared facts.'''
import pytest

from mdxbench.parsers import ParseError, nodefacts

OUT = 'nodefacts/nodefacts-debian12-vm.out'


@pytest.fixture
def facts(fixture_text):
    return nodefacts.parse(fixture_text(OUT))


def test_the_captured_facts(facts):
    f = facts
    assert (f['cpus'], f['threads_per_core'], f['sockets']) == (2, 1, 1)
    assert f['cpu_model'] == 'AMD EPYC' and f['kernel'] == '6.18.44-fc-v669'
    assert f['version'] == 'lscpu from util-linux 2.38.1'
    assert f['memory_gib'] == pytest.approx(24684084 / 1024**2)
    assert f['nics'] == {'eth0': {'rx_queues': 1, 'combined': 1}}
    assert f['targets'] == {'scratch': 'ext2/ext3', 'nothere': None, 'lustre': 'ext2/ext3'}


def test_what_the_node_is_conforms(facts):
    assert nodefacts.mismatches({'cpus': 2, 'threads_per_core': 1, 'sockets': 1,
                                 'memory_gib': 24, 'cpu_model': 'EPYC',
                                 'kernel': '6.18.44-fc-v669',
                                 'nic': {'device': 'eth0', 'queues': 1},
                                 'targets': ['scratch', 'lustre']}, facts) == []


def test_each_wrong_fact_is_named_with_declared_and_found(facts):
    wrong = nodefacts.mismatches({'cpus': 16, 'memory_gib': 32, 'cpu_model': 'Xeon Platinum 8480+',
                                  'kernel': '6.1.0-26-amd64',
                                  'nic': {'device': 'eth0', 'queues': 16},
                                  'targets': ['nothere']}, facts)
    assert wrong == [
        'cpus: declared 16, found 2',
        'memory_gib: declared 32, found 23.5 (MemTotal; 10% below to 5% above is accepted)',
        "cpu_model: declared 'Xeon Platinum 8480+', found 'AMD EPYC'",
        'kernel: declared 6.1.0-26-amd64, found 6.18.44-fc-v669',
        'nic eth0 queues: declared 16, found 1 (virtio-net multiqueue: combined channels, '
        'else rx queues)',
        'storage target nothere: declared, found missing on the node']
    assert nodefacts.mismatches({'nic': {'device': 'ens3', 'queues': 4}}, facts) == [
        'nic ens3 queues: declared 4, found no such interface (virtio-net multiqueue: '
        'combined channels, else rx queues)']


def test_cut_or_foreign_output_is_refused(fixture_text):
    text = fixture_text(OUT)
    with pytest.raises(ParseError, match='did not finish'):
        nodefacts.parse(text[:text.index('mdxbench-facts: end')])
    with pytest.raises(ParseError, match="no fact 'kernel'"):
        nodefacts.parse(text.replace('mdxbench-fact: kernel=6.18.44-fc-v669\n', ''))
    with pytest.raises(ParseError, match='no "mdxbench-facts: end" line'):
        nodefacts.parse(fixture_text('sockperf/sockperf-3.7-ping-pong-tcp.out'))


NEW = 'nodefacts/nodefacts-findmnt-debian12-vm.out'


def test_file_system_type_and_mount_point_of_each_target(fixture_text):
    f = nodefacts.parse(fixture_text(NEW))
    assert f['targets'] == {'scratch': 'ext4', 'nothere': None, 'disk': 'ext4', 'work': 'ext4'}
    assert f['mounts'] == {'scratch': '/', 'disk': '/tmp/mnt', 'work': '/'}
    ok = {'disk': {'path': '/tmp/mnt', 'fstype': 'ext4', 'mounted': True},
          'scratch': {'path': '/tmp'}}
    assert nodefacts.mismatches({'targets': ok}, f) == []
    # a node-local disk that did not mount: its directory is one of the root file system
    wrong = {'work': {'path': '/work', 'fstype': 'ext4', 'mounted': True},
             'disk': {'path': '/tmp/mnt', 'fstype': 'lustre'},
             'nothere': {'path': '/nonexistent', 'fstype': 'ext4'}}
    assert nodefacts.mismatches({'targets': wrong}, f) == [
        'storage target work: declared mounted at /work, found not mounted, under /',
        'storage target disk: declared file system lustre, found ext4',
        'storage target nothere: declared, found missing on the node']
    # the older script's output: no mount points, so "mounted" cannot be confirmed
    old = nodefacts.parse(fixture_text(OUT))
    assert old['mounts'] == {}
    assert nodefacts.mismatches({'targets': {'scratch': {'path': '/tmp', 'mounted': True}}},
                                old) == ['storage target scratch: declared mounted at /tmp, '
                                         'found no mount point']
