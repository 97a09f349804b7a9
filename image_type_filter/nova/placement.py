"""Reach Placement through nova-scheduler's own report client.

Inside Nova the filters read Placement (which traits exist, a host's traits
on a rebuild) with Nova's connection and nova.conf's ``[placement]``
credentials, so nothing else has to be configured. Only reads are needed.
"""

from nova.scheduler.client import report

from image_type_common import placement_client

VERSION_HEADER = 'OpenStack-API-Version'


class ReportClientAdapter:
    """The one keystoneauth Adapter call PlacementClient makes, for GETs,
    sent through Nova's report client."""

    def request(self, path, method, json=None, headers=None,
                raise_exc=False):
        if method != 'GET' or json is not None:
            raise NotImplementedError('only reads go through Nova')
        version = None
        value = (headers or {}).get(VERSION_HEADER, '')
        if value.startswith('placement '):
            version = value.split(' ', 1)[1]
        return report.report_client_singleton().get(path, version=version)


def client():
    return placement_client.PlacementClient(ReportClientAdapter())
