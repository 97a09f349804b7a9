#!/bin/bash
# devstack/upgrade/reporter/upgrade.sh: the reporters' step, after nova's
# has started the new nova-compute: each reporter reports once (waiting
# for its node's provider), then runs again as its devstack service.

echo "*********************************************************************"
echo "Begin $0"
echo "*********************************************************************"

set -o errexit
source "$(dirname "$0")/../common.sh"
set -o xtrace

start_image_type_reporter
if [[ "$IMAGE_TYPE_REPORTER_INTERVAL" != "0" ]]; then
    # shellcheck disable=SC2046  # one argument per service
    ensure_services_started $(_image_type_reporters | cut -d' ' -f1)
fi

set +o xtrace
echo "*********************************************************************"
echo "SUCCESS: End $0"
echo "*********************************************************************"
