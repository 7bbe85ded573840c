'''Parsers of benchmark outputs: pure functions from text to a dictionary of results.

Every parser raises :class:`ParseError` when the text is not what it understands (another
version, a truncated or empty output), naming what it expected: a check turns that into a
sanity failure with the same message, never into a wrong number.
'''


class ParseError(ValueError):
    '''The output is not what the parser understands; the message says what was expected.'''


class PartialResult(ParseError):
    '''The run stopped before its final result; ``partial`` holds what it did report.'''

    def __init__(self, message, partial):
        super().__init__(message)
        self.partial = partial


def require(cond, message):
    if not cond:
        raise ParseError(message)
