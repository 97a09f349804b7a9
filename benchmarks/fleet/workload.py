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

"""The boots, several at a time, on the node.

``concurrency`` workers take the next image of ``shape.boot_sequence``,
ask nova-api for a server (``--nic none``), and wait until Nova's
database says it is active or in error, then take the next: a closed loop
with ``concurrency`` boots in flight. A server's state comes from Nova's
cell databases (cell1, where it boots; cell0, where the conductor buries
what could not be scheduled), polled every ``POLL`` seconds: nova-api's
own server reads ask neutron for security groups, and this cloud has no
neutron. API-to-ACTIVE is from just before the POST to the first poll
that sees the end, so it is at most ``POLL`` long.
"""

import configparser
import threading
import time

POLL = 0.2
#: How long one boot may take before the run gives up on it.
BOOT_DEADLINE = 600.0
NOVA_CONF = '/etc/nova/nova.conf'


def database_params(conf_path=NOVA_CONF):
    """{cell name: pymysql.connect arguments} for cell1 and cell0, from
    nova.conf's ``[database] connection`` (cell1's on a devstack with one
    conductor)."""
    from sqlalchemy.engine import make_url
    conf = configparser.ConfigParser(interpolation=None, strict=False)
    conf.read(conf_path)
    url = make_url(conf['database']['connection'])
    base = {'host': url.host or '127.0.0.1', 'user': url.username,
            'password': url.password, 'port': url.port or 3306,
            'connect_timeout': 30, 'read_timeout': 60, 'autocommit': True}
    cell1 = url.database
    return {'cell1': dict(base, database=cell1),
            'cell0': dict(base, database=cell1.replace('cell1', 'cell0'))}


class States:
    """One worker's view of Nova's cell databases."""

    QUERY = ('SELECT vm_state, node FROM instances WHERE uuid = %s '
             'AND deleted = 0')

    def __init__(self, params):
        import pymysql
        self.connections = [pymysql.connect(**p) for p in params.values()]

    def state(self, server_id):
        """(vm_state, node) or None while no cell has the server yet."""
        for conn in self.connections:
            with conn.cursor() as cursor:
                cursor.execute(self.QUERY, (server_id,))
                row = cursor.fetchone()
            if row:
                return row
        return None

    def close(self):
        for conn in self.connections:
            conn.close()


def boot_all(cloud, sequence, images, flavor_id, prefix, concurrency,
             params):
    """Boot ``sequence`` (image kinds, in order) ``concurrency`` at a time;
    one record per boot: its kind, server id, request id, the seconds
    from the POST to its end, its status and node."""
    records = [None] * len(sequence)
    todo = iter(enumerate(sequence))
    lock = threading.Lock()
    failures = []

    def worker():
        states = States(params)
        try:
            while True:
                with lock:
                    item = next(todo, None)
                if item is None or failures:
                    return
                index, kind = item
                records[index] = _boot_one(
                    cloud, states, '%s-%04d' % (prefix, index), kind,
                    images[kind], flavor_id)
        except Exception as exc:  # reported by the caller, once
            failures.append(exc)
        finally:
            states.close()

    threads = [threading.Thread(target=worker, daemon=True)
               for _ in range(concurrency)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        raise failures[0]
    return records


def _boot_one(cloud, states, name, kind, image_id, flavor_id):
    start = time.monotonic()
    server_id, request_id = cloud.create(name, image_id, flavor_id)
    deadline = start + BOOT_DEADLINE
    while True:
        row = states.state(server_id)
        if row and row[0] in ('active', 'error'):
            return {'kind': kind, 'server': server_id,
                    'request': request_id,
                    'seconds': round(time.monotonic() - start, 3),
                    'status': 'ACTIVE' if row[0] == 'active' else 'ERROR',
                    'node': row[1]}
        if time.monotonic() > deadline:
            raise TimeoutError('server %s (%s) not active or in error '
                               'after %d s' % (name, server_id,
                                               BOOT_DEADLINE))
        time.sleep(POLL)
