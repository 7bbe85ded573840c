'''The output of ``scripts/per-gpu.sh``: one run of a benchmark per GPU, each between
``== mdxbench: GPU i ==`` and ``== mdxbench: GPU i exit RC ==``. Each GPU's part is parsed
by the benchmark's own parser; the figures come back as ``gpu<i>_<key>``.'''
import re

from . import ParseError, require

_PART = re.compile(r'^== mdxbench: GPU (\d+) ==\n(.*?)^== mdxbench: GPU \1 exit (\d+) ==$',
                   re.M | re.S)


def split(text):
    '''``{gpu index: (exit code, its output)}`` in order; every GPU 0..N-1 must be there.'''
    require(text and text.strip(), 'per-GPU output is empty')
    parts = {int(m.group(1)): (int(m.group(3)), m.group(2)) for m in _PART.finditer(text)}
    require(parts, 'no "== mdxbench: GPU i ==" ... "exit RC ==" part: not the output of '
            'scripts/per-gpu.sh, or it stopped in its first run')
    started = [int(i) for i in re.findall(r'^== mdxbench: GPU (\d+) ==$', text, re.M)]
    unended = sorted(set(started) - set(parts))
    require(not unended, f'GPU {", ".join(map(str, unended))}: its run started and never '
            'ended (the job killed, or its output cut)')
    require(sorted(parts) == list(range(len(parts))),
            f'GPUs {sorted(parts)} reported: a run is missing or unterminated (expected 0 .. '
            f'{len(parts) - 1})')
    return parts


def parse(text, parser, keys=None):
    '''``{'gpus': N, 'gpu<i>_<key>': value, ...}`` from ``parser`` applied to each GPU's
    part (``keys``: the parser's keys to keep, default all numeric ones), plus the first
    part's ``version`` and ``devices``, the device each part says it ran on (where the
    parser gives ``device``). A run that failed, or whose output ``parser`` refuses, is an
    error naming the GPU.'''
    parts = split(text)
    out = {'gpus': len(parts), 'devices': []}
    for i, (rc, part) in parts.items():
        try:
            res = parser(part)
        except ParseError as err:
            raise ParseError(f'GPU {i}' + (f' (exit {rc})' if rc else '') + f': {err}') from None
        require(rc == 0, f'GPU {i}: the run exited {rc} after printing its figures')
        out.setdefault('version', res.get('version'))
        if res.get('device'):
            out['devices'].append(res['device'])
        for k, v in res.items():
            if (keys is None and isinstance(v, (int, float))) or (keys and k in keys):
                out[f'gpu{i}_{k}'] = v
    return out
