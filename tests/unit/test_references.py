'''The reference files: every key names a system, partition, check, perf variable and
parameter value that exists; every value has a source and a unit that matches.'''
import pathlib
import re

import pytest
import yaml

from mdxbench import catalog, references, sitecfg

ROOT = pathlib.Path(__file__).resolve().parents[2]
SITE = ROOT / 'site-configs'


@pytest.fixture(scope='module')
def checks():
    return {name: catalog.describe(cls) for name, cls in catalog.check_classes().items()}


def _targets():
    '''{system:partition: its facts} of the site configurations.'''
    out = {}
    for f in sitecfg.system_files(SITE):
        data = sitecfg.load_yaml(f)
        out.update({f"{data['name']}:{p['name']}": (p.get('extras') or {}).get('facts') or {}
                    for p in data['partitions']})

    return out


def validate(entries, checks, targets, bounds=True):
    '''What is wrong with reference entries (``bounds``: they are references, with bounds,
    not a report table's rows).'''
    errors = []
    for e in entries:
        where = f"{e['file']}: {e['key']}"
        if e['check'] not in checks:
            errors.append(f"{where}: no check named {e['check']!r}")
            continue

        info = checks[e['check']]
        if e['target'] not in targets:
            errors.append(f"{where}: no system:partition {e['target']!r}")

        if e['var'] not in info['perf_vars']:
            errors.append(f"{where}: {e['check']} has no perf variable {e['var']!r} "
                          f"(it has {sorted(info['perf_vars'])})")
        else:
            if info['perf_vars'][e['var']] != e['unit']:
                errors.append(f"{where}: unit {e['unit']!r}, the check reports "
                              f"{info['perf_vars'][e['var']]!r}")
            # a run fails a reference only on its worse side: where higher is better, a
            # lower bound below the value (a negative fraction); where lower is better, an
            # upper bound above it. A bound missing there, or on the wrong side of the
            # value, is a reference no run can fail.
            if not bounds:
                pass
            elif info['better'][e['var']] == 'higher':
                if e.get('lower') is None or not e['lower'] < 0:
                    errors.append(f"{where}: higher {e['var']} is better, but the lower "
                                  f"bound is {e.get('lower')!r}: no run can fall below it")
            elif e.get('upper') is None or not e['upper'] > 0:
                errors.append(f"{where}: lower {e['var']} is better, but the upper bound "
                              f"is {e.get('upper')!r}: no run can rise above it")

        for k, v in (e.get('when') or {}).items():
            if k not in info['params']:
                errors.append(f"{where}: {e['check']} has no parameter {k!r}")
            elif str(v) not in map(str, info['params'][k]):
                errors.append(f"{where}: parameter {k}={v!r} is not among "
                              f"{list(info['params'][k])}")

        cond = e.get('conditions') or {}
        for k in info['conditions']:
            if k not in cond:
                errors.append(f"{where}: states no {k!r} condition ({e['check']} figures "
                              f"depend on it)")
        for k, v in cond.items():
            if k in references.RUN_CONDITIONS:
                # met by the run, not the partition: the check must be one that can
                if k not in info['run_conditions']:
                    errors.append(f"{where}: the figure was measured with {k}={v}, which "
                                  f"{e['check']} cannot arrange (no {k!r} in its "
                                  f"run_conditions)")
                continue
            has = references.condition_of(k, targets.get(e['target']), info['fixed_conditions'])
            if e['target'] in targets and has != v:
                who = (f"{e['check']} runs" if k in info['fixed_conditions'] else
                       f"the partition {e['target']} runs")
                errors.append(f"{where}: the figure was measured with {k}={v}, {who} "
                              f"with {k}={has}")

        if not str(e['source']).strip():
            errors.append(f'{where}: empty source')

    return errors


def test_reference_files_name_only_what_exists(checks):
    entries = references.load()
    assert len(entries) >= 20
    assert validate(entries, checks, _targets()) == []


def _sections(text):
    '''{"3.2.2": text of that section (to the next heading)} of a paper's text.'''
    out, current = {}, None
    for line in text.splitlines():
        # a heading: the number, a space, a word (Latin, or the mdx I paper's Japanese)
        m = re.match(r"(\d(?:\.\d)+) (?:[A-Z][A-Za-z]|[^\x00-\x7f])", line)
        if m:
            current = m.group(1)
        if current:
            out[current] = out.get(current, '') + line + '\n'
    return out


def paper_errors(entries, seeds):
    '''What is wrong with the sources of entries taken from the papers: a figure must be
    printed in the paper its source names ("002", or "002/000": either), and in the section
    it names ("sec. 3.2.2"), not only somewhere in it.'''
    errors = []
    for e in entries:
        m = re.match(r'(\d{3}(?:/\d{3})*)', str(e['source']))
        if not m:
            errors.append(f"{e['key']}: source does not name a paper: {e['source']!r}")
            continue
        v = e['value']
        cands = {f'{v:g}'} | ({f'{v / 1024:g}'} if e['unit'] == 'MiB/s' else set())
        sec = re.search(r'sec\. (\d(?:\.\d)+)', str(e['source']))
        texts = []
        for paper in m.group(1).split('/'):
            text = seeds[paper]
            texts.append(_sections(text).get(sec.group(1), '') if sec else text)
        if not any(re.search(r'(?<![\d.])' + re.escape(c) + r'(?!\d)', t)
                   for c in cands for t in texts):
            where = f"section {sec.group(1)} of paper {m.group(1)}" if sec else \
                f"paper {m.group(1)}"
            errors.append(f"{e['key']} = {v} {e['unit']} not in {where}")
    return errors


def _seeds():
    seeds_dir = ROOT.parent / 'shared' / 'seeds'
    if not seeds_dir.is_dir():
        pytest.skip(f'{seeds_dir} is absent (a user\'s clone): the papers are not there')
    return {p.name[:3]: p.read_text() for p in seeds_dir.glob('*.txt')}


def test_every_paper_figure_is_printed_in_its_paper():
    """Each reference taken from a paper (source "NNN ...") is a figure that paper prints:
    its value (or, for MiB/s, the GiB/s the paper gives) is in the text of seeds/NNN_*.txt,
    in the section the source names. A typo in a reference, a figure attributed to the
    wrong paper or section, fails here."""
    entries = references.load()
    assert len(entries) >= 20 and paper_errors(entries, _seeds()) == []


@pytest.mark.parametrize('source,message', [
    ('002 sec. 3.2.3 text: 16 streams', 'not in section 3.2.3 of paper 002'),
    ('003 sec. 3.2.2 text', 'not in section 3.2.2 of paper 003'),
    ('the paper', 'source does not name a paper'),
])
def test_a_figure_cited_from_the_wrong_section_is_caught(source, message):
    e = next(e for e in references.load() if e['check'] == 'Iperf3Throughput')
    errors = paper_errors([dict(e, source=source)], _seeds())
    assert any(message in x for x in errors), errors


@pytest.mark.parametrize('mutate,message', [
    (lambda d: d['BabelStreamOmp'].update({'mdx3:vc16m32g': d['BabelStreamOmp']['mdx2:vc16m32g']}),
     "no system:partition 'mdx3:vc16m32g'"),
    (lambda d: d['BabelStreamOmp']['mdx2:vc16m32g'][0].update(var='triads'),
     "has no perf variable 'triads'"),
    (lambda d: d.update(BabelStream=d.pop('BabelStreamOmp')), "no check named 'BabelStream'"),
    (lambda d: d['Iperf3Throughput']['mdx2:vc16m32g'][0]['when'].update(streams=3),
     'parameter streams=3 is not among'),
    (lambda d: d['FioTarget']['mdx2:vc16m32g'][0]['when'].update(depth=3),
     "has no parameter 'depth'"),
    (lambda d: d['MklLinpackShm']['mdx2:vc16m32g'][0].update(unit='TFLOPS'),
     "unit 'TFLOPS', the check reports 'GFLOPS'"),
    # a latency's bound put on the better side: a slower round trip would pass
    (lambda d: d['NetperfTcpRR']['mdx2:vc16m32g'][0].update(lower=-0.25, upper=None),
     "lower mean_rtt is better, but the upper bound is None"),
    (lambda d: d['NetperfTcpRR']['mdx2:vc16m32g'][0].update(upper=-0.25),
     "lower mean_rtt is better, but the upper bound is -0.25"),
    (lambda d: d['MklLinpackShm']['mdx2:vc16m32g'][0].update(lower=None, upper=0.1),
     "higher gflops is better, but the lower bound is None"),
    (lambda d: d['MklLinpackShm']['mdx2:vc16m32g'][0].update(lower=0.1),
     "higher gflops is better, but the lower bound is 0.1"),
    # the paper's 74 us is without multiqueue; the mdx2 partitions run with it
    (lambda d: d['NetperfTcpRR']['mdx2:vc16m32g'][0].update(value=74,
                                                            conditions={'multiqueue': False}),
     'measured with multiqueue=False, the partition mdx2:vc16m32g runs with multiqueue=True'),
    (lambda d: d['NetperfTcpRR']['mdx2:vc16m32g'][0].pop('conditions'),
     "states no 'multiqueue' condition"),
    # the one-queue series turns multiqueue off itself, whatever the partition runs
    (lambda d: d['Iperf3OneQueue']['mdx2:vc16m32g'][0]['conditions'].update(multiqueue=True),
     'measured with multiqueue=True, Iperf3OneQueue runs with multiqueue=False'),
    # distinct hosts are a run's: a one-node check cannot arrange them; the AWS figures are
    # of every vCPU, which the partition's facts must say
    (lambda d: d['FioTarget']['mdx2:vc16m32g'][0].update(conditions={'distinct_hosts': True}),
     'FioTarget cannot arrange'),
    (lambda d: d['MklLinpackShm']['mdx2:vc16m32g'][0].update(conditions={'all_vcpus': True}),
     'measured with all_vcpus=True, the partition mdx2:vc16m32g runs with all_vcpus=False'),
])
def test_injected_errors_are_caught(tmp_path, checks, mutate, message):
    data = yaml.safe_load((SITE / 'references' / 'papers.yaml').read_text())
    mutate(data)
    (tmp_path / 'papers.yaml').write_text(yaml.safe_dump(data))
    errors = validate(references.load(tmp_path), checks, _targets())
    assert any(message in e for e in errors), errors


@pytest.mark.parametrize('entry,message', [
    ({'var': 'x', 'value': 1, 'unit': 'u'}, "missing ['source']"),
    ({'var': 'x', 'value': -1, 'unit': 'u', 'source': 's'}, 'positive number'),
    ({'var': 'x', 'value': 1, 'unit': 'u', 'source': 's', 'lower': 'low'}, 'fraction'),
    ({'var': 'x', 'value': 1, 'unit': 'u', 'source': 's', 'tolerance': 1}, 'unknown field'),
    ({'var': 'x', 'value': 1, 'unit': 'u', 'source': 's', 'conditions': {'multique': True}},
     "conditions: expected true/false for any of ['all_vcpus', 'distinct_hosts', 'gpu_p2p', 'multiqueue']"),
    ({'var': 'x', 'value': 1, 'unit': 'u', 'source': 's', 'conditions': {'multiqueue': 'on'}},
     'conditions: expected true/false'),
])
def test_malformed_entries_name_file_and_key(tmp_path, entry, message):
    (tmp_path / 'r.yaml').write_text(yaml.safe_dump({'C': {'s:p': [entry]}}))
    with pytest.raises(references.ReferenceError, match=r'r.yaml: C.s:p\[0\]'):
        try:
            references.load(tmp_path)
        except references.ReferenceError as err:
            assert message in str(err)
            raise


def test_for_check_selects_by_parameters():
    ref = references.for_check('Iperf3Throughput', {'streams': 16, 'placement': 'different-hosts'})
    assert ref['mdx2:vc16m32g']['throughput'] == (80.4, -0.2, None, 'Gbit/s')
    assert references.for_check('Iperf3Throughput', {'streams': 2, 'placement': 'different-hosts'}) == {}
    # the paper's two placements have their own figures: 55 us on one host, 85 us across
    rtt = {p: references.for_check('NetperfTcpRR', {'placement': p})['mdx2:vc16m32g']['mean_rtt'][0]
           for p in ('same-host', 'different-hosts')}
    assert rtt == {'same-host': 55, 'different-hosts': 85}
    assert references.for_check('NetperfTcpRR', {'placement': 'loopback'}) == {}


def test_report_tables_name_only_what_exists(checks):
    '''postprocess/site/tables.yaml: every row's check, perf variable and parameter values (its
    own and its columns') exist, and every column is a known system:partition.'''
    tables = yaml.safe_load((ROOT / 'postprocess' / 'site' / 'tables.yaml').read_text())
    targets = _targets()
    entries = []
    for t in tables:
        for col in t['columns']:
            for row in t['rows']:
                unit = checks.get(row['check'], {'perf_vars': {}})['perf_vars'].get(row['var'])
                for m in [row] + (row.get('also') or []):
                    info = checks.get(m['check'], {'perf_vars': {}})
                    # a stand-in measures the same quantity: the same unit
                    assert info['perf_vars'].get(m['var']) in (unit, None), (row, m)
                    entries.append({
                        'file': 'postprocess/site/tables.yaml', 'key': f"{t['id']}: {row['label']}",
                        'check': m['check'], 'target': col['target'], 'var': m['var'],
                        'unit': info['perf_vars'].get(m['var']), 'source': t['title'],
                        # a stand-in has its own parameters, not the row's
                        'when': {**(col.get('params') or {}), **(m.get('params') or {})},
                    })
    assert len(entries) >= 20
    assert validate(entries, checks, targets, bounds=False) == []


def test_a_run_that_cannot_meet_a_run_condition_is_judged_without_that_reference():
    '''The paper's 3-client GET (13,056 MiB/s) was measured with each client VM on a host of
    its own (distinct_hosts): a run on nodes whose hosts are not known is judged without
    it; the other partitions' references, and runs that met it, keep theirs.'''
    params = {'target': 's3ds', 'op': 'get', 'clients': 3}
    ref = references.for_check('WarpMultiClient', params)
    assert ref['mdx2:vc16m32g']['throughput'][0] == 13056
    out, dropped = references.without_condition(ref, 'WarpMultiClient', 'mdx2:vc16m32g',
                                                params, 'distinct_hosts')
    assert dropped == ['throughput'] and 'mdx2:vc16m32g' not in out
    assert ref['mdx2:vc16m32g']['throughput'][0] == 13056          # the original untouched
    # a reference without the condition stays (IOR's one-VM figures)
    ior = {'num_nodes': 1, 'target': 'lustre', 'odirect': True, 'ranks_per_node': 1,
           'access': 'file-per-process'}
    ref = references.for_check('Ior', ior)
    assert references.without_condition(ref, 'Ior', 'mdx2:vc16m32g', ior,
                                         'distinct_hosts') == (ref, [])


@pytest.mark.parametrize('bounds, refused', [
    ({'lower': None, 'upper': 0.25}, None),
    ({'lower': -0.25, 'upper': None}, 'upper: None, but lower mean_rtt is better'),
    ({'lower': None, 'upper': -0.25}, 'upper: -0.25, but lower mean_rtt is better'),
    ({'lower': -0.1, 'upper': 0.25}, None),
])
def test_a_latencys_bound_must_be_above_its_value(bounds, refused):
    '''What ReFrame is given when a check class is defined (references.check_against): for a
    figure where lower is better, the bound that can fail a run is the upper one.'''
    entry = {'check': 'NetperfTcpRR', 'var': 'mean_rtt', 'target': 'mdx2:vc16m32g',
             'file': 'papers.yaml', 'key': 'NetperfTcpRR.mdx2:vc16m32g[0]', 'value': 85,
             'unit': 'us', **bounds}
    table = {'mean_rtt': ('mean_rtt', 'us', 'lower')}
    if refused is None:
        references.check_against('NetperfTcpRR', table, [entry])
        return
    with pytest.raises(references.ReferenceError) as err:
        references.check_against('NetperfTcpRR', table, [entry])
    assert str(err.value).startswith(
        'papers.yaml: NetperfTcpRR.mdx2:vc16m32g[0] (check NetperfTcpRR, system mdx2:vc16m32g).')
    assert refused in str(err.value), err.value


def test_each_figure_a_run_is_judged_by_names_its_source():
    '''What the perflog records beside a reference: the source of the entry that applies
    to this case on this partition -- not another placement's, nor another partition's.'''
    across = references.sources_for('Iperf3Throughput',
                                    {'streams': 16, 'placement': 'different-hosts'},
                                    'mdx2:vc16m32g')
    assert across == {'throughput': '002 sec. 3.2.2 text: 16 streams across hosts with '
                                    'virtio multiqueue'}
    same = references.sources_for('Iperf3Throughput', {'streams': 16, 'placement': 'same-host'},
                                  'mdx2:vc16m32g')
    assert same['throughput'].startswith('000 sec. 3.2.2 text: 16 streams between two VMs')
    one_q = references.sources_for('Iperf3Throughput',
                                   {'streams': 1, 'placement': 'different-hosts'},
                                   'mdx2:vc16m32g-1q')
    assert one_q['throughput'].endswith('one queue (Figure 3)')
    assert references.sources_for('Iperf3Throughput',
                                  {'streams': 1, 'placement': 'different-hosts'},
                                  'mdx2:vc16m32g') == {}
    assert references.sources_for('NoSuchCheck', {}, 'mdx2:vc16m32g') == {}


def _entry(**kw):
    e = {'check': 'NetperfTcpRR', 'var': 'mean_rtt', 'target': 'mdx2:vc16m32g',
         'file': 'papers.yaml', 'key': 'NetperfTcpRR.mdx2:vc16m32g[0]', 'value': 85,
         'unit': 'us', 'lower': None, 'upper': 0.25}
    e.update(kw)
    return e


TABLE = {'mean_rtt': ('mean_rtt', 'us', 'lower'), 'throughput': ('tp', 'Gbit/s', 'higher')}
WHERE = 'papers.yaml: NetperfTcpRR.mdx2:vc16m32g[0] (check NetperfTcpRR, system mdx2:vc16m32g)'


@pytest.mark.parametrize('entry, message', [
    (_entry(unit='ms'), f"{WHERE}.unit: 'ms', but NetperfTcpRR reports mean_rtt in 'us'"),
    (_entry(upper=None), f"{WHERE}.upper: None, but lower mean_rtt is better: a run is worse "
                         "on the upper side, whose bound must be set (upper: 0.1 is 10%)"),
    (_entry(upper=-0.01), f"{WHERE}.upper: -0.01, but lower mean_rtt is better: a run is "
                          "worse on the upper side, whose bound must be set (upper: 0.1 is 10%)"),
    (_entry(var='throughput', unit='Gbit/s', lower=0.01, upper=None),
     f"{WHERE}.lower: 0.01, but higher throughput is better: a run is worse on the lower "
     "side, whose bound must be set (lower: -0.1 is 10%)"),
])
def test_a_bad_entry_is_named_with_what_to_write(entry, message):
    '''Each refusal word for word: the file, the entry, the check and system, the field,
    and the fix. (A bound of 0 is a bound: no run worse than the figure passes.)'''
    # entries of other checks and other variables, bad as they are, are not this check's
    others = [_entry(check='Other', unit='furlongs'), _entry(var='not_in_table', unit='x')]
    with pytest.raises(references.ReferenceError) as err:
        references.check_against('NetperfTcpRR', TABLE, others + [entry])
    assert str(err.value) == message
    references.check_against('NetperfTcpRR', TABLE, others)
    references.check_against('NetperfTcpRR', TABLE, [
        _entry(upper=0.0), _entry(var='throughput', unit='Gbit/s', lower=0.0, upper=None)])


def test_the_site_references_are_checked_when_none_are_given(tmp_path, monkeypatch):
    '''Without entries, check_against reads the site's (``MDXBENCH_REFERENCE_DIR``).'''
    (tmp_path / 'r.yaml').write_text(
        'NetperfTcpRR:\n  mdx2:vc16m32g:\n    - {var: mean_rtt, value: 85, unit: us, '
        'lower: -0.1, upper: null, source: s}\n')
    monkeypatch.setenv('MDXBENCH_REFERENCE_DIR', str(tmp_path))
    with pytest.raises(references.ReferenceError, match=r'r.yaml: NetperfTcpRR.mdx2:vc16m32g'
                                                        r'\[0\] .*\.upper: None'):
        references.check_against('NetperfTcpRR', TABLE)


def test_the_reference_directory_from_an_environment_given_or_the_repository(tmp_path,
                                                                            monkeypatch):
    monkeypatch.delenv('MDXBENCH_REFERENCE_DIR', raising=False)
    from mdxbench import REPO_ROOT          # the installed package's repository

    assert references.reference_dir() == REPO_ROOT / 'site-configs' / 'references'
    assert references.reference_dir({'MDXBENCH_REFERENCE_DIR': str(tmp_path)}) == tmp_path


def test_a_condition_is_the_partitions_unless_the_check_fixes_it():
    facts = {'nic': {'queues': 16}}          # a partition's facts: 16 queue pairs
    assert references.condition_of('multiqueue', {'nic': {'queues': 1}}) is False
    assert references.condition_of('multiqueue', facts) is True
    assert references.condition_of('multiqueue', facts, None) is True
    assert references.condition_of('multiqueue', facts, {}) is True
    assert references.condition_of('multiqueue', facts, {'multiqueue': False}) is False


def test_a_partition_without_references_keeps_none_when_a_condition_is_unmet():
    params = {'target': 's3ds', 'op': 'get', 'clients': 3}
    ref = references.for_check('WarpMultiClient', params)
    assert references.without_condition(ref, 'WarpMultiClient', 'laurel:compute', params,
                                         'distinct_hosts') == (ref, [])


def test_entries_given_are_the_ones_used():
    '''Given entries (a site's other file, a test's) are used, not the site's own.'''
    params = {'streams': 16, 'placement': 'different-hosts'}
    assert references.sources_for('Iperf3Throughput', params, 'mdx2:vc16m32g', []) == {}
    ref = references.for_check('WarpMultiClient', {'target': 's3ds', 'op': 'get', 'clients': 3})
    assert references.without_condition(ref, 'WarpMultiClient', 'mdx2:vc16m32g',
                                        {'target': 's3ds', 'op': 'get', 'clients': 3},
                                        'distinct_hosts', []) == (ref, [])
