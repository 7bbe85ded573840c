'''The JSON lines of ``checks/apps/src/pds_tpch.py``: per-library, per-query seconds, with the
answers cross-checked between libraries (same row count, checksums within 1e-6) so that
a fast wrong answer fails.'''
import json

from . import ParseError, require

REL_TOL = 1e-6


def parse(text, libraries=None, queries=None):
    require(text and text.strip(), 'PDS output is empty')
    recs, versions = [], None
    for n, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line.startswith('{'):
            continue

        try:
            obj = json.loads(line)
        except json.JSONDecodeError as err:
            raise ParseError(f'PDS output line {n}: invalid JSON ({err.msg}): truncated?') from None

        if 'pds_versions' in obj:
            versions = obj['pds_versions']
        else:
            require({'library', 'query', 'seconds', 'rows', 'checksum'} <= obj.keys(),
                    f'PDS output line {n}: expected library, query, seconds, rows, checksum')
            recs.append(obj)

    require(versions is not None, 'PDS output has no {"pds_versions": ...} line')
    libraries = libraries or list(dict.fromkeys(r['library'] for r in recs))
    queries = queries or sorted({r['query'] for r in recs})
    got = {(r['library'], r['query']): r for r in recs}
    missing = [f'{lib} Q{q}' for lib in libraries for q in queries if (lib, q) not in got]
    require(not missing, f'PDS output lacks {", ".join(missing)}: a library failed or the run stopped')
    out = {'version': ' '.join(f'{k}-{v}' for k, v in sorted(versions.items())),
           'versions': versions}
    for q in queries:
        ref_lib = libraries[0]
        ref = got[(ref_lib, q)]
        for lib in libraries[1:]:
            r = got[(lib, q)]
            require(r['rows'] == ref['rows'],
                    f'Q{q}: {lib} returned {r["rows"]} rows, {ref_lib} {ref["rows"]}: wrong answer')
            scale = max(abs(ref['checksum']), 1.0)
            require(abs(r['checksum'] - ref['checksum']) <= REL_TOL * scale,
                    f'Q{q}: {lib} checksum {r["checksum"]!r} differs from {ref_lib} '
                    f'{ref["checksum"]!r}: wrong answer')

    for lib in libraries:
        total = 0.0
        for q in queries:
            out[f'{lib}_q{q}'] = got[(lib, q)]['seconds']
            total += got[(lib, q)]['seconds']

        out[f'{lib}_total'] = total

    return out
