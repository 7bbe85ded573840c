'''``mdxbench session``: what one ReFrame session did -- cases by result, skips grouped by
reason with counts, minutes per area.'''
import json
import pathlib
import sys

from mdxbench.post import exits
from mdxbench.post.analysis import session
from mdxbench.post.commands import options
from mdxbench.post.site import text

NAME = 'session'
HELP = 'a ReFrame session: cases by result, skips by reason, minutes per area'


def add_arguments(p):
    p.add_argument('--report', required=True, type=options.readable_file, help="ReFrame's JSON run report (--report-file)")
    p.add_argument('--output', type=options.readable_file, help="ReFrame's output of that run (the skip reasons)")


def run(*, report, output=None):
    try:
        parsed = json.loads(pathlib.Path(report).read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise exits.UsageError(f'{report}: not a ReFrame JSON report ({err}); give the '
                               'file of reframe --report-file') from None
    if not isinstance(parsed, dict) or 'runs' not in parsed:
        raise exits.UsageError(f'{report}: a JSON file without "runs": not a ReFrame run '
                               'report (reframe --report-file)')
    said = pathlib.Path(output).read_text(errors='replace') if output else ''
    s = session.summarize(parsed, said)
    print(text.session(s))
    if s['unexplained_skips'] and output:
        print(f'mdxbench: {len(s["unexplained_skips"])} skipped case(s) without a reason in '
              f'{output}', file=sys.stderr)
    return 0
