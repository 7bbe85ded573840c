'''The incidents of a system and what the last cycle did, kept in the state directory
(``<state>/cycle/<system>/incidents.json``): JSON, written atomically, so a cycle that
dies leaves the previous file whole.'''
import json
import os
import pathlib

from mdxbench.sitecfg import state_dir


def cycle_dir(system, root=None):
    '''Where the cycles of ``system`` keep their state (and, by default, their site).'''
    return pathlib.Path(root or state_dir() / 'cycle') / system


class IncidentFile:
    '''``{'incidents': {id: incident}, 'last_cycle': {...}, 'sensitivity': {series: MDE}}``
    of one system.'''

    def __init__(self, path):
        self.path = pathlib.Path(path)
        try:
            data = json.loads(self.path.read_text())
        except FileNotFoundError:
            data = {}
        except (OSError, ValueError) as err:
            raise RuntimeError(f'{self.path}: unreadable incident state ({err}); move it '
                               'away to start over (incidents are found again from the '
                               'history, their acknowledgements are lost)') from None
        self.incidents = data.get('incidents', {})
        self.last_cycle = data.get('last_cycle')
        self.sensitivity = data.get('sensitivity', {})

    def save(self):
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(f'.{self.path.name}.{os.getpid()}.tmp')
        tmp.write_text(json.dumps({'incidents': self.incidents, 'last_cycle': self.last_cycle,
                                   'sensitivity': self.sensitivity},
                                  indent=1, sort_keys=True, default=str))
        os.replace(tmp, self.path)
