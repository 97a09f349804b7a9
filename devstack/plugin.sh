#!/bin/bash
# devstack/plugin.sh: per node, what that node runs: the filters in
# nova-scheduler's nova.conf where n-sch runs, the trait reporter beside
# each nova-compute where n-cpu runs, the tempest plugin where tempest
# runs; nothing on a node that runs none of them.

# Save trace setting
_XTRACE_IMAGE_TYPE_FILTER=$(set +o | grep xtrace)
set -o xtrace

function install_image_type_filter {
    # The filters need the package alone (what nova-scheduler imports
    # stays lean); a compute node adds the cli extra for the reporter
    # (virt-capabilities).
    if is_service_enabled n-cpu; then
        setup_develop "$IMAGE_TYPE_FILTER_DIR" cli
    else
        setup_develop "$IMAGE_TYPE_FILTER_DIR"
    fi
}

function configure_image_type_filter {
    if [[ "$IMAGE_TYPE_FILTER_ENABLED" != "True" ]]; then
        return
    fi
    # stack.sh starts configure_neutron_nova in the background
    # (async_runfunc, inc/async) before the post-config phase and joins it
    # only after that phase: its iniset calls rewrite nova.conf while ours
    # do, and one side's lines can be lost. Join it here first; stack.sh's
    # own async_wait for it then has nothing left to wait for.
    if async_pidof configure_neutron_nova >/dev/null; then
        async_wait configure_neutron_nova
    fi
    # nova-scheduler loads the filters from nova.conf alone: the module in
    # available_filters registers the request filters, and the host filter
    # checks rebuilds (doc/source/install/scheduler.rst).
    local available enabled
    available=$(iniget_multiline "$NOVA_CONF" filter_scheduler \
        available_filters)
    if [[ -z "$available" ]]; then
        available=$NOVA_DEFAULT_AVAILABLE_FILTERS
    fi
    if [[ " $available " != *" $IMAGE_TYPE_FILTER_MODULE "* ]]; then
        available="$available $IMAGE_TYPE_FILTER_MODULE"
    fi
    # shellcheck disable=SC2086  # one argument per value
    iniset_multiline "$NOVA_CONF" filter_scheduler available_filters \
        $available
    enabled=$(iniget "$NOVA_CONF" filter_scheduler enabled_filters)
    enabled=${enabled:-$NOVA_DEFAULT_ENABLED_FILTERS}
    if [[ ",$enabled," != *",$IMAGE_TYPE_REBUILD_FILTER,"* ]]; then
        enabled="$enabled,$IMAGE_TYPE_REBUILD_FILTER"
    fi
    iniset "$NOVA_CONF" filter_scheduler enabled_filters "$enabled"
    iniset "$NOVA_CONF" scheduler filter_hosts_by_image_type_support True
}

function check_image_type_reporter_layout {
    # Refuse at pre-install, before the services are installed, a compute
    # layout the reporter cannot serve from what devstack configures.
    if [[ "$VIRT_DRIVER" != "ironic" ]]; then
        return
    fi
    # One ironic nova-compute serves every Ironic node and nova.conf names
    # none of them: the reporter keeps its traits on the nodes its
    # --provider names (doc/source/install/compute.rst, "Ironic nodes").
    if [[ -z "$IMAGE_TYPE_REPORTER_PROVIDERS" ]]; then
        die $LINENO "VIRT_DRIVER=ironic: the image-type reporter cannot" \
            "find an Ironic node from nova.conf; name the nodes (uuid or" \
            "name) in IMAGE_TYPE_REPORTER_PROVIDERS"
    fi
    if [[ "$IMAGE_TYPE_TRAITS_OWNER" == "reporter" ]]; then
        die $LINENO "VIRT_DRIVER=ironic: the image-type traits of an" \
            "ironic node are nova-compute's own;" \
            "IMAGE_TYPE_TRAITS_OWNER=reporter is refused there"
    fi
}

function _image_type_reporters {
    # One line per nova-compute devstack runs on this node: the reporter's
    # service name, then the config files that nova-compute reads, in its
    # order (lib/nova's start_nova_compute). Their [placement] section
    # reaches Placement, and [DEFAULT] host names the fake driver's node.
    local i
    if [[ "$VIRT_DRIVER" == "fake" ]]; then
        for i in $(seq 1 "$NUMBER_FAKE_NOVA_COMPUTE"); do
            echo "$IMAGE_TYPE_REPORTER_SERVICE-$i $NOVA_CPU_CONF" \
                "$NOVA_FAKE_CONF-$i"
        done
    elif [[ -f "${NOVA_CPU_CONF:-}" ]]; then
        echo "$IMAGE_TYPE_REPORTER_SERVICE $NOVA_CPU_CONF"
    else
        echo "$IMAGE_TYPE_REPORTER_SERVICE $NOVA_CONF"
    fi
}

function _image_type_reporter_args {
    # The reporter's arguments for these config files: --config-file for
    # each, and the Ironic nodes it keeps (ironic only).
    local conf provider args=""
    for conf in "$@"; do
        args="$args --config-file $conf"
    done
    if [[ "$VIRT_DRIVER" == "ironic" ]]; then
        for provider in $IMAGE_TYPE_REPORTER_PROVIDERS; do
            args="$args --provider $provider"
        done
    fi
    echo "${args# }"
}

function _enable_image_type_reporter {
    # The fake driver's reporters are enabled with the one service name
    # local.conf knows, as devstack's n-cpu-N are with n-cpu.
    local service=$1
    if [[ "$service" != "$IMAGE_TYPE_REPORTER_SERVICE" ]] && \
            is_service_enabled "$IMAGE_TYPE_REPORTER_SERVICE"; then
        enable_service "$service"
    fi
}

function start_image_type_reporter {
    local reporter service confs args
    # One reporter per nova-compute, each with that nova-compute's config
    # files and its own service, so each keeps its own node's traits.
    local -a reporters
    mapfile -t reporters < <(_image_type_reporters)
    for reporter in "${reporters[@]}"; do
        read -r service confs <<< "$reporter"
        # One writer per trait: nova-compute reports the image-type traits
        # itself (since Train), so by default the reporter keeps only what
        # nova-compute never writes: its [virt_capabilities] custom_traits
        # and the image-metadata traits the driver boots
        # (image_metadata_traits, on by default;
        # doc/source/admin/trait-ownership.rst).
        iniset "${confs%% *}" virt_capabilities image_type_traits_owner \
            "$IMAGE_TYPE_TRAITS_OWNER"
        if [[ "$VIRT_DRIVER" == "fake" ]] && [[ -z "$(iniget \
                "${confs##* }" virt_capabilities state_file)" ]]; then
            # devstack makes each fake node's state_path as root
            # ($NOVA_STATE_PATH/<host>), where the reporter, run as the
            # stack user, cannot write: its records go to the state file
            # all reporters share, its last sync to a status file of its
            # own, both in $NOVA_STATE_PATH. Set once: after an upgrade
            # (grenade's new DEST) the reporter keeps reading the records
            # it wrote before, wherever they are.
            iniset "${confs##* }" virt_capabilities state_file \
                "$NOVA_STATE_PATH/virt_capabilities.json"
            iniset "${confs##* }" virt_capabilities status_file \
                "$NOVA_STATE_PATH/virt_capabilities_status-$service.json"
        fi
        # shellcheck disable=SC2086  # one argument per file
        args=$(_image_type_reporter_args $confs)
        # shellcheck disable=SC2086  # one word per argument
        virt-capabilities report $args --wait "$IMAGE_TYPE_REPORTER_WAIT"
        if [[ "$IMAGE_TYPE_REPORTER_INTERVAL" != "0" ]]; then
            _enable_image_type_reporter "$service"
            run_process "$service" \
                "$(which virt-capabilities) report $args --interval $IMAGE_TYPE_REPORTER_INTERVAL"
        fi
    done
}

function stop_image_type_reporter {
    local reporter service confs
    local -a reporters
    mapfile -t reporters < <(_image_type_reporters)
    for reporter in "${reporters[@]}"; do
        read -r service confs <<< "$reporter"
        _enable_image_type_reporter "$service"
        stop_process "$service"
    done
}

function configure_tempest_for_image_type_filter {
    if [[ "$IMAGE_TYPE_FILTER_ENABLED" != "True" ]] || \
            ! is_service_enabled tempest; then
        return
    fi
    # The tempest plugin is its own distribution (contrib/tempest, not in
    # the project's wheel): install it into tempest's venv the way
    # devstack's install_tempest_plugins installs TEMPEST_PLUGINS, against
    # tempest's upper-constraints.
    local constraints
    constraints=$(mktemp -t image_type_u_c.XXXXXXXXXX)
    set_tempest_venv_constraints "$constraints"
    pushd "$TEMPEST_DIR"
    tox -evenv-tempest -- pip install -c "$constraints" \
        -e "$IMAGE_TYPE_TEMPEST_PLUGIN_DIR"
    popd
    rm -f "$constraints"
    # One small image file per format for the plugin to upload; which
    # host boots which, it reads from Placement.
    mkdir -p "$IMAGE_TYPE_TEMPEST_IMAGE_DIR"
    local disk_format path files=""
    for disk_format in $IMAGE_TYPE_TEMPEST_FORMATS; do
        path=$IMAGE_TYPE_TEMPEST_IMAGE_DIR/empty.$disk_format
        qemu-img create -q -f "$disk_format" "$path" 64M
        files="${files:+$files,}$disk_format:$path"
    done
    iniset "$TEMPEST_CONFIG" image_type_filter image_files "$files"
    iniset "$TEMPEST_CONFIG" image_type_filter reserved_trait \
        "$IMAGE_TYPE_TEMPEST_RESERVED_TRAIT"
    iniset "$TEMPEST_CONFIG" image_type_filter scheduler_workers \
        "$API_WORKERS"
    if [[ -n "$IMAGE_TYPE_TEMPEST_FAMILY" ]]; then
        iniset "$TEMPEST_CONFIG" image_type_filter image_metadata_family \
            "$IMAGE_TYPE_TEMPEST_FAMILY"
    fi
    # devstack's nova-scheduler logs to the journal, which tempest's user
    # cannot read: the checks that read the log run only when a job gives
    # the scheduler a log file, named here or by nova.conf's [DEFAULT]
    # log_dir (oslo.log then writes log_dir/nova-scheduler.log).
    local scheduler_log=$IMAGE_TYPE_TEMPEST_SCHEDULER_LOG log_dir
    log_dir=$(iniget "$NOVA_CONF" DEFAULT log_dir)
    if [[ -z "$scheduler_log" && -n "$log_dir" && \
            -z "$(iniget "$NOVA_CONF" DEFAULT log_file)" ]]; then
        scheduler_log=$log_dir/nova-scheduler.log
    fi
    if [[ -n "$scheduler_log" ]]; then
        iniset "$TEMPEST_CONFIG" image_type_filter scheduler_log \
            "$scheduler_log"
    fi
}

function cleanup_image_type_filter {
    # What the plugin wrote on this node: the reporters' records and last
    # syncs (the traits they kept went with Placement's database, which
    # devstack's clean drops) and tempest's image files.
    local reporter service confs state
    local -a reporters
    mapfile -t reporters < <(_image_type_reporters)
    for reporter in "${reporters[@]}"; do
        read -r service confs <<< "$reporter"
        state=$(iniget "${confs##* }" virt_capabilities state_file)
        rm -f "$state" "$(iniget "${confs##* }" virt_capabilities \
            status_file)"
    done
    rm -rf "$IMAGE_TYPE_TEMPEST_IMAGE_DIR"
}

if [[ "$1" == "stack" ]]; then
    case "$2" in
        pre-install)
            if is_service_enabled n-cpu; then
                check_image_type_reporter_layout
            fi
            ;;
        install)
            if is_service_enabled n-sch n-cpu; then
                echo_summary "Installing image-type-filter"
                install_image_type_filter
            fi
            ;;
        post-config)
            if is_service_enabled n-sch; then
                echo_summary "Configuring image-type-filter"
                configure_image_type_filter
            fi
            ;;
        extra)
            if is_service_enabled n-cpu && \
                    is_service_enabled "$IMAGE_TYPE_REPORTER_SERVICE"; then
                echo_summary "Reporting image-type traits"
                start_image_type_reporter
            fi
            ;;
        test-config)
            # Runs after devstack's own tempest set-up (extras.d/80-tempest
            # comes before plugins in every phase): $TEMPEST_CONFIG and
            # tempest's venv exist.
            if is_service_enabled tempest; then
                echo_summary "Configuring tempest for image-type-filter"
                configure_tempest_for_image_type_filter
            fi
            ;;
    esac
elif [[ "$1" == "unstack" ]]; then
    if is_service_enabled n-cpu; then
        stop_image_type_reporter
    fi
elif [[ "$1" == "clean" ]]; then
    cleanup_image_type_filter
fi

# Restore xtrace
$_XTRACE_IMAGE_TYPE_FILTER
