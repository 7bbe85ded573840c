'''The survivors of the mutation run argued equivalent: ``tests/mutation/equivalent.yaml``
and its one reader.

A mutant that no test fails on is either a hole in the tests or a change no test *can*
see -- the same result by another way (a ``dtype`` an array already has, a comparison at a
tie two measured figures never make, a default spelt out). The second kind is argued, one
mutant at a time, in the data file::

    reasons:
      typed:
        title: the array is already of that type
        text: ...why no input can tell...
    mutants:
      mdxbench.post.analysis.past:
        x_figures__mutmut_10: {change: 'np.asarray(starts, )', why: typed}

``change`` is a piece of the mutant's new code, as mutmut shows it (a changed line, with
the unchanged ones around it where the change alone is a bracket): mutmut numbers a
function's mutants anew when the function changes, so an argument whose ``change`` is not
in the mutant of that name any more is *stale* -- reported, and the mutant counted as not
argued, never as equivalent by a name that now means another change.

``tests/mutation/run.py`` scores each module on the mutants not argued equivalent (issue
58: at least 90% of them killed); the reference's page of arguments
(``docs/testing.md``) is :func:`markdown` of this file, written by ``docs/conf.py``.'''
import pathlib
import re

import yaml

FILE = pathlib.Path(__file__).with_name('equivalent.yaml')
#: mutmut's name of a mutant within its module: x_<function>__mutmut_<n> or
#: xǁ<Class>ǁ<method>__mutmut_<n>
NAME = re.compile(r'^x(_[A-Za-z_]\w*|ǁ\w+ǁ\w+)__mutmut_\d+$')


class Argued:
    '''The arguments of the file: ``reasons`` {key: (title, text)}, ``mutants`` {full mutant
    name: (change, reason key)}.'''
    def __init__(self, reasons, mutants, path=FILE):
        self.reasons, self.mutants, self.path = reasons, mutants, path

    def judge(self, mutant, diff):
        '''``'argued'`` where the mutant is argued equivalent and its change is found in the
        mutant's new code, touching a changed line (the diff's unchanged lines around it may
        be part of it); ``'stale'`` where it is not (the name is another change now); None
        where the mutant is not argued.'''
        if mutant not in self.mutants:
            return None
        change = _squeeze(self.mutants[mutant][0])
        text, changed = '', []
        for line in diff.splitlines():
            if line.startswith(('+++', '---', '@@', '#', '-')) or not line:
                continue
            words = _squeeze(line[1:])
            if text and words:
                text += ' '
            if line.startswith('+'):
                changed.append((len(text), len(text) + len(words)))
            text += words
        at = text.find(change)
        while at >= 0:
            if any(a < at + len(change) and at < b for a, b in changed):
                return 'argued'
            at = text.find(change, at + 1)
        return 'stale'


def _squeeze(text):
    return ' '.join(text.split())


def load(path=FILE):
    '''The arguments of ``path``; a malformed entry is refused, naming it.'''
    path = pathlib.Path(path)
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as e:
        raise ValueError(f'{path}: not YAML: {e}') from None
    if not isinstance(data, dict) or set(data) != {'reasons', 'mutants'}:
        raise ValueError(f'{path}: wants the keys reasons and mutants, has '
                         f'{sorted(data) if isinstance(data, dict) else type(data).__name__}')
    reasons = {}
    for key, r in (data['reasons'] or {}).items():
        if not isinstance(r, dict) or set(r) != {'title', 'text'} or \
                not all(isinstance(v, str) and v.strip() for v in r.values()):
            raise ValueError(f'{path}: reasons.{key}: wants a title and a text, both words')
        reasons[key] = (r['title'].strip(), _squeeze(r['text']))
    mutants, used = {}, set()
    for module, entries in (data['mutants'] or {}).items():
        if not re.fullmatch(r'mdxbench(\.\w+)+', str(module)):
            raise ValueError(f'{path}: mutants.{module}: not a module of mdxbench')
        for name, entry in (entries or {}).items():
            where = f'{path}: mutants.{module}.{name}'
            if not NAME.match(str(name)):
                raise ValueError(f"{where}: not a mutmut mutant's name (x_f__mutmut_N)")
            if not isinstance(entry, dict) or set(entry) != {'change', 'why'}:
                raise ValueError(f'{where}: wants change and why')
            if not isinstance(entry['change'], str) or not entry['change'].strip():
                raise ValueError(f'{where}: change: wants a piece of the mutant\'s new code')
            if entry['why'] not in reasons:
                raise ValueError(f"{where}: why: {entry['why']!r} is none of the reasons "
                                 f'({", ".join(sorted(reasons))})')
            mutants[f'{module}.{name}'] = (entry['change'], entry['why'])
            used.add(entry['why'])
    unused = sorted(set(reasons) - used)
    if unused:
        raise ValueError(f'{path}: reasons no mutant gives: {", ".join(unused)}')
    return Argued(reasons, mutants, path)


def markdown(argued):
    '''The arguments as the reference shows them: per module, each mutant, its change and
    why; then each reason's text.'''
    out = []
    by_module = {}
    for name, (change, why) in argued.mutants.items():
        module, _, short = name.rpartition('.')
        by_module.setdefault(module, []).append((short, change, why))
    for module in sorted(by_module):
        rows = sorted(by_module[module], key=lambda r: _order(r[0]))
        out += [f'**`{module}`** ({len(rows)})', '', '| mutant | its change | why |',
                '|---|---|---|']
        for short, change, why in rows:
            code = _squeeze(change).replace('|', '\\|')
            out.append(f'| `{short}` | `{code}` | {argued.reasons[why][0]} |')
        out.append('')
    out += ['**The reasons**', '']
    for key in sorted(argued.reasons, key=lambda k: argued.reasons[k][0].lower()):
        title, text = argued.reasons[key]
        out.append(f'* *{title}*: {text}')
    return '\n'.join(out) + '\n'


def _order(short):
    head, _, n = short.rpartition('__mutmut_')
    return head, int(n)
