'''Which two nodes a network measurement runs on, from the physical hosts a site declares
(mdxbench.placement), on real sinfo outputs of ci/cluster.sh's nodes.'''
import pathlib

import pytest

from mdxbench import placement as place

FIX = pathlib.Path(__file__).resolve().parents[1] / 'fixtures' / 'slurm'


def sinfo(name):
    return place.parse_sinfo((FIX / name).read_text())


def test_features_name_each_nodes_host_and_both_placements_are_found():
    nodes = sinfo('sinfo-nodes-features-22.05.txt')
    assert nodes == {'mdxnode1': ['host_ns-host-1'], 'mdxnode2': ['host_ns-host-1'],
                     'mdxnode3': ['host_ns-host-2']}
    where, how = place.node_hosts({'host_feature': 'host_'}, nodes)
    assert how == 'Slurm node features host_<host>'
    assert place.choose_pair(where, 'same-host') == ('mdxnode1', 'mdxnode2')
    assert place.choose_pair(where, 'different-hosts') == ('mdxnode1', 'mdxnode3')


def test_a_drained_node_is_not_chosen_and_the_reason_names_the_hosts():
    where, _ = place.node_hosts({'host_feature': 'host_'},
                                sinfo('sinfo-nodes-features-drained-22.05.txt'))
    assert where == {'mdxnode1': 'ns-host-1', 'mdxnode3': 'ns-host-2'}
    with pytest.raises(place.Unavailable, match=r'no physical host has two usable nodes '
                                                r'\(ns-host-1: mdxnode1; ns-host-2: mdxnode3\)'):
        place.choose_pair(where, 'same-host')
    assert place.choose_pair(where, 'different-hosts') == ('mdxnode1', 'mdxnode3')


def test_a_declared_map_is_limited_to_the_nodes_slurm_has():
    declared = {'hosts': {'h2': ['mdxnode3', 'mdxnode9'], 'h1': ['mdxnode2', 'mdxnode1']}}
    where, how = place.node_hosts(declared, sinfo('sinfo-nodes-features-22.05.txt'))
    assert where == {'mdxnode1': 'h1', 'mdxnode2': 'h1', 'mdxnode3': 'h2'}
    assert how == 'site config (extras.placement.hosts)'
    assert place.node_hosts(declared, None)[0]['mdxnode9'] == 'h2'   # Slurm not asked


def test_nodes_alone_on_their_hosts_have_no_same_host_pair():
    where, _ = place.node_hosts({'node_is_host': True}, sinfo('sinfo-nodes-features-22.05.txt'))
    assert place.choose_pair(where, 'different-hosts') == ('mdxnode1', 'mdxnode2')
    with pytest.raises(place.Unavailable, match='no physical host has two usable nodes'):
        place.choose_pair(where, 'same-host')


def test_nothing_declared_or_no_feature_leaves_only_loopback():
    nodes = sinfo('sinfo-nodes-nofeatures-22.05.txt')
    assert list(nodes.values()) == [[]]               # "(null)": no feature
    where, why = place.node_hosts(None, nodes)
    assert where == {} and 'extras.placement' in why
    where, _ = place.node_hosts({'host_feature': 'host_'}, nodes)
    with pytest.raises(place.Unavailable, match='fewer than two physical hosts.*none known'):
        place.choose_pair(where, 'different-hosts')
    with pytest.raises(ValueError, match='two-nodes'):
        place.choose_pair(where, 'two-nodes')


def test_pairs_are_placed_as_figure_5_all_on_one_host_or_servers_and_clients_apart():
    '''Takahashi et al.'s Figure 5: N pairs all on one host, or N servers on one host and N
    clients on another; the first hosts that hold them.'''
    where, _ = place.node_hosts({'host_feature': 'host_'},
                                sinfo('sinfo-nodes-features-22.05.txt'))
    assert place.choose_groups(where, 'same-host', 1) == (['mdxnode1'], ['mdxnode2'])
    assert place.choose_groups(where, 'different-hosts', 1) == (['mdxnode1'], ['mdxnode3'])
    with pytest.raises(place.Unavailable, match=r'no physical host has 4 usable nodes for 2 '
                       r'pair\(s\) \(ns-host-1: mdxnode1, mdxnode2; ns-host-2: mdxnode3\)'):
        place.choose_groups(where, 'same-host', 2)
    with pytest.raises(place.Unavailable, match=r'fewer than two physical hosts have 2 usable'):
        place.choose_groups(where, 'different-hosts', 2)
    # four nodes a host: two hosts hold four different-hosts pairs, one host two same-host
    four = {f'mdxnode{i}': f'h{(i + 3) // 4}' for i in range(1, 9)}
    assert place.choose_groups(four, 'different-hosts', 4) == (
        ['mdxnode1', 'mdxnode2', 'mdxnode3', 'mdxnode4'],
        ['mdxnode5', 'mdxnode6', 'mdxnode7', 'mdxnode8'])
    assert place.choose_groups(four, 'same-host', 2) == (['mdxnode1', 'mdxnode2'],
                                                         ['mdxnode3', 'mdxnode4'])
    with pytest.raises(ValueError, match='loopback'):
        place.choose_groups(four, 'loopback', 1)


def test_several_nodes_are_spread_one_a_host_or_the_reason_names_the_hosts():
    '''IOR across VMs and warp's client VMs as the paper ran them: each on its own host.'''
    where, _ = place.node_hosts({'host_feature': 'host_'},
                                sinfo('sinfo-nodes-features-22.05.txt'))
    assert place.choose_spread(where, 2) == ['mdxnode1', 'mdxnode3']
    with pytest.raises(place.Unavailable, match=r'3 nodes on different hosts need 3 hosts with '
                       r'a usable node, 2 have one \(ns-host-1: mdxnode1, mdxnode2; '
                       r'ns-host-2: mdxnode3\)'):
        place.choose_spread(where, 3)
    drained, _ = place.node_hosts({'host_feature': 'host_'},
                                  sinfo('sinfo-nodes-features-drained-22.05.txt'))
    assert place.choose_spread(drained, 2) == ['mdxnode1', 'mdxnode3']


def test_a_spread_run_goes_on_distinct_hosts_or_says_why_not():
    '''Issue 43, item 4. Hosts declared and known: one node a host. A host_feature that no
    usable node carries: Unavailable (the check skips, saying so), not any nodes. Hosts not
    declared, or Slurm not asked (a dry run elsewhere): any nodes, the record saying so.'''
    from mdxbench import placement as place

    tagged = {'n1': ['host_a'], 'n2': ['host_a'], 'n3': ['host_b'], 'n4': ['host_c']}
    nodes, hosts, how = place.spread({'host_feature': 'host_'}, tagged, 3)
    assert nodes == ['n1', 'n3', 'n4'] and hosts == {'n1': 'a', 'n3': 'b', 'n4': 'c'}
    untagged = {n: [] for n in tagged}
    with pytest.raises(place.Unavailable, match='declares its hosts .* none of its usable'):
        place.spread({'host_feature': 'host_'}, untagged, 3)
    with pytest.raises(place.Unavailable, match='need 4 hosts'):
        place.spread({'host_feature': 'host_'}, tagged, 4)
    nodes, _, how = place.spread({}, untagged, 3)
    assert nodes is None and how.startswith('not declared: ')
    assert place.spread({'host_feature': 'host_'}, None, 3)[0] is None
    assert place.spread({'host_feature': 'host_'}, {}, 3)[0] is None
