"""Upgrade readiness: is it safe to turn the image-type filter on?

An oslo.upgradecheck check, with ``nova-status upgrade check``'s meaning:
0 ready, 1 warnings, 2 not ready (some compute nodes report no image type,
so enabling the filter would send them no boot), and 255 (``COULD_NOT_CHECK``)
when the check itself could not run: Placement unreachable, credentials or
configuration wrong.
"""

from oslo_upgradecheck import upgradecheck

from image_type_common import placement_client as pc
from image_type_filter.conf import scheduler_client as client_conf

Code = upgradecheck.Code
Result = upgradecheck.Result
#: oslo.upgradecheck's code for "the check could not run".
COULD_NOT_CHECK = 255


def result_name(code):
    return upgradecheck.UPGRADE_CHECK_MSG_MAP[Code(code)]


class ReadinessChecks(upgradecheck.UpgradeCommands):
    """The checks, on a survey already taken (no request of their own but
    the client's negotiated microversion)."""

    def __init__(self, client, fleet,
                 trait_parameter=client_conf.ROOT_REQUIRED):
        self.client = client
        self.fleet = fleet
        self.trait_parameter = trait_parameter

    def _check_compute_nodes(self):
        hosts = len(self.fleet.hosts)
        missing = self.fleet.not_reporting
        how = 'compute nodes found by %s' % self.fleet.found_by
        if not hosts:
            return Result(Code.WARNING, 'no compute node found (%s)' % how)
        if missing:
            return Result(Code.FAILURE, (
                '%d of %d compute node(s) report no COMPUTE_IMAGE_TYPE_* '
                'trait: %s. Run virt-capabilities report on them before '
                'enabling the filter (%s).' % (
                    len(missing), hosts, ', '.join(missing), how)))
        return Result(Code.SUCCESS, 'all %d compute node(s) report (%s)'
                      % (hosts, how))

    def _check_microversion(self):
        version = self.client.microversion
        if version < pc.CANDIDATES_REQUIRED:
            return Result(Code.FAILURE, 'maximum %s cannot filter by trait '
                          '(needs 1.17)' % pc.version_str(version))
        if version < pc.ROOT_REQUIRED:
            return Result(Code.WARNING, 'maximum %s has no root_required '
                          '(1.35); the filter falls back to unsuffixed '
                          'required' % pc.version_str(version))
        return Result(Code.SUCCESS, pc.version_str(version))

    def _check_provider_trees(self):
        if self.fleet.flat:
            return Result(Code.SUCCESS, 'flat: every tree is one provider and '
                          'nothing is shared, so image_type_trait_parameter '
                          '= required is safe')
        detail = ('not flat (%s): keep image_type_trait_parameter = '
                  'root_required' % ('nested providers' if self.fleet.nested
                                     else 'sharing providers %s'
                                     % ', '.join(self.fleet.sharing)))
        return Result(Code.WARNING
                      if self.trait_parameter == client_conf.REQUIRED
                      else Code.SUCCESS, detail)

    def _check_formats(self):
        """Information: how many hosts boot each format, and which formats
        no host boots (boots of those will find no host)."""
        per_format = self.fleet.hosts_per_format()
        booted = ', '.join('%s: %d' % (fmt, len(hosts))
                           for fmt, hosts in per_format.items() if hosts)
        unsupported = [fmt for fmt, hosts in per_format.items() if not hosts]
        return Result(Code.SUCCESS, 'hosts per format: %s; no host boots: %s'
                      % (booted or 'none', ', '.join(unsupported) or 'none'))

    _upgrade_checks = (
        ('Compute nodes report image types', _check_compute_nodes),
        ('Placement microversion', _check_microversion),
        ('Provider trees', _check_provider_trees),
        ('Image formats', _check_formats),
    )

    def results(self):
        """[(name, Result)] without printing (oslo's check() prints)."""
        return [(name, check(self)) for name, check in self._upgrade_checks]


def exit_code(results):
    return max((int(result.code) for _, result in results),
               default=int(Code.SUCCESS))
