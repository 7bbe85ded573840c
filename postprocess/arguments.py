'''The argument types and checks that refuse a bad value before any work: an unknown system
or partition (listing the known ones), a bad time or number, a file that cannot be read, an
output location that cannot be written, options that contradict each other. argparse turns
each refusal into one line naming the option (:class:`mdxbench.post.cli.Parser`), and the
command exits USAGE (2). Every command's options use them (through
:mod:`mdxbench.post.commands.options`). Also the bridge between the parser and a command's
``run``: the options' defaults taken from its signature (:func:`defaults`), the parsed
options as its keyword arguments (:func:`keywords`).'''
import argparse
import datetime as dt
import inspect
import os
import pathlib
import tempfile


def refuse(p, check):
    '''Register ``check(args)`` -> a message or nothing, run on the parsed arguments before
    the command (:func:`contradiction`): options that contradict each other.'''
    p.set_defaults(_checks=[*(p.get_default('_checks') or []), check])


def contradiction(args):
    '''The first message of the checks :func:`refuse` registered for the command, or None.'''
    return next(filter(None, (check(args) for check in getattr(args, '_checks', ()))), None)


def defaults(p, function):
    '''Each option of the command's parser ``p`` (and of its subcommands') takes its default
    from ``function``'s keyword parameter of its name: a command's defaults are written once,
    in the signature of its ``run``, which Python callers and the parser share.'''
    params = inspect.signature(function).parameters
    for action in p._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):
                defaults(sub, function)
        elif action.dest in params and params[action.dest].default is not inspect.Parameter.empty:
            value = params[action.dest].default
            # an option given several times appends to a list of its own
            append = isinstance(action, argparse._AppendAction) and value is not None
            action.default = list(value) if append else value


def keywords(args):
    '''The keyword arguments of a command's ``run`` from the parsed ``args``: every option
    but the parser's own bookkeeping (the command's name, ``--debug``, what argparse keeps
    under a leading underscore).'''
    return {k: v for k, v in vars(args).items()
            if not k.startswith('_') and k not in ('cmd', 'debug')}


def iso_time(value):
    '''An ISO 8601 time with its zone (the string, checked).'''
    try:
        t = dt.datetime.fromisoformat(value)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f'{value!r} is not an ISO time (e.g. 2026-11-01T00:00:00+00:00)') from None
    if t.tzinfo is None:
        raise argparse.ArgumentTypeError(
            f'{value!r} needs a time zone (e.g. {value}+00:00)')
    return value


def _number(kind, lo=None, hi=None, lo_open=False, what=''):
    def parse(value):
        try:
            x = kind(value)
        except ValueError:
            what_kind = 'an integer' if kind is int else 'a number'
            raise argparse.ArgumentTypeError(f'{value!r} is not {what_kind}') from None
        if x != x or (lo is not None and (x <= lo if lo_open else x < lo)) or \
                (hi is not None and x > hi):
            raise argparse.ArgumentTypeError(f'{value} is out of range: {what}')
        return x
    parse.__name__ = kind.__name__
    return parse


#: a number above zero (a threshold in standard deviations, a time in seconds)
positive = _number(float, 0, lo_open=True, what='expected a number above 0')
#: zero or more
non_negative = _number(float, 0, what='expected 0 or more')
#: a fraction of a median or reference, above 0 and at most 1
fraction = _number(float, 0, 1, lo_open=True, what='expected a fraction above 0 and at most 1')
#: a count of runs, nodes or repetitions
count = _number(int, 1, what='expected 1 or more')
#: a TCP port (0: any free one)
port = _number(int, 0, 65535, what='expected a port, 0 to 65535')
#: a count that may be 0 (no retest, no extra job)
count_or_none = _number(int, 0, what='expected 0 or more')


def known_system(value):
    '''A system of the site configuration (``site-configs/systems/<name>.yaml``).'''
    names = system_names()
    if value not in names:
        raise argparse.ArgumentTypeError(
            f'unknown system {value!r}: the site configuration has {", ".join(names)} '
            '(site-configs/systems/<name>.yaml)')
    return value


def system_names():
    from mdxbench import REPO_ROOT
    from mdxbench.sitecfg import system_files

    return [f.stem for f in system_files(REPO_ROOT / 'site-configs')]


def partition_of(system_attr='system', partition_attr='partition'):
    '''A check for :func:`refuse`: the partition option names a partition of the system
    option's site file.'''
    def check(args):
        system, part = getattr(args, system_attr, None), getattr(args, partition_attr, None)
        if not (system and part):
            return None
        from mdxbench import REPO_ROOT
        from mdxbench.sitecfg import load_yaml

        names = [p.get('name') for p in load_yaml(
            REPO_ROOT / 'site-configs' / 'systems' / f'{system}.yaml').get('partitions') or []]
        if part not in names:
            return (f'argument --{partition_attr.replace("_", "-")}: system {system} has no '
                    f'partition {part!r}: its partitions are {", ".join(names)}')
        return None
    return check


def existing_path(value):
    '''A file or directory that exists.'''
    if not os.path.exists(value):
        raise argparse.ArgumentTypeError(f'{value}: no such file or directory')
    return value


def readable_file(value):
    '''A file that exists and can be read.'''
    path = pathlib.Path(value)
    problem = ('no such file' if not path.exists() else 'not a file' if not path.is_file()
               else None if os.access(path, os.R_OK) else 'not readable')
    if problem:
        raise argparse.ArgumentTypeError(f'{value}: {problem}')
    return value


def _creatable(path):
    '''Why ``path`` cannot be made (a directory or a file), or None: its nearest existing
    ancestor must be a writable directory.'''
    parent = path
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        return f'{parent} is a file, not a directory'
    return _unwritable(parent)


def _unwritable(directory):
    '''Why nothing can be written in ``directory``, or None: a file is made there and
    removed (permissions alone do not say it for root, nor for a read-only mount).'''
    try:
        fd, name = tempfile.mkstemp(dir=directory, prefix='.mdxbench-write-test-')
    except OSError as err:
        return f'{directory} is not writable ({err.strerror})'
    os.close(fd)
    os.unlink(name)
    return None


def output_dir(value):
    '''A directory to write into: existing and writable, or one that can be made.'''
    path = pathlib.Path(value)
    if path.exists():
        problem = _unwritable(path) if path.is_dir() else f'{value} is not a directory'
    else:
        problem = _creatable(path)
    if problem:
        raise argparse.ArgumentTypeError(f'cannot write the output there: {problem}')
    return value


def output_file(value):
    '''A file to write: a writable file, or a new one in a directory that is or can be.'''
    path = pathlib.Path(value)
    if path.is_dir():
        problem = f'{value} is a directory'
    elif path.exists():
        problem = _unwritable(path.parent)
    else:
        problem = _creatable(path.parent)
    if problem:
        raise argparse.ArgumentTypeError(f'cannot write the output there: {problem}')
    return value
