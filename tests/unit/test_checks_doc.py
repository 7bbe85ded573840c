'''docs/checks.md, the table of checks, held to checks/ (issue 62, item 5): every check
class has its row, naming the file it is defined in, and every row names a check that
exists -- a check added without its row, or a row left for a check removed, fails here.'''
import pathlib
import re

from mdxbench import catalog

ROOT = pathlib.Path(__file__).resolve().parents[2]
DOC = ROOT / 'docs' / 'checks.md'


def rows(text):
    '''{class name: the file its row names} of the rows "| `Name` (area/file.py) | ..." (or
    "| `One`, `Two` (area/file.py) | ...": checks of one file described together).'''
    out = {}
    for names, where in re.findall(r'^\| ((?:`[A-Z]\w+`(?:, )?)+) \(([\w/]+\.py)\) \|',
                                   text, re.M):
        out.update({name: where for name in re.findall(r'`(\w+)`', names)})
    return out


def problems(text, classes):
    listed = rows(text)
    out = [f'{DOC}: no row for {name} ({where})' for name, where in sorted(classes.items())
           if name not in listed]
    out += [f'{DOC}: the row of {name} names {listed[name]}, the class is in {where}'
            for name, where in sorted(classes.items())
            if name in listed and listed[name] != where]
    out += [f'{DOC}: a row for {name}, which is no check in checks/' for name in sorted(listed)
            if name not in classes]
    return out


def defined_in():
    '''{check class: its file under checks/} of the classes ReFrame registers (the
    library's bases, whose names start with an underscore, have none).'''
    out = {}
    for name, cls in catalog.check_classes().items():
        if name.startswith('_'):
            continue
        path = pathlib.Path(cls.__module__.removeprefix('mdxbench_checks.').replace('.', '/'))
        out[name] = f'{path}.py'
    return out


def test_every_check_has_its_row_and_every_row_a_check():
    classes = defined_in()
    assert len(classes) >= 30
    assert problems(DOC.read_text(), classes) == []


def test_a_check_without_its_row_and_a_row_without_its_check_are_named():
    classes = defined_in()
    text = DOC.read_text()
    row = next(line for line in text.splitlines() if line.startswith('| `IorS3` ('))
    assert problems(text.replace(row + '\n', ''), classes) == [
        f'{DOC}: no row for IorS3 (storage/ior_s3.py)']
    assert problems(text, dict(classes, Gone='x/gone.py')) == [
        f'{DOC}: no row for Gone (x/gone.py)']
    del classes['IorS3']
    assert problems(text, classes) == [
        f'{DOC}: a row for IorS3, which is no check in checks/']
