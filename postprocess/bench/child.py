'''A measurement in a child process of its own, so that its peak memory is its own.

``python -m mdxbench.post.bench.child NAME ARGUMENTS`` calls the function ``NAME`` of
:mod:`mdxbench.post.bench.children` with the keyword arguments of the JSON object
``ARGUMENTS`` and prints, as its last line, the JSON object it returns with the child's
peak resident memory added (``peak_mib``). :func:`run` is that call from the parent.
'''
import json
import subprocess
import sys


def run(name, what='bench child', **kwargs):
    '''The figures of ``children.NAME(**kwargs)`` measured in a new interpreter (the
    arguments as JSON: text, numbers, lists). A failing child raises with its standard
    error.'''
    res = subprocess.run([sys.executable, '-m', 'mdxbench.post.bench.child', name,
                          json.dumps(kwargs)],
                         capture_output=True, text=True)
    if res.returncode:
        raise RuntimeError(f'{what} failed: {res.stderr[-2000:]}')
    return json.loads(res.stdout.strip().splitlines()[-1])


def peak_mib():
    '''This process's peak resident memory since it began, MiB (Linux's VmHWM, reset by
    exec; ``ru_maxrss`` keeps the high mark of the process that forked it, so a child of
    a large parent reported the parent's peak).'''
    with open('/proc/self/status') as f:
        for line in f:
            if line.startswith('VmHWM:'):
                return int(line.split()[1]) / 1024
    return None


def main(argv):
    from mdxbench.post.bench import children

    name, given = argv
    out = getattr(children, name)(**json.loads(given))
    out['peak_mib'] = peak_mib()
    print(json.dumps(out))


if __name__ == '__main__':
    main(sys.argv[1:])
