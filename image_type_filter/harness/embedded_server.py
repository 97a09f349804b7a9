"""Child process of EmbeddedPlacement: the real Placement app on 127.0.0.1.

Run as ``python -m image_type_filter.harness.embedded_server WORKDIR [PORT]``.
Serves from one thread (SQLite needs a single writer), prints
``READY <port>`` once listening, logs every request line to
``WORKDIR/access.log`` before handling it, and when its parent goes away
(stdin closes) it removes WORKDIR and exits, so a killed caller leaves
nothing behind.
"""

import os
import shutil
import signal
import sys
import threading
import traceback
from wsgiref import simple_server

LOOPBACK = '127.0.0.1'


class _QuietHandler(simple_server.WSGIRequestHandler):
    def log_message(self, *args):
        pass


def _exit_when_parent_gone(workdir):
    try:
        while os.read(0, 4096):
            pass
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
        os._exit(0)


def _access_logged(app, path):
    log = open(path, 'a', buffering=1)

    def logged(environ, start_response):
        query = environ.get('QUERY_STRING')
        log.write('%s %s%s\n' % (environ['REQUEST_METHOD'],
                                 environ.get('PATH_INFO', ''),
                                 '?' + query if query else ''))
        return app(environ, start_response)
    return logged


def main(workdir, port=0):
    os.environ['OS_PLACEMENT_CONFIG_DIR'] = workdir
    threading.Thread(target=_exit_when_parent_gone, args=(workdir,),
                     daemon=True).start()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    from placement.wsgi import api  # loads config, syncs the schema: ~2 s
    app = _access_logged(api.application, os.path.join(workdir, 'access.log'))
    server = simple_server.make_server(LOOPBACK, port, app,
                                       handler_class=_QuietHandler)
    print('READY %d' % server.server_port, flush=True)
    # Nobody reads the stdout pipe after this line: send fd 1 to the log.
    os.dup2(2, 1)
    try:
        server.serve_forever()
    finally:
        server.server_close()


if __name__ == '__main__':
    code = 0
    try:
        main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 0)
    except SystemExit as exc:
        code = exc.code or 0
    except BaseException:
        traceback.print_exc()
        code = 1
    sys.stderr.flush()
    # Leave at once: the stdin watcher thread must not block interpreter exit.
    os._exit(code)
