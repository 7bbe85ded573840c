'''The published sites over HTTP, as a login node serves them to the operators' browsers:
the cycles' directory (every system's site under it, and their index), read-only, with the
relative links the pages have (:mod:`.publish`). Python's own threaded HTTP server: a
site's web server (nginx, Apache) serves the same directory.'''
import functools
import http.server


def server(directory, bind='127.0.0.1', port=8000):
    '''An HTTP server of ``directory`` on ``bind``:``port`` (0: any free port), not yet
    serving: ``serve_forever()`` it.'''
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(directory))
    return http.server.ThreadingHTTPServer((bind, port), handler)
