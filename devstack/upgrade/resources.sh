#!/bin/bash
# devstack/upgrade/resources.sh: what must survive the upgrade (grenade's
# PLUGINS.rst phases: create, verify, verify_noapi, destroy).
#
# create: two images (raw, qcow2), a raw server, which goes ACTIVE on a
# host whose provider carries COMPUTE_IMAGE_TYPE_RAW, and a qcow2 server,
# which the filters refuse (ERROR, its fault naming qcow2) when no host
# boots qcow2; the traits of every compute node's provider are recorded.
# verify: the raw server is still ACTIVE on its host, no provider lost a
# recorded trait, and after the upgrade new boots land the same way.
# A "traits lost: N" line says how many recorded traits are gone.

set -o errexit
source "$GRENADE_DIR/grenaderc"
source "$GRENADE_DIR/functions"
source "$TOP_DIR/openrc" admin admin
set -o xtrace

PREFIX=image-type-grenade
FLAVOR=$PREFIX
# Records kept apart from grenade's resource database, which grenade
# empties when its base part starts.
RECORDS=$SAVE_DIR/image-type-filter-resources.ini
BOOT_DEADLINE=${BOOT_DEADLINE:-300}
PLACEMENT="--os-placement-api-version 1.6"

function _record {
    iniset "$RECORDS" image-type-filter "$1" "$2"
}

function _recorded {
    iniget "$RECORDS" image-type-filter "$1"
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
    # Boot $1 from image $2 and print the status it ends in.
    local name=$1 image=$2 status deadline
    openstack server create --image "$image" --flavor "$FLAVOR" --nic none \
        "$name" >/dev/null
    deadline=$((SECONDS + BOOT_DEADLINE))
    while [[ $SECONDS -lt $deadline ]]; do
        status=$(openstack server show "$name" -f value -c status)
        if [[ "$status" == "ACTIVE" || "$status" == "ERROR" ]]; then
            echo "$status"
            return 0
        fi
        sleep 2
    done
    die $LINENO "server $name neither ACTIVE nor ERROR after" \
        "$BOOT_DEADLINE s"
}

function _host_of {
    openstack server show "$1" -f value -c OS-EXT-SRV-ATTR:hypervisor_hostname
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
    if [[ "$(_recorded qcow2_hosts)" != "0" ]]; then
        return 0
    fi
    fault=$(openstack server show "$name" -f value -c fault)
    if [[ "$status" != "ERROR" || "$fault" != *"qcow2"* ]]; then
        die $LINENO "server $name ended $status ($fault) though no host" \
            "boots qcow2: the filters did not refuse it"
    fi
}

function create {
    local dir format status uuid traits providers="" qcow2_hosts=0
    : > "$RECORDS"
    dir=$(mktemp -d)
    for format in raw qcow2; do
        qemu-img create -q -f "$format" "$dir/disk.$format" 16M
        openstack image create --disk-format "$format" \
            --container-format bare --file "$dir/disk.$format" \
            "$PREFIX-$format" >/dev/null
    done
    rm -rf "$dir"
    openstack flavor create --ram 64 --disk 1 --vcpus 1 "$FLAVOR" >/dev/null
    for uuid in $(_compute_providers); do
        traits=$(_traits "$uuid")
        _record "traits_$uuid" "$traits"
        providers+=" $uuid"
        if [[ " $traits " == *" COMPUTE_IMAGE_TYPE_QCOW2 "* ]]; then
            qcow2_hosts=$((qcow2_hosts + 1))
        fi
    done
    if [[ -z "$providers" ]]; then
        die $LINENO "no compute node's resource provider in Placement"
    fi
    _record providers "$providers"
    _record qcow2_hosts "$qcow2_hosts"

    status=$(_boot_to_end "$PREFIX-raw" "$PREFIX-raw")
    if [[ "$status" != "ACTIVE" ]]; then
        die $LINENO "the raw server ended $status before the upgrade"
    fi
    _check_raw_boot "$PREFIX-raw"
    _record raw_host "$(_host_of "$PREFIX-raw")"
    status=$(_boot_to_end "$PREFIX-qcow2" "$PREFIX-qcow2")
    _check_qcow2_refused "$PREFIX-qcow2" "$status"
}

function verify {
    local side=$1 uuid lost=0 trait now status
    if [[ "$(openstack server show "$PREFIX-raw" -f value -c status)" \
            != "ACTIVE" ]]; then
        die $LINENO "the raw server is no longer ACTIVE ($side)"
    fi
    if [[ "$(_host_of "$PREFIX-raw")" != "$(_recorded raw_host)" ]]; then
        die $LINENO "the raw server moved from $(_recorded raw_host) ($side)"
    fi
    for uuid in $(_recorded providers); do
        now=" $(_traits "$uuid") "
        for trait in $(_recorded "traits_$uuid"); do
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
        openstack server delete --wait "$PREFIX-raw-after" \
            "$PREFIX-qcow2-after"
    fi
}

function verify_noapi {
    # The services are down: the records the reporters keep must still be
    # there for the new release to read.
    local state
    state=$(iniget "${NOVA_CONF_DIR:-/etc/nova}/nova-fake.conf-1" virt_capabilities \
        state_file 2>/dev/null || true)
    if [[ -n "$state" && ! -s "$state" ]]; then
        die $LINENO "the reporters' state file $state is gone"
    fi
}

function destroy {
    local name
    for name in "$PREFIX-raw" "$PREFIX-qcow2"; do
        openstack server delete --wait "$name" || true
    done
    openstack image delete "$PREFIX-raw" "$PREFIX-qcow2" || true
    openstack flavor delete "$FLAVOR" || true
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
