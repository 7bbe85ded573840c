'''What one ReFrame session did, as an operator reads it at the end of a run: cases passed,
failed and skipped, the skips grouped by reason with their counts (not one line per case),
and the minutes each area of ``checks/`` took.

ReFrame's JSON report has every case's result, file and times, but no skip reason; its
output has the reason on each ``[ SKIP ]`` line (``[ SKIP ] (i/N) NAME /hash @part+env
[reason]``). Reasons that differ only in their figures (``needs 2`` / ``needs 8`` nodes, a
PATH) are one group. Pure functions over the report and the output text.'''
import pathlib
import re

SKIP_LINE = re.compile(r'^\[\s*SKIP\s*\] \(\s*\d+/\d+\) (.+?) /([0-9a-f]+) @(\S+) \[(.*)\]\s*$', re.M)


def skip_reasons(output):
    '''{(display name, hash): reason} from ReFrame's output (colours stripped).'''
    plain = re.sub(r'\x1b\[[0-9;]*m', '', output)
    return {(m.group(1), m.group(2)): m.group(4) for m in SKIP_LINE.finditer(plain)}


def reason_group(reason):
    '''The group of a skip reason: its figures and paths made generic.'''
    r = re.sub(r': not found on PATH=\S+', '', reason)
    r = re.sub(r'(?<![\w.])\d+(\.\d+)?(?![\w])', 'N', r)
    return r


def area(filename):
    '''The area of a check file: its directory under checks/ (compute, memory, ...).'''
    parts = pathlib.PurePath(filename or '').parts
    return parts[parts.index('checks') + 1] if 'checks' in parts[:-2] else 'other'


def job_seconds(tc):
    '''Wall seconds of a case's job, submission to completion (ReFrame's ``time_total``
    also counts the wait for a free job slot, which would count one wait many times).'''
    sub, done = tc.get('job_submit_time'), tc.get('job_completion_time_unix')
    if isinstance(sub, (int, float)) and isinstance(done, (int, float)) and done >= sub:
        return done - sub
    return float(tc.get('time_run') or 0)


def summarize(report, output=''):
    '''``{'results': {result: n}, 'skips': [(group, n, example case)], 'areas':
    [(area, cases run, minutes of their jobs)], 'unexplained_skips': [case]}`` of a ReFrame JSON report
    (``report``, a dict) and its output text.'''
    reasons = skip_reasons(output)
    results, groups, areas, unexplained = {}, {}, {}, []
    for tc in (t for run in report.get('runs', []) for t in run.get('testcases', [])):
        res = tc.get('result') or 'unknown'
        results[res] = results.get(res, 0) + 1
        if res == 'skip':
            why = reasons.get((tc.get('display_name', ''), tc.get('hashcode', '')))
            if why is None:
                unexplained.append(tc.get('display_name'))
                why = '(no reason in the output)'
            g = groups.setdefault(reason_group(why), [0, tc.get('display_name')])
            g[0] += 1
            continue
        a = areas.setdefault(area(tc.get('filename')), [0, 0.0])
        a[0] += 1
        a[1] += job_seconds(tc)
    skips = sorted(((g, n, ex) for g, (n, ex) in groups.items()), key=lambda s: (-s[1], s[0]))
    return {'results': results, 'skips': skips,
            'areas': sorted(((a, n, secs / 60) for a, (n, secs) in areas.items()),
                            key=lambda x: -x[2]),
            'unexplained_skips': unexplained}
