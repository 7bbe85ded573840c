'''The exit codes of the ``mdxbench`` commands, one table: the commands return them, the
command reference (docs/cli.md) lists them (generated from :data:`CODES` when the docs are
built), and the published site says what a cycle's exit meant (:data:`CYCLE`). Like the
mdxbench library, every layer may import this module; it imports nothing of ours.'''
import dataclasses


@dataclasses.dataclass(frozen=True)
class Code:
    code: int
    name: str
    meaning: str
    cycle: str = ''     #: what it means for ``mdxbench cycle`` (its site shows it)


OK = 0
#: a regression, a failed node, or records not stored
FOUND = 1
USAGE = 2
#: acceptance left a node undecided (neither failed nor passed) within its extra jobs
UNDECIDED = 3
LOCKED = 73
#: EX_SOFTWARE: a fault of mdxbench itself (the message says how to see the traceback)
INTERNAL = 70
#: EX_TEMPFAIL: run again later
PENDING = 75

CODES = (
    Code(OK, 'OK', 'success', 'no new regression'),
    Code(FOUND, 'FOUND', 'what needs someone: a regression (`regress`, `changes`; a new '
         'incident for `cycle`), a failed node (`accept`, `acceptance`), records not '
         'stored (`ingest`, `summary`), a damaged history copy (`history verify`), a '
         'snapshot or restore that did not happen (`history snapshot|restore`), a split '
         'that could not decide (`incident split`), no such scrontab entry (`schedule '
         'remove`)',
         'a new regression incident'),
    Code(USAGE, 'USAGE', 'a usage, input or configuration error: an unknown system, '
         'partition or check, a bad date or number, options that contradict, an output '
         'location that cannot be written, a file that cannot be read; one line on standard '
         'error names the option, file or field, and nothing was done', 'configuration'),
    Code(UNDECIDED, 'UNDECIDED', 'no node failed, but at least one stayed undecided within '
         'the extra jobs (`accept`): its verdict says what would decide it; it is not drained'),
    Code(LOCKED, 'LOCKED', "another process held the state file's lock for longer than "
         '`--lock-wait` (`ingest`): nothing was sent'),
    Code(INTERNAL, 'INTERNAL', 'a fault of mdxbench itself: one line names the exception; '
         '`--debug` shows its traceback (please report it)', 'a fault of mdxbench'),
    Code(PENDING, 'PENDING', 'Elasticsearch did not take everything (the records stay '
         'pending in the perflogs: run again), or a reader found it unreachable with no '
         'local copy to stand in (the message names the URL)',
         'Elasticsearch did not take every record (they are pending)'),
)



class UsageError(Exception):
    '''Bad input or use: the command exits :data:`USAGE` with this one-line message, which
    names the option, file or field and says what to do.'''


#: {code: what a cycle's exit meant}, for the published site
CYCLE = {c.code: c.cycle for c in CODES if c.cycle}


def table():
    '''The exit codes as a Markdown table (the command reference's).'''
    return '\n'.join(['| exit | name | meaning |', '|---|---|---|'] +
                     [f'| {c.code} | `{c.name}` | {c.meaning} |' for c in CODES]) + '\n'
