#!/usr/bin/env bash
# Set up virtbench on Debian 12, as root: Debian's packages, then a virtualenv in .venv.
#   bash scripts/setup.sh          what the main job needs (the quick study: our kernels, QEMU, the guest image)
#   bash scripts/setup.sh --all    every environment kind, every benchmark's tools, and the tests' servers
# Idempotent: a second run only checks. Used by the README's commands and by CI.
set -euo pipefail
cd "$(dirname "$0")/.."

all=0
case "${1:-}" in
  "") ;;
  --all) all=1 ;;
  *) echo "setup: unknown option '$1'; use: bash scripts/setup.sh [--all]" >&2; exit 2 ;;
esac

PACKAGES=(
  python3 python3-venv                      # the tool itself
  build-essential libgmp-dev libmpfr-dev    # our kernels: himeno, stream, pi (static)
  qemu-system-x86 qemu-utils                # guests
  ovmf                                      # qemu:firmware=ovmf (UEFI; 7.7 MB)
  mmdebstrap e2fsprogs busybox-static cpio  # the guest image and its small initramfs
  iproute2 kmod procps util-linux           # network namespaces, taps, module loading, findmnt
)
if [ "$all" = 1 ]; then PACKAGES+=(
  nfs-ganesha nfs-ganesha-vfs rpcbind       # backing=nfs: a user-space NFS server per guest
  qemu-block-extra                          # ... and QEMU's nfs:// block driver (a Recommends
                                            # of qemu-system-x86, which the main job skips)
  podman crun runc runsc                    # container and gvisor kinds (no daemon; runc:
                                            # crun 1.8 refuses a hybrid cgroup v1 host)
  linux-perf                                # KVM exit profiles (perf kvm stat, kvm:kvm_exit)
  fio hdparm bonnie++                       # disk benchmarks on bare metal
  iperf3 sockperf iputils-ping              # network benchmarks (both ends run here)
  openssh-client openssh-server             # scp per cipher (a private sshd, never the system's)
  ncbi-blast+                               # the BLAST application benchmark
  nginx-light wrk                           # the nginx workload (server and its client)
  hpcc openmpi-bin                          # the hpcc workload (the HPC Challenge under MPI)
  gnugo hmmer povray bzip2 gcc xalan x264 stockfish   # the cpu-suite workload
  postgresql-15                             # the pgbench workload (PostgreSQL 15 and pgbench)
  redis-tools                               # the redis workload's redis-benchmark (its server: below)
  libvirt-daemon-system libvirt-clients     # the libvirt kind (tests start their own libvirtd)
  libvirt-dev pkg-config libxml2-utils      # its Python binding; virt-xml-validate
  chromium                                  # headless check of the HTML report (tests)
  texlive-latex-recommended poppler-utils   # pdflatex (booktabs) and pdftoppm: the LaTeX
                                            # report compiled and rendered (tests)
  postgresql                                # the shared store (tests start their own server)
  redis-server                              # the fleet's broker (tests start their own server)
  dpkg-dev                                  # dpkg-scanpackages: the fake apt suite of the
                                            # `qemu fetch` live test
); fi
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  # Installing a daemon's package (libvirtd, postgresql, redis-server, rpcbind) must not start it: virtbench and its tests start
  # their own, with their own configuration. A policy-rc.d answering 101 ("not allowed") says
  # so to invoke-rc.d and deb-systemd-invoke for the length of the install, unless one exists.
  policy=""
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    policy=/usr/sbin/policy-rc.d
    printf '#!/bin/sh\nexit 101\n' > "$policy" && chmod 755 "$policy"
    trap 'rm -f "$policy"' EXIT
  fi
  apt-get update -q
  # The main job's packages without their recommendations (QEMU's GTK front end, ...);
  # --all installs as Debian means it.
  recommends=--no-install-recommends; [ "$all" = 0 ] || recommends=
  apt-get install -y -q $recommends "${missing[@]}"
  [ -z "$policy" ] || { rm -f "$policy"; trap - EXIT; }
fi

# Debian's own python3 (3.11 on bookworm), whatever else is on PATH.
PY=/usr/bin/python3
[ -x .venv/bin/python ] || "$PY" -m venv .venv
if [ "$all" = 1 ]; then
  .venv/bin/pip install -q --disable-pip-version-check -e '.[test,fleet,web]'
  # libvirt's binding, built against the system's libvirt (same version)
  .venv/bin/pip install -q --disable-pip-version-check \
    "libvirt-python==$(pkg-config --modversion libvirt)"
else
  .venv/bin/pip install -q --disable-pip-version-check -e '.[web]'    # web: virtbench serve
fi
echo "setup: ready (.venv/bin/virtbench)"
