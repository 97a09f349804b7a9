"""One line per request, written before Placement handles it.

Tests read it to count what reached the server (``METHOD /path?query``).
Every process serving Placement appends to the same file; a line is one
write to a file opened for appending, so lines from several workers never
interleave.
"""

ENVIRON_KEY = 'EMBEDDED_PLACEMENT_ACCESS_LOG'


def logged(app, path):
    """``app`` with each request line appended to ``path`` first."""
    log = open(path, 'a', buffering=1)

    def with_request_line(environ, start_response):
        query = environ.get('QUERY_STRING')
        log.write('%s %s%s\n' % (environ['REQUEST_METHOD'],
                                 environ.get('PATH_INFO', ''),
                                 '?' + query if query else ''))
        return app(environ, start_response)
    return with_request_line
