#!/bin/bash
# devstack/upgrade/upgrade.sh: the filters' step, before nova's. The new
# release goes into the target's virtualenv, where nova's step installs
# the new nova and starts nova-scheduler: its nova.conf lines (written by
# the devstack plugin on the base side) do not change.

echo "*********************************************************************"
echo "Begin $0"
echo "*********************************************************************"

set -o errexit
source "$(dirname "$0")/common.sh"
set -o xtrace

install_image_type_filter

# The lines nova-scheduler loads the filters from, kept from the base.
if [[ "$(iniget "$NOVA_CONF" scheduler filter_hosts_by_image_type_support)" \
        != "True" ]]; then
    die $LINENO "$NOVA_CONF lost [scheduler]" \
        "filter_hosts_by_image_type_support = True in the upgrade"
fi
if ! iniget_multiline "$NOVA_CONF" filter_scheduler available_filters | \
        grep -qw "$IMAGE_TYPE_FILTER_MODULE"; then
    die $LINENO "$NOVA_CONF lost $IMAGE_TYPE_FILTER_MODULE from" \
        "[filter_scheduler] available_filters in the upgrade"
fi

set +o xtrace
echo "*********************************************************************"
echo "SUCCESS: End $0"
echo "*********************************************************************"
