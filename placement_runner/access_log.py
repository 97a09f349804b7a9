# Licensed under the Apache License, Version 2.0 (the "License"); you may
# not use this file except in compliance with the License. You may obtain
# a copy of the License at
#
#      http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS, WITHOUT
# WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied. See the
# License for the specific language governing permissions and limitations
# under the License.

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
