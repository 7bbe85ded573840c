'''docs/papers.md, the papers' figures one by one, held to the checks and the references
(issue 43): every row names a check that exists (or says that none measures the figure and
why), the condition it runs under, a reference or why there is none, and the figure's
unit; every reference taken from a paper appears in a row, with its value.'''
import pathlib
import re

import pytest
import yaml

from mdxbench import catalog, references

ROOT = pathlib.Path(__file__).resolve().parents[2]
DOC = ROOT / 'docs' / 'papers.md'
COLUMNS = ['figure', 'value', 'check and condition', 'reference', 'how we differ']
#: what a figure is measured in (the papers' own units, and a ratio or a speed-up)
UNITS = re.compile(r'GFLOPS|GB/s|GiB/s|MiB/s|MB/s|Gbit/s|µs|\bus\b|KIOPS|\bin s\b|'
                   r'×|speed-up|\bcount\b|page faults|images/s')
NOT_MEASURED = ('not reproduced', 'not implemented')
#: every figure and table of the three papers, as data
FIGURES = pathlib.Path(__file__).with_name('papers_figures.yaml')
ROMAN = ['I', 'II', 'III', 'IV', 'V', 'VI', 'VII', 'VIII', 'IX', 'X']


def rows(text):
    '''[(line number, {column: cell})] of every table row under a paper's heading whose
    header is COLUMNS.'''
    out, header = [], None
    for n, line in enumerate(text.splitlines(), 1):
        if not line.startswith('|'):
            header = None if not line.strip() else header
            continue
        cells = [c.strip() for c in line.strip().strip('|').split('|')]
        if header is None:
            header = cells
            continue
        if set(''.join(cells)) <= set('-: '):
            continue
        if [h.split(' and ')[0] for h in header[:3]] != ['figure', 'value', 'check']:
            continue
        if len(cells) != len(header):
            raise AssertionError(f'{DOC}:{n}: {len(cells)} cells, the header has {len(header)}')
        out.append((n, dict(zip(COLUMNS, cells))))
    return out


def named(cell):
    '''The backticked check-like names of a cell (CamelCase).'''
    return re.findall(r'`([A-Z][A-Za-z0-9]+)`', cell)


def targets(cell):
    return re.findall(r'`([a-z][\w-]*:[\w-]+)`', cell)


def problems(text, checks, entries):
    '''What is wrong with the tables of ``text``: a list of "FILE:LINE: ..." messages.'''
    errors = []
    table = rows(text)
    if not table:
        return [f'{DOC}: no table of figures found']
    for n, r in table:
        where = f"{DOC}:{n} ({r['figure'][:50]})"
        names = named(r['check and condition']) + named(r['reference'])
        for name in names:
            if name not in checks:
                errors.append(f'{where}: names {name}, which is no check in checks/')
        own = [c for c in named(r['check and condition']) if c in checks]
        cond = re.sub(r'`[^`]*`', '', r['check and condition']).strip(' ,;:')
        if not own:
            if not r['check and condition'].startswith(NOT_MEASURED):
                errors.append(f'{where}: no check measures it, and the row does not say '
                              f'"not reproduced" or "not implemented"')
            elif len(r['how we differ']) < 30:
                errors.append(f'{where}: not measured, and no reason given')
        elif len(cond) < 8:
            errors.append(f'{where}: {own[0]} without the condition it runs under')
        ref = r['reference']
        if targets(ref):
            for t in targets(ref):
                if not any(e['target'] == t and e['check'] in own + named(ref)
                           for e in entries):
                    errors.append(f'{where}: reference {t} of {own} is not in '
                                  f'site-configs/references')
        elif not (ref.startswith('none:') or ref.startswith('(a ') or
                  (ref.startswith('none') and len(r['how we differ']) >= 30)):
            errors.append(f'{where}: no reference, and no reason why there is none')
        # a conformance fact, or a measurement of ours that no paper has, has no figure
        if not UNITS.search(r['value']) and not ref.startswith('(a conformance') and \
                not r['figure'].startswith('(none)'):
            errors.append(f"{where}: the figure's unit is not given ({r['value'][:60]!r})")
    # every reference from a paper is a row of the table, with its value
    for e in entries:
        if not re.match(r'\d{3}\b', str(e['source'])):
            continue                    # measured by us, not a paper's figure
        values = {f"{e['value']:g}", f"{e['value']:,g}"}
        if e['unit'] == 'MiB/s':
            values.add(f"{e['value'] / 1024:g}")
        hits = [r for _, r in table
                if e['check'] in named(r['check and condition']) + named(r['reference'])
                and e['target'] in targets(r['reference'] + r['check and condition'])
                and any(re.search(r'(?<![\d.,])' + re.escape(v) + r'(?![\d])',
                                  r['value'] + r['reference']) for v in values)]
        if not hits:
            errors.append(f"{DOC}: the reference {e['check']} {e['target']} {e['var']} = "
                          f"{e['value']:g} {e['unit']} ({e['source'][:40]}) is in no row with "
                          f"its check, partition and value")
    return errors


@pytest.fixture(scope='module')
def checks():
    return set(catalog.check_classes())


def test_every_figure_has_its_check_condition_reference_and_unit(checks):
    assert problems(DOC.read_text(), checks, references.load()) == []


@pytest.mark.parametrize('change, message', [
    # a check that does not exist
    (('`OsuLatency` 2 nodes', '`OsuLatencyX` 2 nodes'), 'names OsuLatencyX, which is no check'),
    # a row whose reference column names a partition without such a reference
    (('| `mdx2:vc16m32g`: 55 / 85', '| `laurel:compute`: 55 / 85'), 'reference laurel:compute'),
    # a figure with neither a check nor the words that say none measures it
    (('| `LikwidCacheSweep`: **a different tool**', '| likwid-bench: **a different tool**'),
     'no check measures it'),
    # a reference without its row: the paper's 126 Gbit/s
    (('`aggregate` at 3 and 4 pairs', '`aggregate` at 3 and 4 pairs (dropped)'), None),
    # a figure without its unit
    (('Lustre 416 / 164, gp3 16 / 16 KIOPS |', 'Lustre 416 / 164, gp3 16 / 16 |'),
     "unit is not given"),
])
def test_each_rule_fails_on_a_changed_row(checks, change, message):
    '''Each rule catches the doc it is for: the table with one change fails, saying why.'''
    text = DOC.read_text()
    old, new = change
    assert old in text, old
    errors = problems(text.replace(old, new, 1), checks, references.load())
    if message is None:
        # the aggregate row without its partition: its two references are in no row
        errors = problems(text.replace('`mdx2:vc16m32g` `aggregate`', '`aggregate`', 1), checks,
                          references.load())
        message = 'Iperf3Aggregate mdx2:vc16m32g aggregate = 126'
    assert any(message in e for e in errors), errors


def labels(text):
    '''The figures and tables a cell names: {"Figure 5", "Table II", ...}. "Figs 7-11",
    "Figures 8 and 9", "Fig. 12", "Table III", "Tables 1-3" and lists with commas are
    read; the other version's number in brackets ("[002: 6]") is not.'''
    text = re.sub(r'\[\d{3}:[^\]]*\]', '', text)
    out = set()
    num = r'(?:\d+|[IVX]+)\b'
    for kind, body in re.findall(rf'\b(Fig(?:ure)?s?\.?|Tables?)\s+({num}(?:\s*(?:-|–|,|and)\s*{num})*)',
                                 text):
        name = 'Figure' if kind.startswith('Fig') else 'Table'
        for part in re.split(r'\s*(?:,|and)\s*', body):
            ends = re.split(r'\s*[-–]\s*', part)
            if ends[0] in ROMAN:
                lo, hi = ROMAN.index(ends[0]), ROMAN.index(ends[-1])
                out |= {f'{name} {ROMAN[k]}' for k in range(lo, hi + 1)}
            else:
                out |= {f'{name} {k}' for k in range(int(ends[0]), int(ends[-1]) + 1)}
    return out


def sections(text):
    '''{heading: its text} of the "## " sections of docs/papers.md.'''
    out, name = {}, None
    for line in text.splitlines():
        if line.startswith('## '):
            name = line[3:].strip()
            out[name] = ''
        elif name:
            out[name] += line + '\n'
    return out


def missing(text, papers):
    '''The figures and tables of ``papers`` (papers_figures.yaml) that docs/papers.md
    does not name under their paper's heading: "paper: Figure N", one a line.'''
    found = sections(text)
    out = []
    for paper in papers:
        body = found.get(paper['heading'])
        if body is None:
            out.append(f"{paper['paper']}: no section '## {paper['heading']}' in {DOC}")
            continue
        named_here = set()
        for n, r in rows(body):
            named_here |= labels(r['figure'])
        for line in body.splitlines():
            if line.startswith('**Not measurements**:'):
                named_here |= labels(line)
        want = {f'Figure {k}' for k in range(1, paper['figures'] + 1)} | \
            {f'Table {t}' for t in paper['tables']}
        out += [f"{paper['paper']}: {label}" for label in sorted(want - named_here)]
    return out


def test_every_figure_and_table_of_the_papers_is_in_the_doc():
    '''Each figure and table of the three papers (papers_figures.yaml, read off their
    captions) is a row of docs/papers.md, or is named among its paper's figures that hold
    no measurement.'''
    papers = yaml.safe_load(FIGURES.read_text())
    assert len(papers) == 3
    assert missing(DOC.read_text(), papers) == []


def test_a_figure_left_out_of_the_doc_is_named():
    '''The doc without Guidi et al.'s Fig. 12 (its row's "Fig. 12" gone), or without the
    mdx I section's list of figures that hold no measurement, fails naming them.'''
    papers = yaml.safe_load(FIGURES.read_text())
    text = DOC.read_text()
    old = 'Figs 13-16, FFT kernel; Fig. 12, its speed-up'
    assert old in text
    assert missing(text.replace(old, 'Figs 13-16, FFT kernel'), papers) == [
        'Guidi et al., 10 Years Later (seeds/004): Figure 12']
    mdx1 = sections(text)['mdx I']
    line = next(x for x in mdx1.splitlines() if x.startswith('**Not measurements**:'))
    gone = missing(text.replace(line, ''), papers)
    assert gone == [f'the mdx I evaluation (seeds/003; 図 1-8, 表 1-3): {x}' for x in
                    ('Figure 1', 'Figure 2', 'Figure 3', 'Figure 4', 'Figure 8', 'Table 1',
                     'Table 2', 'Table 3')], gone


@pytest.mark.parametrize('cell, want', [
    ('Figure 7 [002: 6], IOR one VM', {'Figure 7'}),
    ('Figures 8 and 9 [002: 7 and 8], warp', {'Figure 8', 'Figure 9'}),
    ('Figs 7-11, Table III, N-body', {f'Figure {k}' for k in range(7, 12)} | {'Table III'}),
    ('Table 1, memory, 16 vCPU', {'Table 1'}),
    ('Figures 1-4, 8; Tables 1-3', {'Figure 1', 'Figure 2', 'Figure 3', 'Figure 4',
                                    'Figure 8', 'Table 1', 'Table 2', 'Table 3'}),
    ('Table I (the machines)', {'Table I'}),
    ('sec. 5.1, STREAM Triad', set()),
])
def test_labels_reads_the_ways_the_doc_names_figures(cell, want):
    assert labels(cell) == want
