#!/bin/bash
# devstack/upgrade/shutdown.sh: the filters run inside nova-scheduler,
# which nova's shutdown stops; nothing of this project's runs on its own
# but the reporters (reporter/shutdown.sh).

echo "image-type-filter: nothing to stop (nova-scheduler loads the filters)"
