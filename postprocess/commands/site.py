'''``mdxbench site serve``: the published sites over HTTP (:mod:`mdxbench.post.site.serve`).'''
import pathlib

from mdxbench import settings
from mdxbench.post import exits
from mdxbench.post.commands import options
from mdxbench.post.site import serve

NAME = 'site'
HELP = "serve the cycles' published sites over HTTP (every system's, and their index)"


def add_arguments(p):
    p.add_argument('action', choices=['serve'], help='serve: until interrupted (Ctrl-C)')
    p.add_argument('--dir', type=options.existing_path,
                   help='the directory to serve (default: <state>/cycle, where the cycles '
                   'publish every system\'s site and their index)')
    p.add_argument('--bind', help='the address to listen on (0.0.0.0: '
                   'every interface)')
    p.add_argument('--port', type=options.port, help='the port (0: any free one)')


def run(*, action='serve', dir=None, bind='127.0.0.1', port=8000):
    directory = pathlib.Path(dir or settings.state_dir() / 'cycle')
    if not (directory / 'index.html').is_file():
        raise exits.UsageError(f'{directory}: no index.html: no site published there yet '
                               '(mdxbench cycle --system SYSTEM publishes one)')
    srv = serve.server(directory, bind, port)
    host, port = srv.server_address[:2]
    print(f'mdxbench site: serving {directory} at http://{host}:{port}/ (Ctrl-C stops)',
          flush=True)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        srv.server_close()
    return exits.OK
