#!/bin/bash
# devstack/upgrade/common.sh: what every script of this grenade plugin
# sources first: grenade's functions, then devstack's of the side the
# script works on ($TOP_DIR: grenade sets it to the base devstack for
# shutdown and resources, to the target's for upgrade), then the
# project's devstack plugin from that side's tree.

source "$GRENADE_DIR/grenaderc"
source "$GRENADE_DIR/functions"
source "$TOP_DIR/functions"
source "$TOP_DIR/stackrc"
source "$TOP_DIR/lib/nova"
# stack.sh puts devstack's global virtualenv on PATH; grenade's scripts
# start without it (nova's name its commands by $NOVA_BIN_DIR).
if [[ "$GLOBAL_VENV" == "True" ]]; then
    setup_devstack_virtualenv
fi
IMAGE_TYPE_FILTER_DIR=$DEST/image-type-filter
source "$IMAGE_TYPE_FILTER_DIR/devstack/settings"
source "$IMAGE_TYPE_FILTER_DIR/devstack/plugin.sh"
