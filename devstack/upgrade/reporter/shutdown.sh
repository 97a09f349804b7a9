#!/bin/bash
# devstack/upgrade/reporter/shutdown.sh: stop the reporters of the base
# side. Their records (the state file) stay: the new release reads them.

set -o errexit
source "$(dirname "$0")/../common.sh"
set -o xtrace

stop_image_type_reporter
# shellcheck disable=SC2046  # one argument per service
ensure_services_stopped $(_image_type_reporters | cut -d' ' -f1)
