"""LOCAL STAND-IN ONLY (not committed): the tempest helper owns this module."""


def run(cloud, workspace, suite):
    return {'passed': 1, 'failed': 0, 'skipped': 0,
            'summary': 'local stand-in for %s: no tests run' % suite}
