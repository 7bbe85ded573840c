'''Every MDXBENCH_* setting is declared once, in mdxbench.settings (issue 46): the names the
code and the ci/ scripts read are there (or are site variables of a site file), each
declared name is read somewhere, Python reads them only through settings.get, and the
reference page lists them all.'''
import pathlib
import re

import pytest

from mdxbench import REPO_ROOT, settings

#: Python reading a setting itself rather than through settings.get
DIRECT = re.compile(r'''(?:environ|env|getenv)\s*(?:\.get\(|\[|\()\s*['"]MDXBENCH_''')


def site_variables():
    '''The names the site files declare as placeholders (``${MDXBENCH_...}``).'''
    names = set()
    for f in (REPO_ROOT / 'site-configs' / 'systems').glob('*.yaml'):
        names.update(re.findall(r'\$\{(MDXBENCH_[A-Z0-9_]+)', f.read_text()))
    return names


def test_every_name_read_is_declared_or_a_site_variable():
    undeclared = {n: files for n, files in settings.readers().items()
                  if n not in settings.BY_NAME and n not in site_variables()}
    assert undeclared == {}


def test_every_declared_name_is_read_somewhere():
    found = settings.readers()
    assert [s.name for s in settings.SETTINGS if s.name not in found] == []


def test_names_are_declared_once_with_a_known_area():
    names = [s.name for s in settings.SETTINGS]
    assert len(names) == len(set(names))
    assert all(s.area in settings.AREAS and s.meaning and s.default for s in settings.SETTINGS)


def direct_reads(root=REPO_ROOT):
    here = pathlib.Path(settings.__file__).resolve()
    out = []
    for top in ('reframe/mdxbench', 'postprocess', 'checks', 'site-configs'):
        for f in sorted((root / top).rglob('*.py')):
            if f.resolve() == here:
                continue
            for n, line in enumerate(f.read_text().splitlines(), 1):
                if DIRECT.search(line):
                    out.append(f'{f.relative_to(root)}:{n}: {line.strip()}')
    return out


def test_python_reads_a_setting_only_through_settings_get():
    assert direct_reads() == []


def test_a_direct_read_is_caught(tmp_path):
    (tmp_path / 'postprocess').mkdir()
    (tmp_path / 'postprocess' / 'x.py').write_text(
        "import os\nd = os.environ.get('MDXBENCH_STATE_DIR')\n")
    assert [r.split(':')[1] for r in direct_reads(tmp_path)] == ['2']


def test_get_refuses_an_undeclared_name():
    with pytest.raises(KeyError, match='MDXBENCH_NOPE is not an mdxbench setting'):
        settings.get('MDXBENCH_NOPE', {})
    assert settings.get('MDXBENCH_EVENTS', {'MDXBENCH_EVENTS': ''}, 'x') == 'x'


def test_the_reference_lists_every_setting_with_what_reads_it():
    text = settings.table()
    for s in settings.SETTINGS:
        row = next(ln for ln in text.splitlines() if ln.startswith(f'| `{s.name}` |'))
        assert row.rstrip('| ').split('|')[-1].strip(), f'{s.name}: no reader listed'


def test_a_default_value_is_said_once_and_is_what_the_code_takes():
    '''The Elasticsearch settings' defaults are values of the table (settings.value), the
    docs' default column shows them, get() returns them where the variable is unset, and
    the client's module holds no copy of them (issue 62, item 3).'''
    import pathlib
    from mdxbench import settings
    from mdxbench.post.store import esclient
    for name, want in (('MDXBENCH_ES_URL', 'http://127.0.0.1:9200'),
                       ('MDXBENCH_ES_INDEX_PREFIX', 'mdxbench-perf'),
                       ('MDXBENCH_ES_SHARDS', '1'), ('MDXBENCH_ES_REPLICAS', '0-1'),
                       ('MDXBENCH_ES_PAGE', '10000')):
        assert settings.value(name) == want
        assert settings.BY_NAME[name].default == f'`{want}`'
        assert settings.get(name, {}) == want and settings.get(name, {name: 'x'}) == 'x'
    assert esclient.url_of({}) == 'http://127.0.0.1:9200'
    assert esclient.page_size({}) == 10000
    text = pathlib.Path(esclient.__file__).read_text()
    for literal in ("'http://127.0.0.1:9200'", "'mdxbench-perf'", "'0-1'", "10000)"):
        assert literal not in text, literal
