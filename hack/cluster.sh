#!/usr/bin/env bash
# A real single-node Kubernetes cluster on this machine, without Docker or kind: etcd,
# kube-apiserver, kube-controller-manager, kube-scheduler, containerd (CRI), the kubelet and
# kube-proxy, each started by this script with its own state folder, ports and socket. Pods
# get their own IPs on a CNI bridge, ClusterIP Services work, Jobs run. almanac's end-to-end
# suite (`make e2e`) runs against it; it is also the way to try the chart by hand.
#
#   hack/cluster.sh prepare          install the packages and build the binaries it needs
#   hack/cluster.sh up [ARCHIVE...]  prepare, start the cluster, import the test images (pause,
#                                    busybox) and the given OCI image archives
#   hack/cluster.sh load ARCHIVE...  import OCI image archives into the node's containerd
#   hack/cluster.sh env              print the cluster's facts as shell assignments
#                                    (eval "$(hack/cluster.sh env)"; then kubectl works)
#   hack/cluster.sh status           say whether it runs, component by component
#   hack/cluster.sh restart kube-apiserver
#                                    stop the API server and start it again (the fault suite)
#   hack/cluster.sh down             stop everything `up` started (by PID), restore every global
#                                    change it made, and remove the state folder; safe to run
#                                    first, twice, or after a run that was killed
#
# Needs root (links, network namespaces, iptables, cgroups, mounts, sysctls), and installs
# containerd, runc, the CNI plugins, iptables, nftables and busybox-static with apt when they
# are missing. The Kubernetes binaries (v1.36.3, with version ldflags) are built from the
# pinned tools module by hack/envtest.sh --cluster and cached outside the clone.
#
# What it changes outside its state folder, and what `down` restores (recorded by `up` in
# $STATE/record before anything starts):
#   - sysctls: ip_forward, bridge-nf-call-iptables, and what the kubelet sets (overcommit,
#     panic, panic_on_oops, keyring limits): every sysctl that differs from the record is put
#     back, except counters that the kernel changes by itself;
#   - links and routes: the port-less bridge $HOST_IF carrying the node and API server
#     address, the CNI bridge $CNI_IF and the Pods' veths, the service range routed to $HOST_IF;
#     network namespaces the CRI made for Pods;
#   - iptables and nftables: the chains and rules the kubelet, kube-proxy and the CNI plugins
#     add (KUBE-*, CNI-*), and tables that did not exist before;
#   - cgroups: the kubelet's /kubepods hierarchy in every controller;
#   - folders the kubelet, containerd and libcni write whatever their configuration says
#     (/var/lib/kubelet, /var/log/containers, /var/log/pods, /var/lib/cni, /run/containerd,
#     /run/netns),
#     removed when `up` created them;
#   - mounts: everything mounted below the state folder and the Pods' network namespaces.
#
# Settings (environment): ALMANAC_CLUSTER_DIR (the state folder, default
# ${TMPDIR:-/tmp}/almanac-cluster), ALMANAC_CLUSTER_PORT_OFFSET (added to every port, so that
# two clusters can run at once with different state folders and different HOST_IF names),
# ALMANAC_CLUSTER_HOST_IF, ALMANAC_CLUSTER_NET (the second octet of 10.x.0.0/16 networks).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
STATE=${ALMANAC_CLUSTER_DIR:-${TMPDIR:-/tmp}/almanac-cluster}
NODE=almanac-node
HOST_IF=${ALMANAC_CLUSTER_HOST_IF:-almanac0}
CNI_IF=${HOST_IF}cni
NET=${ALMANAC_CLUSTER_NET:-217}
HOST_IP=10.$NET.0.1
POD_CIDR=10.$((NET + 1)).0.0/24
CLUSTER_CIDR=10.$((NET + 1)).0.0/16
SVC_CIDR=10.$((NET + 2)).0.0/16
off=${ALMANAC_CLUSTER_PORT_OFFSET:-0}
APISERVER_PORT=$((26443 + off))
ETCD_PORT=$((22379 + off))
ETCD_PEER_PORT=$((22380 + off))
KUBELET_PORT=$((20250 + off))
KUBELET_HEALTHZ_PORT=$((20248 + off))
KCM_PORT=$((20257 + off))
SCHEDULER_PORT=$((20259 + off))
PROXY_HEALTHZ_PORT=$((20256 + off))
PROXY_METRICS_PORT=$((20249 + off))
PAUSE_IMAGE=registry.k8s.io/pause:3.10
BUSYBOX_IMAGE=docker.io/library/busybox:almanac-e2e
# Folders outside $STATE that containerd 1.6, the kubelet and libcni use whatever their
# configuration says.
OUTSIDE=(/var/lib/kubelet /var/log/containers /var/log/pods /var/lib/cni /run/containerd /run/netns)
# Sysctls the kernel changes by itself: never "restored".
VOLATILE='^(fs\.(dentry-state|file-nr|inode-nr|inode-state|aio-nr|quota\.)|kernel\.(ns_last_pid|random\.|pty\.nr|tainted|core_uses_pid$)|net\.netfilter\.nf_conntrack_count|vm\.stat_refresh)'

KUBECONFIG_ADMIN=$STATE/pki/admin.kubeconfig
CTR_SOCK=$STATE/containerd/containerd.sock

t0=$(($(date +%s%N) / 1000000))
ts() { awk -v ms="$(($(date +%s%N) / 1000000 - t0))" -v m="$*" 'BEGIN { printf "%7.1fs  %s\n", ms / 1000, m }' >&2; }
die() { echo "hack/cluster.sh: $*" >&2; exit 1; }

need_root() { [[ $(id -u) == 0 ]] || die "needs root (links, network namespaces, iptables, cgroups, mounts, sysctls)"; }

bins() { B=$("$here/envtest.sh" --print); }
# bins_version names the binaries' versions (the last part of their cache folder).
bins_version() { basename "$("$here/envtest.sh" --print)"; }
CACHE=${ALMANAC_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/almanac}

# ensure_packages installs what the node needs from Debian's packages, when missing.
ensure_packages() {
	local missing=()
	command -v containerd >/dev/null || missing+=(containerd)
	[[ -x /usr/lib/cni/bridge && -x /usr/lib/cni/host-local && -x /usr/lib/cni/portmap ]] || missing+=(containernetworking-plugins)
	command -v iptables >/dev/null || missing+=(iptables)
	command -v nft >/dev/null || missing+=(nftables)
	[[ -x /bin/busybox ]] && /bin/busybox --list 2>/dev/null | grep -qx wget || missing+=(busybox-static)
	command -v gcc >/dev/null || missing+=(gcc)
	[[ -e /usr/lib/x86_64-linux-gnu/libc.a || -e /usr/lib/aarch64-linux-gnu/libc.a ]] || missing+=(libc6-dev)
	((${#missing[@]} == 0)) && return
	ts "installing ${missing[*]} with apt"
	apt-get update -qq >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
}

# --- recording the machine before anything changes, so that `down` can restore it ---------

record() {
	local r=$STATE/record
	mkdir -p "$r"
	# One line per sysctl; those listed on several lines are read-only lists (core_modes).
	sysctl -a 2>/dev/null | grep -Ev "$VOLATILE" |
		awk -F' = ' '{ n[$1]++; line[NR] = $0; key[NR] = $1 } END { for (i = 1; i <= NR; i++) if (n[key[i]] == 1) print line[i] }' > "$r/sysctl" || true
	for d in "${OUTSIDE[@]}"; do [[ -e $d ]] && echo "$d"; done > "$r/outside"
	for h in /sys/fs/cgroup/*/; do [[ -d ${h}kubepods ]] && echo "${h}kubepods"; done > "$r/cgroups"
	for t in filter nat mangle raw; do
		iptables -t "$t" -S 2>/dev/null | sed "s/^/$t /"
	done > "$r/iptables"
	for t in filter nat mangle raw; do
		ip6tables -t "$t" -S 2>/dev/null | sed "s/^/$t /"
	done > "$r/ip6tables"
	nft list tables 2>/dev/null > "$r/nft-tables" || true
	ip netns list 2>/dev/null | awk '{ print $1 }' > "$r/netns" || true
}

# --- images without Docker: OCI archives made with tar and sha256sum ----------------------

# oci_archive NAME ROOTFS OUT ENTRYPOINT_JSON: a one-layer OCI image archive that
# `ctr images import` accepts, named NAME, reproducible (sorted, owner 0, mtime 0).
oci_archive() {
	local name=$1 rootfs=$2 out=$3 entry=$4 t
	t=$(mktemp -d)
	mkdir -p "$t/blobs/sha256"
	tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -C "$rootfs" -cf "$t/layer" .
	local ld ls cd cs md ms
	ld=$(sha256sum "$t/layer" | cut -d' ' -f1) ls=$(stat -c %s "$t/layer")
	mv "$t/layer" "$t/blobs/sha256/$ld"
	printf '{"architecture":"%s","os":"linux","config":{"Env":["PATH=/bin"],"Entrypoint":%s},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]}}' \
		"$(go env GOARCH)" "$entry" "$ld" > "$t/config"
	cd=$(sha256sum "$t/config" | cut -d' ' -f1) cs=$(stat -c %s "$t/config")
	mv "$t/config" "$t/blobs/sha256/$cd"
	printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:%s","size":%s},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":"sha256:%s","size":%s}]}' \
		"$cd" "$cs" "$ld" "$ls" > "$t/manifest"
	md=$(sha256sum "$t/manifest" | cut -d' ' -f1) ms=$(stat -c %s "$t/manifest")
	mv "$t/manifest" "$t/blobs/sha256/$md"
	printf '{"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%s","size":%s,"annotations":{"io.containerd.image.name":"%s","org.opencontainers.image.ref.name":"%s"}}]}' \
		"$md" "$ms" "$name" "$name" > "$t/index.json"
	printf '{"imageLayoutVersion":"1.0.0"}' > "$t/oci-layout"
	tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -C "$t" -cf "$out" oci-layout index.json blobs
	rm -rf "$t"
}

# test_images builds the pause image (the Kubernetes module's own pause.c, static) and a
# busybox image (Debian's busybox-static, every applet linked), cached outside the clone and
# keyed by what they are made of; it sets IMAGES to their folder.
test_images() {
	local t kdir bbv
	bbv=$(dpkg-query -W -f='${Version}' busybox-static 2>/dev/null || /bin/busybox 2>&1 | head -1 | awk '{ print $2 }')
	IMAGES=$CACHE/cluster-images/$(bins_version)-busybox-${bbv//[^a-zA-Z0-9.+-]/_}
	[[ -f $IMAGES/pause.tar && -f $IMAGES/busybox.tar ]] && return
	mkdir -p "$IMAGES"
	t=$(mktemp -d)
	kdir=$(cd "$here/envtest" && GOFLAGS=-mod=readonly GONOSUMDB=k8s.io/kubernetes go list -m -f '{{.Dir}}' k8s.io/kubernetes)
	mkdir -p "$t/pause"
	gcc -Os -static -DVERSION=v3.10-almanac -o "$t/pause/pause" "$kdir/build/pause/linux/pause.c"
	strip "$t/pause/pause"
	oci_archive "$PAUSE_IMAGE" "$t/pause" "$t/pause.tar" '["/pause"]'
	mkdir -p "$t/bb/bin" "$t/bb/tmp" "$t/bb/etc" "$t/bb/root"
	chmod 1777 "$t/bb/tmp"
	cp /bin/busybox "$t/bb/bin/"
	for a in $(/bin/busybox --list); do [[ $a == busybox ]] || ln -sf busybox "$t/bb/bin/$a"; done
	printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n' > "$t/bb/etc/passwd"
	printf 'root:x:0:\nnobody:x:65534:\n' > "$t/bb/etc/group"
	oci_archive "$BUSYBOX_IMAGE" "$t/bb" "$t/busybox.tar" '["/bin/sh"]'
	# Renamed into place last, so that an interrupted build never looks cached.
	mv "$t/pause.tar" "$t/busybox.tar" "$IMAGES/"
	rm -rf "$t"
	ts "built test images $PAUSE_IMAGE and $BUSYBOX_IMAGE into $IMAGES"
}

load() {
	local a
	for a in "$@"; do
		[[ -f $a ]] || die "no image archive $a"
		ctr --address "$CTR_SOCK" -n k8s.io images import --all-platforms "$a" >/dev/null
		ts "imported $(basename "$a")"
	done
}

# --- processes ----------------------------------------------------------------------------

start() { # start NAME CMD...: in its own session, output to $STATE/logs/NAME.log
	local n=$1
	shift
	setsid "$@" >> "$STATE/logs/$n.log" 2>&1 < /dev/null &
	echo $! > "$STATE/pids/$n"
	ts "started $n (pid $!)"
}

alive() { [[ -f $STATE/pids/$1 ]] && kill -0 "$(cat "$STATE/pids/$1")" 2>/dev/null; }

stop() { # stop NAME: SIGTERM, up to 20 s, then SIGKILL; by PID only
	alive "$1" || return 0
	local p i
	p=$(cat "$STATE/pids/$1")
	kill -TERM "$p"
	for i in $(seq 1 40); do kill -0 "$p" 2>/dev/null || break; sleep 0.5; done
	kill -0 "$p" 2>/dev/null && kill -KILL "$p"
	ts "stopped $1 ($p)"
}

wait_for() { # wait_for WHAT SECONDS CMD...
	local what=$1 secs=$2 i
	shift 2
	for i in $(seq 1 $((secs * 2))); do
		if "$@" >/dev/null 2>&1; then
			ts "$what"
			return 0
		fi
		sleep 0.5
	done
	echo "hack/cluster.sh: timed out after ${secs}s waiting for: $what; the logs are in $STATE/logs" >&2
	return 1
}

kc() { "$B/kubectl" --kubeconfig "$KUBECONFIG_ADMIN" "$@"; }

# --- up -----------------------------------------------------------------------------------

pki() {
	local d=$STATE/pki api="https://$HOST_IP:$APISERVER_PORT"
	[[ -f $d/ca.crt ]] && return
	mkdir -p "$d"
	(
		cd "$d"
		openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 30 -subj "/CN=almanac-e2e-ca" 2>/dev/null
		cert() { # cert NAME CN O EKU [SAN]
			openssl req -newkey rsa:2048 -nodes -keyout "$1.key" -out "$1.csr" -subj "/CN=$2${3:+/O=$3}" 2>/dev/null
			{
				echo "keyUsage=critical,digitalSignature,keyEncipherment"
				echo "extendedKeyUsage=$4"
				[[ -n ${5:-} ]] && echo "subjectAltName=$5"
			} > "$1.ext"
			openssl x509 -req -in "$1.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -out "$1.crt" -days 30 -extfile "$1.ext" 2>/dev/null
			rm -f "$1.csr" "$1.ext"
		}
		cert apiserver kube-apiserver "" serverAuth "IP:$HOST_IP,IP:${SVC_CIDR%.0/16}.1,IP:127.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
		cert apiserver-kubelet-client kube-apiserver-kubelet-client system:masters clientAuth
		cert kubelet-server "system:node:$NODE" system:nodes serverAuth "IP:$HOST_IP,IP:127.0.0.1,DNS:$NODE,DNS:localhost"
		cert admin almanac-e2e-admin system:masters clientAuth
		cert kubelet "system:node:$NODE" system:nodes clientAuth
		cert controller-manager system:kube-controller-manager "" clientAuth
		cert scheduler system:kube-scheduler "" clientAuth
		cert kube-proxy system:kube-proxy "" clientAuth
		openssl genrsa -out sa.key 2048 2>/dev/null
		openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
		for n in admin kubelet controller-manager scheduler kube-proxy; do
			cat > "$n.kubeconfig" <<-KC
				apiVersion: v1
				kind: Config
				clusters:
				- name: almanac-e2e
				  cluster: {server: "$api", certificate-authority: "$d/ca.crt"}
				users:
				- name: $n
				  user: {client-certificate: "$d/$n.crt", client-key: "$d/$n.key"}
				contexts:
				- name: almanac-e2e
				  context: {cluster: almanac-e2e, user: $n}
				current-context: almanac-e2e
			KC
		done
	)
	ts "certificates and kubeconfigs in $d"
}

network() {
	ip link show "$HOST_IF" >/dev/null 2>&1 || ip link add "$HOST_IF" type bridge
	ip link set "$HOST_IF" up
	ip addr replace "$HOST_IP/32" dev "$HOST_IF"
	# ClusterIP traffic must never follow the default route off the machine.
	ip route replace "$SVC_CIDR" dev "$HOST_IF"
	sysctl -qw net.ipv4.ip_forward=1
	sysctl -qw net.bridge.bridge-nf-call-iptables=1 2>/dev/null || true
	ts "network: $HOST_IF $HOST_IP, services $SVC_CIDR, Pods $POD_CIDR on $CNI_IF"
}

containerd_up() {
	mkdir -p "$STATE/containerd" "$STATE/cni/net.d" "$STATE/cni/ipam" "$STATE/cni/cache"
	cat > "$STATE/containerd/config.toml" <<-TOML
		version = 2
		root = "$STATE/containerd/root"
		state = "$STATE/containerd/state"
		[grpc]
		  address = "$CTR_SOCK"
		[ttrpc]
		  address = "$CTR_SOCK.ttrpc"
		[plugins."io.containerd.internal.v1.opt"]
		  path = "$STATE/containerd/opt"
		[plugins."io.containerd.grpc.v1.cri"]
		  sandbox_image = "$PAUSE_IMAGE"
		  # This VM lacks CAP_SYS_RESOURCE: runc cannot give the pause container
		  # oom_score_adj=-998 ("can't get final child's PID from pipe: EOF"); clamp it.
		  restrict_oom_score_adj = true
		  [plugins."io.containerd.grpc.v1.cri".containerd]
		    snapshotter = "overlayfs"
		    default_runtime_name = "runc"
		    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
		      runtime_type = "io.containerd.runc.v2"
		      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
		        SystemdCgroup = false
		        Root = "$STATE/containerd/runc"
		  [plugins."io.containerd.grpc.v1.cri".cni]
		    bin_dir = "/usr/lib/cni"
		    conf_dir = "$STATE/cni/net.d"
	TOML
	cat > "$STATE/cni/net.d/10-almanac.conflist" <<-JSON
		{
		  "cniVersion": "1.0.0",
		  "name": "almanac-e2e",
		  "plugins": [
		    {"type": "bridge", "bridge": "$CNI_IF", "isGateway": true, "ipMasq": true, "hairpinMode": true,
		     "ipam": {"type": "host-local", "dataDir": "$STATE/cni/ipam",
		              "ranges": [[{"subnet": "$POD_CIDR"}]], "routes": [{"dst": "0.0.0.0/0"}]}},
		    {"type": "portmap", "capabilities": {"portMappings": true}}
		  ]
		}
	JSON
	start containerd containerd --config "$STATE/containerd/config.toml"
	wait_for "containerd answers on $CTR_SOCK" 30 ctr --address "$CTR_SOCK" version
}

apiserver_start() {
	local p=$STATE/pki
	start kube-apiserver "$B/kube-apiserver" \
		--etcd-servers="http://127.0.0.1:$ETCD_PORT" \
		--bind-address="$HOST_IP" --secure-port="$APISERVER_PORT" --advertise-address="$HOST_IP" \
		--service-cluster-ip-range="$SVC_CIDR" \
		--client-ca-file="$p/ca.crt" --tls-cert-file="$p/apiserver.crt" --tls-private-key-file="$p/apiserver.key" \
		--kubelet-client-certificate="$p/apiserver-kubelet-client.crt" --kubelet-client-key="$p/apiserver-kubelet-client.key" \
		--kubelet-certificate-authority="$p/ca.crt" --kubelet-preferred-address-types=InternalIP \
		--service-account-issuer=https://kubernetes.default.svc.cluster.local \
		--service-account-key-file="$p/sa.pub" --service-account-signing-key-file="$p/sa.key" \
		--requestheader-client-ca-file="$p/ca.crt" --requestheader-allowed-names=front-proxy-client \
		--requestheader-username-headers=X-Remote-User --requestheader-group-headers=X-Remote-Group \
		--requestheader-extra-headers-prefix=X-Remote-Extra- \
		--authorization-mode=Node,RBAC --enable-admission-plugins=NodeRestriction \
		--allow-privileged=true --profiling=false --cert-dir="$STATE/apiserver"
}

control_plane_up() {
	local p=$STATE/pki
	start etcd "$B/etcd" --name almanac-e2e --data-dir "$STATE/etcd" \
		--listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
		--listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
		--initial-cluster "almanac-e2e=http://127.0.0.1:$ETCD_PEER_PORT" --listen-metrics-urls '' \
		--unsafe-no-fsync --log-level warn
	apiserver_start
	wait_for "kube-apiserver ready on https://$HOST_IP:$APISERVER_PORT" 120 kc get --raw /readyz
	start kube-controller-manager "$B/kube-controller-manager" \
		--kubeconfig="$p/controller-manager.kubeconfig" \
		--authentication-kubeconfig="$p/controller-manager.kubeconfig" --authorization-kubeconfig="$p/controller-manager.kubeconfig" \
		--bind-address=127.0.0.1 --secure-port="$KCM_PORT" \
		--cluster-signing-cert-file="$p/ca.crt" --cluster-signing-key-file="$p/ca.key" \
		--root-ca-file="$p/ca.crt" --service-account-private-key-file="$p/sa.key" \
		--use-service-account-credentials=true --service-cluster-ip-range="$SVC_CIDR" \
		--leader-elect=false --profiling=false
	start kube-scheduler "$B/kube-scheduler" \
		--kubeconfig="$p/scheduler.kubeconfig" \
		--authentication-kubeconfig="$p/scheduler.kubeconfig" --authorization-kubeconfig="$p/scheduler.kubeconfig" \
		--bind-address=127.0.0.1 --secure-port="$SCHEDULER_PORT" --leader-elect=false --profiling=false
}

node_up() {
	local p=$STATE/pki
	mkdir -p "$STATE/kubelet" "$STATE/pod-logs" "$STATE/kubelet-plugins"
	cat > "$STATE/kubelet/config.yaml" <<-YAML
		apiVersion: kubelet.config.k8s.io/v1beta1
		kind: KubeletConfiguration
		# This VM is cgroup v1; kubelet 1.35+ refuses it unless told otherwise.
		failCgroupV1: false
		cgroupDriver: cgroupfs
		containerRuntimeEndpoint: unix://$CTR_SOCK
		imageServiceEndpoint: unix://$CTR_SOCK
		address: $HOST_IP
		port: $KUBELET_PORT
		readOnlyPort: 0
		healthzBindAddress: 127.0.0.1
		healthzPort: $KUBELET_HEALTHZ_PORT
		authentication:
		  anonymous: {enabled: false}
		  webhook: {enabled: true}
		  x509: {clientCAFile: $p/ca.crt}
		authorization: {mode: Webhook}
		tlsCertFile: $p/kubelet-server.crt
		tlsPrivateKeyFile: $p/kubelet-server.key
		rotateCertificates: false
		podLogsDir: $STATE/pod-logs
		volumePluginDir: $STATE/kubelet-plugins
		resolvConf: /etc/resolv.conf
		failSwapOn: false
		registerNode: true
		# A busy CI machine must not evict the test's Pods.
		evictionHard: {memory.available: "100Mi", nodefs.available: "2%", imagefs.available: "2%", nodefs.inodesFree: "2%"}
		imageGCHighThresholdPercent: 98
		imageGCLowThresholdPercent: 95
	YAML
	start kubelet "$B/kubelet" --config="$STATE/kubelet/config.yaml" --kubeconfig="$p/kubelet.kubeconfig" \
		--root-dir="$STATE/kubelet" --cert-dir="$STATE/kubelet/pki" --hostname-override="$NODE" --node-ip="$HOST_IP" --v=1
	cat > "$STATE/kube-proxy.yaml" <<-YAML
		apiVersion: kubeproxy.config.k8s.io/v1alpha1
		kind: KubeProxyConfiguration
		clientConnection: {kubeconfig: $p/kube-proxy.kubeconfig}
		mode: iptables
		clusterCIDR: $CLUSTER_CIDR
		hostnameOverride: $NODE
		bindAddress: $HOST_IP
		healthzBindAddress: 127.0.0.1:$PROXY_HEALTHZ_PORT
		metricsBindAddress: 127.0.0.1:$PROXY_METRICS_PORT
		# NodePorts on the node address only: kube-proxy then leaves route_localnet alone.
		nodePortAddresses: [primary]
		# Leave the machine's conntrack settings alone.
		conntrack: {maxPerCore: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
	YAML
	start kube-proxy "$B/kube-proxy" --config="$STATE/kube-proxy.yaml"
	wait_for "node $NODE registered" 60 kc get node "$NODE"
	wait_for "node $NODE Ready" 90 kc wait --for=condition=Ready "node/$NODE" --timeout=1s
	wait_for "ServiceAccount default/default created" 60 kc get serviceaccount default
}

# prepare installs and builds what the cluster needs: once per machine, and not undone.
prepare() {
	need_root
	ensure_packages
	ts "building the Kubernetes binaries if missing (hack/envtest.sh --cluster; cached)"
	"$here/envtest.sh" --cluster >/dev/null
	bins
}

up() {
	need_root
	if [[ -d $STATE ]]; then
		ts "found $STATE from an earlier run: taking it down first"
		down
	fi
	prepare
	mkdir -p "$STATE"/{pids,logs}
	record
	pki
	test_images
	network
	containerd_up
	load "$IMAGES/pause.tar" "$IMAGES/busybox.tar" "$@"
	control_plane_up
	node_up
	ts "cluster up: export KUBECONFIG=$KUBECONFIG_ADMIN (or eval \"\$(hack/cluster.sh env)\")"
}

# --- down ---------------------------------------------------------------------------------

# down is best effort: one step that fails must not keep the others from running.
down() {
	need_root
	set +e
	down_steps
	set -e
}

down_steps() {
	if [[ ! -d $STATE ]]; then
		down_by_name
		ts "nothing to take down ($STATE does not exist)"
		return 0
	fi
	bins
	local CTR="ctr --address $CTR_SOCK -n k8s.io" i
	# 1. Let the kubelet tear the Pods down itself: CNI DEL releases IPs, veths and rules.
	if alive kube-apiserver && alive kubelet && [[ -x $B/kubectl ]]; then
		kc delete deployments,replicasets,statefulsets,daemonsets,jobs,cronjobs,horizontalpodautoscalers --all -A --wait=false >/dev/null 2>&1 || true
		kc delete pods --all -A --grace-period=0 --force --wait=false >/dev/null 2>&1 || true
		for i in $(seq 1 60); do [[ -z $($CTR tasks ls -q 2>/dev/null) ]] && break; sleep 1; done
		ts "Pods torn down by the kubelet"
	fi
	stop kube-proxy
	stop kubelet
	stop kube-scheduler
	stop kube-controller-manager
	# 2. Whatever still runs in containerd: kill, remove; the shims exit with their tasks.
	if alive containerd; then
		for i in $($CTR tasks ls -q 2>/dev/null); do $CTR tasks kill -s SIGKILL "$i" >/dev/null 2>&1 || true; done
		sleep 1
		for i in $($CTR tasks ls -q 2>/dev/null); do $CTR tasks rm -f "$i" >/dev/null 2>&1 || true; done
		for i in $($CTR containers ls -q 2>/dev/null); do $CTR containers rm "$i" >/dev/null 2>&1 || true; done
	fi
	stop containerd
	stop kube-apiserver
	stop etcd
	# Shims of a containerd that was killed: they name its socket on their command line.
	for i in $(pgrep -f "containerd-shim.*-address $CTR_SOCK"); do kill -KILL "$i" 2>/dev/null; done
	# Containers outlive a killed containerd and its shims: kill what is left in the kubelet's
	# cgroups (only those this cluster created), so that their mounts and cgroups can go.
	for h in /sys/fs/cgroup/*/; do
		[[ -d ${h}kubepods ]] || continue
		grep -qx "${h}kubepods" "$STATE/record/cgroups" 2>/dev/null && continue
		find "${h}kubepods" -name cgroup.procs -exec cat {} + 2>/dev/null
	done | sort -u | while read -r i; do kill -KILL "$i" 2>/dev/null && ts "killed container process $i"; done
	sleep 1
	# 3. kube-proxy's own chains (iptables and nftables).
	[[ -x $B/kube-proxy ]] && "$B/kube-proxy" --cleanup >/dev/null 2>&1 || true
	# 4. Mounts below the state folder (the kubelet's rshared root, volumes, overlay rootfs).
	grep -F " $STATE/" /proc/mounts | awk '{ print $2 }' | sort -r | while read -r m; do umount -l "$m" 2>/dev/null || true; done
	# 5. The Pods' network namespaces (named by the CRI: cni-<uuid>), that were not there before.
	for i in $(ip netns list 2>/dev/null | awk '/^cni-/ { print $1 }'); do
		grep -qx "$i" "$STATE/record/netns" 2>/dev/null || ip netns delete "$i" 2>/dev/null || true
	done
	down_by_name
	restore_iptables
	# 6. The kubelet's cgroups, depth first, in every controller where the record had none.
	for h in /sys/fs/cgroup/*/; do
		[[ -d ${h}kubepods ]] || continue
		grep -qx "${h}kubepods" "$STATE/record/cgroups" 2>/dev/null && continue
		find "${h}kubepods" -depth -type d -exec rmdir {} \; 2>/dev/null || true
	done
	# 7. Folders outside the state folder that this cluster created.
	if [[ -f $STATE/record/outside ]]; then
		for d in "${OUTSIDE[@]}"; do
			grep -qx "$d" "$STATE/record/outside" || rm -rf "$d"
		done
	fi
	# 8. Sysctls back to what they were.
	if [[ -f $STATE/record/sysctl ]]; then restore_sysctls; fi
	rm -rf "$STATE"
	ts "cluster down; the machine is as it was before up"
}

# down_by_name removes the links and routes this script creates, by their names.
down_by_name() {
	ip route del "$SVC_CIDR" dev "$HOST_IF" 2>/dev/null || true
	ip link del "$CNI_IF" 2>/dev/null || true
	ip link del "$HOST_IF" 2>/dev/null || true
}

restore_iptables() {
	local ipt t c new
	for ipt in iptables ip6tables; do
		command -v "$ipt" >/dev/null || continue
		for t in filter nat mangle raw; do
			# Unhook rules that jump to chains that were not there, then flush and delete them.
			local before=$STATE/record/$ipt
			mapfile -t new < <(comm -13 <(grep "^$t -N " "$before" 2>/dev/null | awk '{ print $3 }' | sort) \
				<($ipt -t "$t" -S 2>/dev/null | awk '/^-N / { print $2 }' | sort))
			$ipt -t "$t" -S 2>/dev/null | grep '^-A' | while read -r line; do
				for c in "${new[@]}"; do
					if [[ $line == *" -j $c"* || $line == *" -g $c"* ]]; then
						eval "$ipt -t $t ${line/#-A/-D}" 2>/dev/null || true
						break
					fi
				done
			done
			for c in "${new[@]}"; do $ipt -t "$t" -F "$c" 2>/dev/null || true; done
			for c in "${new[@]}"; do $ipt -t "$t" -X "$c" 2>/dev/null || true; done
			# Rules added to chains that were there (CNI's masquerading in POSTROUTING, say).
			comm -13 <(grep "^$t -A " "$before" 2>/dev/null | cut -d' ' -f2- | sort) \
				<($ipt -t "$t" -S 2>/dev/null | grep '^-A' | sort) | while read -r line; do
				eval "$ipt -t $t ${line/#-A/-D}" 2>/dev/null || true
			done
		done
	done
	# nftables tables that did not exist before (kube-proxy's, and those iptables-nft made).
	if command -v nft >/dev/null; then
		while read -r _ family name; do
			[[ -n $name ]] || continue
			grep -qx "table $family $name" "$STATE/record/nft-tables" 2>/dev/null || nft delete table "$family" "$name" 2>/dev/null || true
		done < <(nft list tables 2>/dev/null)
	fi
}

restore_sysctls() {
	local k v now
	while IFS= read -r line; do
		k=${line%% = *} v=${line#* = }
		[[ $k == "$line" ]] && continue
		now=$(sysctl -n "$k" 2>/dev/null) || continue
		# sysctl -a separates fields with tabs; compare as words.
		if [[ $(echo $now) != $(echo $v) ]]; then
			sysctl -qw "$k=$v" 2>/dev/null && ts "restored $k = $v (was $now)" || true
		fi
	done < "$STATE/record/sysctl"
}

# --- env, status --------------------------------------------------------------------------

env_() {
	bins
	cat <<-ENV
		export KUBECONFIG=$KUBECONFIG_ADMIN
		export ALMANAC_CLUSTER_DIR=$STATE
		export ALMANAC_CLUSTER_BIN=$B
		export ALMANAC_CLUSTER_NODE=$NODE
		export ALMANAC_CLUSTER_HOST_IP=$HOST_IP
		export ALMANAC_CLUSTER_APISERVER=https://$HOST_IP:$APISERVER_PORT
		export ALMANAC_CLUSTER_CONTAINERD=$CTR_SOCK
		export ALMANAC_CLUSTER_LOGS=$STATE/logs
		export PATH=$B:\$PATH
	ENV
}

# restart NAME: stop a control-plane component (SIGTERM, as a rolling restart does) and start
# it again with the same flags, then wait until it is ready. The fault suite restarts the
# API server before a boundary and a slot.
restart() {
	[[ -d $STATE/pids ]] || die "no cluster runs (no $STATE/pids)"
	bins
	case "${1:-}" in
	kube-apiserver)
		stop kube-apiserver
		apiserver_start
		wait_for "kube-apiserver ready on https://$HOST_IP:$APISERVER_PORT" 120 kc get --raw /readyz
		;;
	*) die "restart: only kube-apiserver can be restarted (got '${1:-}')" ;;
	esac
}

status() {
	local n rc=0
	for n in containerd etcd kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy; do
		if alive "$n"; then echo "$n: running (pid $(cat "$STATE/pids/$n"))"; else echo "$n: not running"; rc=1; fi
	done
	return $rc
}

case "${1:-}" in
prepare) prepare ;;
up) shift; up "$@" ;;
down) down ;;
load) shift; need_root; load "$@" ;;
env) env_ ;;
status) status ;;
restart) shift; need_root; restart "$@" ;;
*) sed -n '2,/^set -euo/p' "$0" | sed 's/^# \{0,1\}//; /^set -euo/d' >&2; exit 2 ;;
esac
