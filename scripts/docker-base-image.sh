#!/usr/bin/env bash
# Make a stand-in for python:3.11-slim without Docker Hub, and tag it with that name so that the
# Dockerfile's unchanged `FROM python:3.11-slim` builds on a machine that cannot pull it.
#
# The stand-in is Debian bookworm (whose python3 is 3.11) made by debootstrap from this machine's apt
# mirror, with python3-venv and this machine's CA certificates (HTTPS may be re-signed on the way to the
# package registries, so pip inside the build needs them). Its root filesystem is kept as a tarball in
# the cache folder, so the next run only has to `docker import` it.
#
#   DOCKER_HOST=unix:///path/docker.sock scripts/docker-base-image.sh [TAG]
#
# Needs root and debootstrap. Environment: DOCKER (client, default `docker`), HP_CACHE_DIR (default
# /var/cache/heads-positions). The mirror is read from the apt sources at run time, never written here.
set -euo pipefail

TAG=${1:-python:3.11-slim}
DOCKER=${DOCKER:-docker}
CACHE=${HP_CACHE_DIR:-/var/cache/heads-positions}
TARBALL=$CACHE/python-3.11-slim-standin.tar
SUITE=bookworm

log() { printf '[docker-base-image] %s\n' "$*" >&2; }

apt_mirror() {
    local sources=/etc/apt/sources.list.d/debian.sources
    if [[ -r $sources ]]; then
        awk '/^URIs:/ { print $2; exit }' "$sources"
    elif [[ -r /etc/apt/sources.list ]]; then
        awk '$1 == "deb" && $0 !~ /security/ { for (i = 2; i <= NF; i++) if ($i ~ /^https?:/) { print $i; exit } }' \
            /etc/apt/sources.list
    fi
}

make_rootfs() {
    local rootfs=$1 mirror
    mirror=$(apt_mirror)
    [[ -n $mirror ]] || { log "no Debian mirror found in /etc/apt/sources.list.d/debian.sources or /etc/apt/sources.list"; return 1; }
    log "debootstrap $SUITE from the apt mirror into $rootfs (about 1-2 minutes)"
    debootstrap --variant=minbase --include=python3,python3-venv,ca-certificates \
        "$SUITE" "$rootfs" "$mirror" >"$CACHE/debootstrap.log" 2>&1 \
        || { log "debootstrap failed; the end of $CACHE/debootstrap.log:"; tail -n 20 "$CACHE/debootstrap.log" >&2; return 1; }

    # The image's apt uses the same mirror as this machine.
    if [[ -r /etc/apt/sources.list.d/debian.sources ]]; then
        rm -f "$rootfs/etc/apt/sources.list"
        cp /etc/apt/sources.list.d/debian.sources "$rootfs/etc/apt/sources.list.d/debian.sources"
    else
        cp /etc/apt/sources.list "$rootfs/etc/apt/sources.list"
    fi
    # This machine's CA certificates, including any that re-sign HTTPS on the way out.
    mkdir -p "$rootfs/usr/local/share/ca-certificates"
    cp /usr/local/share/ca-certificates/*.crt "$rootfs/usr/local/share/ca-certificates/" 2>/dev/null || true
    cp /etc/ssl/certs/ca-certificates.crt "$rootfs/etc/ssl/certs/ca-certificates.crt"

    # As in the official image: `python` is python3.11, and no caches or docs.
    ln -sf /usr/bin/python3 "$rootfs/usr/local/bin/python"
    ln -sf /usr/bin/python3 "$rootfs/usr/local/bin/python3"
    rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/* "$rootfs"/usr/share/doc/* \
        "$rootfs"/usr/share/man/* "$rootfs"/usr/share/locale/* "$rootfs"/var/log/*.log "$rootfs"/tmp/*
}

if [[ ! -s $TARBALL ]]; then
    command -v debootstrap >/dev/null || { log "debootstrap is not installed (apt-get install -y debootstrap)"; exit 1; }
    mkdir -p "$CACHE"
    ROOTFS=$(mktemp -d "$CACHE/rootfs.XXXXXX")
    cleanup() {
        # debootstrap mounts /proc and /sys inside the rootfs; never delete through a mount.
        for m in proc sys dev/pts dev; do umount -l "$ROOTFS/$m" 2>/dev/null || true; done
        rm -rf --one-file-system "$ROOTFS"
    }
    trap cleanup EXIT
    make_rootfs "$ROOTFS"
    tar --numeric-owner -C "$ROOTFS" -cf "$TARBALL.part" .
    mv "$TARBALL.part" "$TARBALL"
    log "root filesystem cached in $TARBALL ($(du -h "$TARBALL" | cut -f1))"
fi

log "importing $TARBALL as $TAG"
"$DOCKER" import \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'ENV LANG=C.UTF-8' \
    --change 'ENV PIP_CERT=/etc/ssl/certs/ca-certificates.crt' \
    --change 'ENV SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt' \
    --change 'CMD ["python3"]' \
    --message "stand-in for python:3.11-slim: Debian $SUITE python3 via debootstrap" \
    "$TARBALL" "$TAG" >/dev/null
log "tagged $TAG"
