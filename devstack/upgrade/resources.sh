#!/bin/bash
# devstack/upgrade/resources.sh: what must survive the upgrade (grenade's
# PLUGINS.rst phases: create, verify, verify_noapi, destroy), kept in
# grenade's resource database (resource_save, resource_get).
#
# create: a project and user of its own, which upload two images (raw,
# qcow2) and boot a raw server, which goes ACTIVE on a host whose provider
# carries COMPUTE_IMAGE_TYPE_RAW, and a qcow2 server, which the filters
# refuse (ERROR, its fault naming qcow2) when no host boots qcow2; the
# traits of every compute node's provider are recorded (as admin: the
# hypervisors, Placement, a server's host and the flavor are admin's).
# verify: the raw server is still ACTIVE on its host, no provider lost a
# recorded trait, and after the upgrade new boots land the same way.
# A "traits lost: N" line says how many recorded traits are gone.

set -o errexit
source "$GRENADE_DIR/grenaderc"
source "$GRENADE_DIR/functions"
source "$TOP_DIR/openrc" admin admin
set -o xtrace

PROJECT=image-type-filter
PREFIX=image-type-grenade
FLAVOR=$PREFIX
USER_NAME=image_type_grenade
USER_PROJECT=image_type_grenade
USER_PASS=pass
BOOT_DEADLINE=${BOOT_DEADLINE:-300}
PLACEMENT="--os-placement-api-version 1.6"

function _as_admin {
    source_quiet "$TOP_DIR/openrc" admin admin
}

function _as_user {
    export OS_PROJECT_NAME=$USER_PROJECT OS_TENANT_NAME=$USER_PROJECT
    export OS_USERNAME=$USER_NAME OS_PASSWORD=$USER_PASS
}

function _compute_providers {
    # One line per compute node: its provider's uuid, as Placement names
    # it after the hypervisor.
    local name
    for name in $(openstack hypervisor list -f value \
            -c "Hypervisor Hostname"); do
        openstack resource provider list --name "$name" -f value -c uuid
    done
}

function _traits {
    # shellcheck disable=SC2086  # one word per option
    openstack $PLACEMENT resource provider trait list "$1" -f value | sort | \
        tr '\n' ' '
}

function _boot_to_end {
    # Boot $1 from image $2 as the user; save its id; print the status it
    # ends in.
    local name=$1 image=$2 id status deadline
    _as_user
    id=$(openstack server create --image "$image" --flavor "$FLAVOR" \
        --nic none "$name" -f value -c id)
    resource_save $PROJECT "server_$name" "$id"
    deadline=$((SECONDS + BOOT_DEADLINE))
    while [[ $SECONDS -lt $deadline ]]; do
        status=$(openstack server show "$id" -f value -c status)
        if [[ "$status" == "ACTIVE" || "$status" == "ERROR" ]]; then
            _as_admin
            echo "$status"
            return 0
        fi
        sleep 2
    done
    die $LINENO "server $name neither ACTIVE nor ERROR after" \
        "$BOOT_DEADLINE s"
}

function _host_of {
    openstack server show "$(resource_get $PROJECT "server_$1")" \
        -f value -c OS-EXT-SRV-ATTR:hypervisor_hostname
}

function _check_raw_boot {
    # $1 must be ACTIVE on a host whose provider carries the raw trait.
    local name=$1 host uuid
    host=$(_host_of "$name")
    uuid=$(openstack resource provider list --name "$host" -f value -c uuid)
    if [[ " $(_traits "$uuid") " != *" COMPUTE_IMAGE_TYPE_RAW "* ]]; then
        die $LINENO "server $name went to $host, whose provider $uuid" \
            "does not carry COMPUTE_IMAGE_TYPE_RAW: the filters sent a" \
            "raw boot to a host that cannot boot it"
    fi
}

function _check_qcow2_refused {
    # When no host boots qcow2, $1 must be refused with the reason.
    local name=$1 status=$2 fault
    if [[ "$(resource_get $PROJECT qcow2_hosts)" != "0" ]]; then
        return 0
    fi
    fault=$(openstack server show "$(resource_get $PROJECT "server_$name")" \
        -f value -c fault)
    if [[ "$status" != "ERROR" || "$fault" != *"qcow2"* ]]; then
        die $LINENO "server $name ended $status ($fault) though no host" \
            "boots qcow2: the filters did not refuse it"
    fi
}

function create {
    local id dir format status uuid traits providers="" qcow2_hosts=0
    # A project and a user of its own, as grenade's own projects make.
    id=$(openstack project create "$USER_PROJECT" -f value -c id)
    resource_save $PROJECT project_id "$id"
    id=$(openstack user create "$USER_NAME" --project "$USER_PROJECT" \
        --password "$USER_PASS" -f value -c id)
    resource_save $PROJECT user_id "$id"
    openstack role add member --user "$USER_NAME" --project "$USER_PROJECT"
    openstack flavor create --ram 64 --disk 1 --vcpus 1 "$FLAVOR" >/dev/null
    for uuid in $(_compute_providers); do
        traits=$(_traits "$uuid")
        resource_save $PROJECT "traits_$uuid" "$traits"
        providers+=" $uuid"
        if [[ " $traits " == *" COMPUTE_IMAGE_TYPE_QCOW2 "* ]]; then
            qcow2_hosts=$((qcow2_hosts + 1))
        fi
    done
    if [[ -z "$providers" ]]; then
        die $LINENO "no compute node's resource provider in Placement"
    fi
    resource_save $PROJECT providers "$providers"
    resource_save $PROJECT qcow2_hosts "$qcow2_hosts"

    _as_user
    dir=$(mktemp -d)
    for format in raw qcow2; do
        qemu-img create -q -f "$format" "$dir/disk.$format" 16M
        openstack image create --disk-format "$format" \
            --container-format bare --file "$dir/disk.$format" \
            "$PREFIX-$format" >/dev/null
    done
    rm -rf "$dir"
    _as_admin
    status=$(_boot_to_end "$PREFIX-raw" "$PREFIX-raw")
    if [[ "$status" != "ACTIVE" ]]; then
        die $LINENO "the raw server ended $status before the upgrade"
    fi
    _check_raw_boot "$PREFIX-raw"
    resource_save $PROJECT raw_host "$(_host_of "$PREFIX-raw")"
    status=$(_boot_to_end "$PREFIX-qcow2" "$PREFIX-qcow2")
    _check_qcow2_refused "$PREFIX-qcow2" "$status"
}

function verify {
    local side=$1 uuid lost=0 trait now status
    if [[ "$(openstack server show "$(resource_get $PROJECT \
            "server_$PREFIX-raw")" -f value -c status)" != "ACTIVE" ]]; then
        die $LINENO "the raw server is no longer ACTIVE ($side)"
    fi
    if [[ "$(_host_of "$PREFIX-raw")" != \
            "$(resource_get $PROJECT raw_host)" ]]; then
        die $LINENO "the raw server moved from" \
            "$(resource_get $PROJECT raw_host) ($side)"
    fi
    for uuid in $(resource_get $PROJECT providers); do
        now=" $(_traits "$uuid") "
        for trait in $(resource_get $PROJECT "traits_$uuid"); do
            if [[ "$now" != *" $trait "* ]]; then
                echo "provider $uuid lost $trait ($side)"
                lost=$((lost + 1))
            fi
        done
    done
    echo "image-type-filter resources $side: traits lost: $lost"
    if [[ $lost -ne 0 ]]; then
        die $LINENO "$lost recorded trait(s) lost ($side)"
    fi
    if [[ "$side" == "post-upgrade" ]]; then
        # The filters of the new release place new boots as before.
        status=$(_boot_to_end "$PREFIX-raw-after" "$PREFIX-raw")
        if [[ "$status" != "ACTIVE" ]]; then
            die $LINENO "a raw boot after the upgrade ended $status"
        fi
        _check_raw_boot "$PREFIX-raw-after"
        status=$(_boot_to_end "$PREFIX-qcow2-after" "$PREFIX-qcow2")
        _check_qcow2_refused "$PREFIX-qcow2-after" "$status"
        _as_user
        openstack server delete --wait "$PREFIX-raw-after" \
            "$PREFIX-qcow2-after"
    fi
}

function verify_noapi {
    # The services are down: the records each reporter keeps (its
    # nova-compute's config files name them) must still be there for the
    # new release to read.
    local reporter service confs state
    local -a reporters
    source "$TOP_DIR/functions"
    source "$TOP_DIR/stackrc"
    source "$TOP_DIR/lib/nova"
    source "$DEST/image-type-filter/devstack/settings"
    source "$DEST/image-type-filter/devstack/plugin.sh"
    mapfile -t reporters < <(_image_type_reporters)
    for reporter in "${reporters[@]}"; do
        read -r service confs <<< "$reporter"
        state=$(iniget "${confs##* }" virt_capabilities state_file)
        if [[ -n "$state" && ! -s "$state" ]]; then
            die $LINENO "$service's state file $state is gone"
        fi
    done
}

function destroy {
    local name
    _as_user
    for name in "$PREFIX-raw" "$PREFIX-qcow2"; do
        openstack server delete --wait "$name" || true
    done
    openstack image delete "$PREFIX-raw" "$PREFIX-qcow2" || true
    _as_admin
    openstack flavor delete "$FLAVOR" || true
    openstack user delete "$USER_NAME" || true
    openstack project delete "$USER_PROJECT" || true
}

case $1 in
    "create")
        create
        ;;
    "verify_noapi")
        verify_noapi
        ;;
    "verify")
        verify "$2"
        ;;
    "destroy")
        destroy
        ;;
esac
