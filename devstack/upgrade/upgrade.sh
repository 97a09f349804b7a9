#!/bin/bash
# devstack/upgrade/upgrade.sh: after nova's step, the new release into
# the target's virtualenv, nova-scheduler restarted on it (its nova.conf
# lines, written by the devstack plugin on the base side, do not change),
# and the reporters started beside the new nova-compute: each reports once
# (waiting for its node's provider), then runs again as its devstack
# service.

echo "*********************************************************************"
echo "Begin $0"
echo "*********************************************************************"

# grenade's upgrade scripts' trap: an interrupt aborts the whole run.
cleanup() {
    set +o errexit
    echo "*********************************************************************"
    echo "ERROR: Abort $0"
    echo "*********************************************************************"
    # Kill ourselves to signal any calling process
    trap 2; kill -2 $$
}

trap cleanup SIGHUP SIGINT SIGTERM

source "$GRENADE_DIR/grenaderc"
source "$GRENADE_DIR/functions"

set -o errexit

# The target's devstack, and this project's plugin from its DEST.
source "$TARGET_DEVSTACK_DIR/functions"
source "$TARGET_DEVSTACK_DIR/stackrc"
source "$TARGET_DEVSTACK_DIR/lib/nova"
# stack.sh puts devstack's global virtualenv on PATH; grenade's scripts
# start without it (nova's name its commands by $NOVA_BIN_DIR).
if [[ "$GLOBAL_VENV" == "True" ]]; then
    setup_devstack_virtualenv
fi
source "$DEST/image-type-filter/devstack/settings"
source "$DEST/image-type-filter/devstack/plugin.sh"

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
# nova's step started nova-scheduler with the release before's filters.
if is_service_enabled n-sch; then
    sudo systemctl restart devstack@n-sch.service
    ensure_services_started n-sch
fi

if is_service_enabled n-cpu; then
    start_image_type_reporter
    if [[ "$IMAGE_TYPE_REPORTER_INTERVAL" != "0" ]]; then
        # shellcheck disable=SC2046  # one argument per service
        ensure_services_started $(_image_type_reporters | cut -d' ' -f1)
    fi
fi

set +o xtrace
echo "*********************************************************************"
echo "SUCCESS: End $0"
echo "*********************************************************************"
