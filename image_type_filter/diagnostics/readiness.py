"""Upgrade readiness: is it safe to turn the image-type filter on?

In the manner of ``nova-status upgrade check`` (same result codes as
oslo.upgradecheck: 0 success, 1 warning, 2 failure). Failure: some compute
nodes report no image type, so enabling the filter would send them no boot.
"""

import dataclasses

from image_type_common import placement_client as pc
from image_type_filter.conf import scheduler as scheduler_conf

SUCCESS, WARNING, FAILURE = 0, 1, 2
NAMES = {SUCCESS: 'Success', WARNING: 'Warning', FAILURE: 'Failure'}


@dataclasses.dataclass
class Check:
    name: str
    code: int
    details: str

    def as_dict(self):
        return {'check': self.name, 'result': NAMES[self.code],
                'details': self.details}


def check(client, fleet, trait_parameter=scheduler_conf.ROOT_REQUIRED):
    checks = []
    hosts = len(fleet.hosts)
    missing = fleet.not_reporting
    if not hosts:
        checks.append(Check('Compute nodes report image types', WARNING,
                            'no compute node (root provider with VCPU '
                            'inventory) found'))
    elif missing:
        checks.append(Check(
            'Compute nodes report image types', FAILURE,
            '%d of %d compute node(s) report no COMPUTE_IMAGE_TYPE_* trait: '
            '%s. Run virt-capabilities report on them before enabling '
            'the filter.' % (len(missing), hosts, ', '.join(missing))))
    else:
        checks.append(Check('Compute nodes report image types', SUCCESS,
                            'all %d compute node(s) report' % hosts))
    version = client.microversion
    if version < pc.CANDIDATES_REQUIRED:
        checks.append(Check('Placement microversion', FAILURE,
                            'maximum %s cannot filter by trait (needs 1.17)'
                            % pc.version_str(version)))
    elif version < pc.ROOT_REQUIRED:
        checks.append(Check('Placement microversion', WARNING,
                            'maximum %s has no root_required (1.35); the '
                            'filter falls back to unsuffixed required'
                            % pc.version_str(version)))
    else:
        checks.append(Check('Placement microversion', SUCCESS,
                            pc.version_str(version)))
    if fleet.flat:
        detail = ('flat: every tree is one provider and nothing is shared, '
                  'so image_type_trait_parameter = required is safe')
        code = SUCCESS
    else:
        detail = ('not flat (%s): keep image_type_trait_parameter = '
                  'root_required' % ('nested providers' if fleet.nested else
                                     'sharing providers %s'
                                     % ', '.join(fleet.sharing)))
        code = (WARNING if trait_parameter == scheduler_conf.REQUIRED
                else SUCCESS)
    checks.append(Check('Provider trees', code, detail))
    return checks


def exit_code(checks):
    return max((c.code for c in checks), default=SUCCESS)
