// The configuration files of the test node's daemons (test/support/kube-node.ts),
// as text. JSON where a daemon reads YAML: JSON is YAML too.

/** Pods get addresses from this range (the node's share of POD_CIDR). */
export const POD_SUBNET = "10.244.0.0/24";
export const POD_CIDR = "10.244.0.0/16";
export const SERVICE_CIDR = "10.96.0.0/16";
/** The "kubernetes" Service: the first address of SERVICE_CIDR. */
export const KUBERNETES_SERVICE_IP = "10.96.0.1";
export const CLUSTER_DNS_IP = "10.96.0.10";
export const CLUSTER_DOMAIN = "cluster.local";
export const NODE_NAME = "docservice-node";
/** Node-wide names, fixed so that a crashed run's leftovers can be found. */
export const CNI_NETWORK = "docservice-kube";
export const BRIDGE = "docservice0";
export const CGROUP_ROOT = "docservice-kube";
export const CNI_BIN_DIR = "/usr/lib/cni";
export const RUNC = "/usr/sbin/runc";

/** containerd 1.6 (Debian) with everything it keeps under `dir`, and CRI set up for this machine. */
export function containerdConfig(dir: string): string {
  return `version = 2
root = "${dir}/containerd/root"
state = "${dir}/containerd/state"
# Snapshotters and tracing this node has no use for (each logs an error when it cannot start).
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]

[grpc]
  address = "${dir}/containerd.sock"

[plugins."io.containerd.internal.v1.opt"]
  path = "${dir}/containerd/opt"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "registry.k8s.io/pause:3.10"
  # Root here lacks CAP_SYS_RESOURCE: a container may not get a lower oom_score_adj than containerd's.
  restrict_oom_score_adj = true
  # Pod network namespaces under the state dir, not /var/run/netns.
  netns_mounts_under_state_dir = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "${CNI_BIN_DIR}"
    conf_dir = "${dir}/cni/net.d"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        BinaryName = "${RUNC}"
        Root = "${dir}/runc"
        SystemdCgroup = false
`;
}

/** The bridge network (containerd adds the loopback plugin itself). */
export function cniConfig(dir: string): string {
  return JSON.stringify({
    cniVersion: "0.4.0",
    name: CNI_NETWORK,
    plugins: [
      {
        type: "bridge",
        bridge: BRIDGE,
        isGateway: true,
        ipMasq: true,
        hairpinMode: true,
        ipam: {
          type: "host-local",
          ranges: [[{ subnet: POD_SUBNET }]],
          routes: [{ dst: "0.0.0.0/0" }],
          dataDir: `${dir}/cni/ipam`,
        },
      },
      { type: "portmap", capabilities: { portMappings: true } },
    ],
  }, null, 2);
}

export interface KubeletConfigOptions {
  dir: string;
  address: string;
  port: number;
  healthzPort: number;
  caFile: string;
  serving: { cert: string; key: string };
}

export function kubeletConfig(o: KubeletConfigOptions): string {
  return JSON.stringify({
    apiVersion: "kubelet.config.k8s.io/v1beta1",
    kind: "KubeletConfiguration",
    address: o.address,
    port: o.port,
    readOnlyPort: 0,
    healthzBindAddress: "127.0.0.1",
    healthzPort: o.healthzPort,
    tlsCertFile: o.serving.cert,
    tlsPrivateKeyFile: o.serving.key,
    // kube-apiserver authenticates with a client certificate for logs, exec and port-forward;
    // tokens are checked with a TokenReview, and everything is authorized with a SubjectAccessReview.
    authentication: { anonymous: { enabled: false }, webhook: { enabled: true }, x509: { clientCAFile: o.caFile } },
    authorization: { mode: "Webhook" },
    containerRuntimeEndpoint: `unix://${o.dir}/containerd.sock`,
    // No systemd here, and cgroups are v1.
    cgroupDriver: "cgroupfs",
    failCgroupV1: false,
    failSwapOn: false,
    // Pods' cgroups under /docservice-kube in each hierarchy, where a leftover can be found.
    cgroupRoot: `/${CGROUP_ROOT}`,
    clusterDNS: [CLUSTER_DNS_IP],
    clusterDomain: CLUSTER_DOMAIN,
    podLogsDir: `${o.dir}/pod-logs`,
    volumePluginDir: `${o.dir}/volume-plugins`,
    // Imported images can be pulled from nowhere: never garbage-collect them, and no eviction on a full disk.
    imageGCHighThresholdPercent: 100,
    imageGCLowThresholdPercent: 99,
    evictionHard: { "memory.available": "50Mi", "nodefs.available": "1%", "imagefs.available": "1%", "nodefs.inodesFree": "1%" },
    rotateCertificates: false,
    serializeImagePulls: false,
  }, null, 2);
}

export function kubeProxyConfig(kubeconfig: string, healthzPort: number, metricsPort: number): string {
  return JSON.stringify({
    apiVersion: "kubeproxy.config.k8s.io/v1alpha1",
    kind: "KubeProxyConfiguration",
    mode: "iptables",
    clientConnection: { kubeconfig },
    hostnameOverride: NODE_NAME,
    clusterCIDR: POD_CIDR,
    healthzBindAddress: `127.0.0.1:${healthzPort}`,
    metricsBindAddress: `127.0.0.1:${metricsPort}`,
    // 0: leave the host's conntrack sysctls as they are.
    conntrack: { maxPerCore: 0, tcpEstablishedTimeout: "0s", tcpCloseWaitTimeout: "0s" },
    // true would set net.ipv4.conf.all.route_localnet on the host.
    iptables: { localhostNodePorts: false },
  }, null, 2);
}

export function schedulerConfig(kubeconfig: string): string {
  return JSON.stringify({
    apiVersion: "kubescheduler.config.k8s.io/v1",
    kind: "KubeSchedulerConfiguration",
    clientConnection: { kubeconfig },
    leaderElection: { leaderElect: false },
  }, null, 2);
}

/**
 * CoreDNS as a Deployment behind the kube-dns Service at CLUSTER_DNS_IP, as
 * clusters run it. Its image is imported from $CACHE/images/coredns.tar.
 */
export function coreDnsManifests(image: string): string {
  const labels = { "k8s-app": "kube-dns" };
  const metadata = (name: string) => ({ name, namespace: "kube-system", labels });
  const corefile = `.:53 {
    errors
    health :8080
    ready :8181
    kubernetes ${CLUSTER_DOMAIN} in-addr.arpa ip6.arpa {
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
        ttl 30
    }
    forward . /etc/resolv.conf
    cache 30
}
`;
  const items = [
    { apiVersion: "v1", kind: "ServiceAccount", metadata: metadata("coredns") },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: { name: "docservice:coredns", labels },
      rules: [
        { apiGroups: [""], resources: ["endpoints", "services", "pods", "namespaces"], verbs: ["list", "watch"] },
        { apiGroups: ["discovery.k8s.io"], resources: ["endpointslices"], verbs: ["list", "watch"] },
      ],
    },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: { name: "docservice:coredns", labels },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "docservice:coredns" },
      subjects: [{ kind: "ServiceAccount", name: "coredns", namespace: "kube-system" }],
    },
    { apiVersion: "v1", kind: "ConfigMap", metadata: metadata("coredns"), data: { Corefile: corefile } },
    {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: metadata("coredns"),
      spec: {
        replicas: 1,
        selector: { matchLabels: labels },
        template: {
          metadata: { labels },
          spec: {
            serviceAccountName: "coredns",
            priorityClassName: "system-cluster-critical",
            // The host's resolver for names outside the cluster, not itself.
            dnsPolicy: "Default",
            containers: [
              {
                name: "coredns",
                image,
                imagePullPolicy: "Never",
                args: ["-conf", "/etc/coredns/Corefile"],
                ports: [
                  { name: "dns", containerPort: 53, protocol: "UDP" },
                  { name: "dns-tcp", containerPort: 53, protocol: "TCP" },
                ],
                readinessProbe: { httpGet: { path: "/ready", port: 8181 }, periodSeconds: 1 },
                livenessProbe: { httpGet: { path: "/health", port: 8080 }, periodSeconds: 10 },
                volumeMounts: [{ name: "config", mountPath: "/etc/coredns", readOnly: true }],
              },
            ],
            volumes: [{ name: "config", configMap: { name: "coredns" } }],
          },
        },
      },
    },
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: metadata("kube-dns"),
      spec: {
        clusterIP: CLUSTER_DNS_IP,
        selector: labels,
        ports: [
          { name: "dns", port: 53, protocol: "UDP", targetPort: 53 },
          { name: "dns-tcp", port: 53, protocol: "TCP", targetPort: 53 },
        ],
      },
    },
  ];
  return JSON.stringify({ apiVersion: "v1", kind: "List", items });
}

/** The name the API server checks metrics-server's serving certificate against. */
export const METRICS_SERVER_HOST = "metrics-server.kube-system.svc";

/**
 * The resource metrics API (metrics.k8s.io, what HPAs and `kubectl top`
 * read) served by metrics-server on the host at `address:port`.
 */
export function metricsServerManifests(address: string, port: number, caBundle: string): string {
  return hostApiServiceManifests({
    name: "metrics-server", namespace: "kube-system", labels: { "k8s-app": "metrics-server" },
    group: "metrics.k8s.io", version: "v1beta1", address, port, caBundle,
  });
}

export interface HostApiService {
  /** Of the Service and its EndpointSlice, which the APIService names. */
  name: string;
  namespace: string;
  labels: Record<string, string>;
  /** The API group and version served, e.g. "metrics.k8s.io" and "v1beta1". */
  group: string;
  version: string;
  /** Where the server listens on the host: an address other than loopback (endpoints may not hold one). */
  address: string;
  port: number;
  /** The CA (base64 PEM) that the API server checks the server's certificate against. */
  caBundle: string;
}

/**
 * An aggregated API served by a process on the host: an APIService whose
 * Service has no selector but an EndpointSlice naming the host's address
 * (the API server routes to endpoints, see --enable-aggregator-routing, and
 * reads them from EndpointSlices: an Endpoints object would need the
 * controller-manager to mirror it), and whose certificate the API server
 * checks against `caBundle`; the Service's DNS name is what the certificate
 * must hold.
 */
export function hostApiServiceManifests(api: HostApiService): string {
  const metadata = { name: api.name, namespace: api.namespace, labels: api.labels };
  const items = [
    { apiVersion: "v1", kind: "Service", metadata, spec: { ports: [{ name: "https", port: 443, targetPort: api.port }] } },
    {
      apiVersion: "discovery.k8s.io/v1",
      kind: "EndpointSlice",
      metadata: { ...metadata, labels: { ...api.labels, "kubernetes.io/service-name": api.name } },
      addressType: "IPv4",
      endpoints: [{ addresses: [api.address], conditions: { ready: true } }],
      ports: [{ name: "https", port: api.port, protocol: "TCP" }],
    },
    {
      apiVersion: "apiregistration.k8s.io/v1",
      kind: "APIService",
      metadata: { name: `${api.version}.${api.group}`, labels: api.labels },
      spec: {
        group: api.group,
        version: api.version,
        service: { name: api.name, namespace: api.namespace, port: 443 },
        caBundle: api.caBundle,
        groupPriorityMinimum: 100,
        versionPriority: 100,
      },
    },
  ];
  return JSON.stringify({ apiVersion: "v1", kind: "List", items });
}
