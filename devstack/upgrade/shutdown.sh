#!/bin/bash
# devstack/upgrade/shutdown.sh: stop the base side's reporters (the
# filters run inside nova-scheduler, which nova's shutdown stops). Their
# records (the state file) stay: the new release reads them.

set -o errexit

source "$GRENADE_DIR/grenaderc"
source "$GRENADE_DIR/functions"

# The base side's devstack, and this project's plugin from its DEST.
source "$BASE_DEVSTACK_DIR/functions"
source "$BASE_DEVSTACK_DIR/stackrc"
source "$BASE_DEVSTACK_DIR/lib/nova"
source "$DEST/image-type-filter/devstack/settings"
source "$DEST/image-type-filter/devstack/plugin.sh"

set -o xtrace

stop_image_type_reporter
# shellcheck disable=SC2046  # one argument per service
ensure_services_stopped $(_image_type_reporters | cut -d' ' -f1)
