// Self-test of the single-node cluster (scripts/testenv/kubernetes.sh,
// test/support/kube-node.ts): pods from imported images, Services through
// kube-proxy, DNS through CoreDNS, kubectl logs/exec/port-forward, the
// controllers, and a host left as it was found, also after a crashed run.
import assert from "node:assert/strict";
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { cacheBin } from "../support/cache.js";
import { kubectl } from "../support/kube.js";
import { canRunContainers, NODE_NAME, startKubeNode, type KubeNode } from "../support/kube-node.js";
import { runCommand } from "../support/run-command.js";
import { waitFor } from "../support/wait.js";

const ROOT = new URL("../../", import.meta.url).pathname;
const BUSYBOX = "docservice.local/busybox:test";

const containers = canRunContainers();
if (!containers.ok) {
  console.error(`\n!! SKIPPED: the single-node Kubernetes self-test. This machine cannot run containers:\n!! ${containers.reason}\n`);
}

/** What a node may leave on the host: compared before and after. */
function hostTraces() {
  const prefix = join(tmpdir(), "docservice-kube_node_");
  const read = (file: string) => {
    try {
      return readFileSync(file, "utf8");
    } catch {
      return "";
    }
  };
  const list = (dir: string) => (existsSync(dir) ? readdirSync(dir) : []);
  // The node's daemons and shims name its dirs; its pods' processes are in its cgroup.
  const processes = list("/proc")
    .filter((pid) => /^\d+$/.test(pid))
    .map((pid) => ({ cmdline: read(`/proc/${pid}/cmdline`).replaceAll("\0", " "), cgroup: read(`/proc/${pid}/cgroup`) }))
    .filter(({ cmdline, cgroup }) => cmdline.includes(prefix) || cgroup.includes("/docservice-kube/"))
    .map(({ cmdline }) => cmdline);
  const chains = ["iptables", "ip6tables"].flatMap((binary) =>
    ["filter", "nat", "mangle"].flatMap((table) =>
      execFileSync(binary, ["-w", "-t", table, "-S"], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).split("\n").filter(Boolean).map((rule) => `${binary} ${table} ${rule}`),
    ),
  );
  const bound = read("/proc/net/unix");
  return {
    processes,
    mounts: read("/proc/self/mountinfo").split("\n").filter((line) => line.includes(prefix)),
    // the node's own: a file running beside this one may have a kube-apiserver of its own (docservice-kube_apiserver_…)
    dirs: list(tmpdir()).filter((name) => join(tmpdir(), name).startsWith(prefix)),
    bridge: existsSync("/sys/class/net/docservice0"),
    cgroups: list("/sys/fs/cgroup").filter((c) => existsSync(join("/sys/fs/cgroup", c, "docservice-kube"))),
    chains,
    ipForward: read("/proc/sys/net/ipv4/ip_forward").trim(),
    // In directories other runtimes share (another containerd may run here: /run/containerd is not compared).
    hostDirs: ["/var/lib/cni", "/var/log/containers", "/var/log/pods", "/var/lib/kubelet"].filter((d) => existsSync(d)),
    cniResults: list("/var/lib/cni/results"),
    logLinks: list("/var/log/containers"),
    staleShimSockets: list("/run/containerd/s").filter((name) => !bound.includes(`/run/containerd/s/${name}`)),
  };
}

/** A one-layer image of Debian's static busybox with every applet linked. */
async function buildBusyboxImage(dir: string): Promise<string> {
  const rootfs = join(dir, "rootfs");
  mkdirSync(join(rootfs, "bin"), { recursive: true });
  mkdirSync(join(rootfs, "tmp"));
  execFileSync("cp", ["/bin/busybox", join(rootfs, "bin", "busybox")]);
  const applets = execFileSync("/bin/busybox", ["--list"], { encoding: "utf8" }).split("\n").filter((a) => a && a !== "busybox");
  for (const applet of applets) symlinkSync("busybox", join(rootfs, "bin", applet));
  const archive = join(dir, "busybox.tar");
  const result = await runCommand("bash", [join(ROOT, "scripts/testenv/oci-archive.sh"), archive, BUSYBOX, rootfs, "/bin/sh"], { timeoutMs: 60_000 });
  assert.equal(result.code, 0, result.output);
  return archive;
}

/** A pod of the busybox image running `script`; `restricted`: as Pod Security "restricted" requires (non-root, no capabilities, the runtime's seccomp profile). */
const busyboxPod = (name: string, script: string, restricted = false) => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name, labels: { app: name } },
  spec: {
    restartPolicy: "Never",
    terminationGracePeriodSeconds: 1,
    ...(restricted && { securityContext: { runAsNonRoot: true, runAsUser: 65532, seccompProfile: { type: "RuntimeDefault" } } }),
    containers: [{
      name,
      image: BUSYBOX,
      imagePullPolicy: "Never",
      command: ["/bin/sh", "-c", script],
      ...(restricted && { securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] } } }),
    }],
  },
});

describe("a single-node cluster", { skip: containers.ok ? false : containers.reason, timeout: 15 * 60_000 }, () => {
  let node: KubeNode;
  let dir: string;
  let startMs: number;
  let before0: ReturnType<typeof hostTraces>;
  const forwards: ChildProcess[] = [];
  const k = (args: string[], input?: unknown) =>
    kubectl(node, args, input === undefined ? {} : { input: JSON.stringify(input) });

  before(async () => {
    before0 = hostTraces();
    dir = mkdtempSync(join(tmpdir(), "docservice-knode-test-"));
    const started = Date.now();
    node = await startKubeNode();
    startMs = Date.now() - started;
  });

  after(async () => {
    for (const child of forwards) child.kill();
    await node?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test("the node is Ready on containerd, and runs a pod from the pause image", async (t) => {
    t.diagnostic(`node started in ${startMs} ms`);
    // What the last tests compare shows the node while it runs.
    const running = hostTraces();
    assert.ok(running.processes.length >= 7 && running.bridge && running.cgroups.length > 0, JSON.stringify(running.processes));
    assert.notDeepEqual(running.chains, before0.chains);
    const got = JSON.parse(await k(["get", "node", NODE_NAME, "-o", "json"]));
    assert.match(got.status.nodeInfo.containerRuntimeVersion, /^containerd:\/\/1\.6\./);
    assert.equal(got.status.nodeInfo.kubeletVersion, "v1.34.4");
    assert.ok(got.status.conditions.some((c: { type: string; status: string }) => c.type === "Ready" && c.status === "True"));

    await k(["apply", "-f", "-"], {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "pause" },
      spec: { containers: [{ name: "pause", image: "registry.k8s.io/pause:3.10", imagePullPolicy: "Never" }] },
    });
    await k(["wait", "--for=condition=Ready", "pod/pause", "--timeout=60s"]);
    const pod = JSON.parse(await k(["get", "pod", "pause", "-o", "json"]));
    assert.match(pod.status.podIP, /^10\.244\.0\.\d+$/);
    // The pod got the default ServiceAccount's token (ServiceAccount admission and the token controller work).
    assert.equal(pod.spec.serviceAccountName, "default");
    assert.ok(pod.spec.volumes.some((v: { name: string }) => v.name.startsWith("kube-api-access-")));
  });

  test("a pod of a locally built image resolves names through CoreDNS and reaches a Service's ClusterIP; kubectl logs returns its output", async () => {
    const imported = await node.importImage(await buildBusyboxImage(dir));
    assert.deepEqual(imported, [BUSYBOX]);

    await k(["apply", "-f", "-"], {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "web" },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: "web" } },
        template: {
          metadata: { labels: { app: "web" } },
          spec: {
            terminationGracePeriodSeconds: 1,
            containers: [{
              name: "web",
              image: BUSYBOX,
              imagePullPolicy: "Never",
              command: ["/bin/sh", "-c", 'mkdir -p /www && echo "hello from $(hostname)" >/www/index.html && exec httpd -f -p 8080 -h /www'],
              ports: [{ containerPort: 8080 }],
              readinessProbe: { tcpSocket: { port: 8080 }, periodSeconds: 1 },
            }],
          },
        },
      },
    });
    await k(["apply", "-f", "-"], {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "web" },
      spec: { selector: { app: "web" }, ports: [{ port: 80, targetPort: 8080 }] },
    });
    await k(["rollout", "status", "deployment/web", "--timeout=60s"]);
    const clusterIp = (await k(["get", "service", "web", "-o", "jsonpath={.spec.clusterIP}"])).trim();
    assert.match(clusterIp, /^10\.96\.\d+\.\d+$/);

    await k(["apply", "-f", "-"], busyboxPod("client", [
      'echo "uid $(id -u) seccomp $(grep ^Seccomp: /proc/self/status | cut -f2)"',
      "nslookup -type=a kubernetes.default.svc.cluster.local",
      "nslookup -type=a web",
      // kube-proxy programs a new Service's rules a moment after the API server has it; until then
      // its ClusterIP, just freed by another test's Service, may still lead to that one's pods.
      // (Debian's static busybox wget crashes with -T.)
      `fetch() { for i in 1 2 3 4 5 6 7 8 9 10; do out="$(timeout 10 wget -q -O - "$1")"; case "$out" in hello*) break;; esac; sleep 1; done; echo "$out"; }`,
      `echo "by IP: $(fetch http://${clusterIp}/)"`,
      'echo "by name: $(fetch http://web.default.svc.cluster.local/)"',
    ].join("; "), true));
    await k(["wait", "--for=jsonpath={.status.phase}=Succeeded", "pod/client", "--timeout=60s"]);
    const logs = await k(["logs", "client"]);
    assert.match(logs, /^uid 65532 seccomp 2$/m); // 2: a seccomp filter is on
    assert.match(logs, /Server:\s+10\.96\.0\.10/);
    assert.match(logs, /Name:\s+kubernetes\.default\.svc\.cluster\.local\s+Address:\s+10\.96\.0\.1\b/);
    assert.match(logs, new RegExp(`Name:\\s+web\\.default\\.svc\\.cluster\\.local\\s+Address:\\s+${clusterIp.replaceAll(".", "\\.")}\\b`));
    assert.match(logs, /^by IP: hello from web-/m);
    assert.match(logs, /^by name: hello from web-/m);
  });

  test("kubectl exec and kubectl port-forward reach a pod from the host", async () => {
    const pod = (await k(["get", "pods", "-l", "app=web", "-o", "jsonpath={.items[0].metadata.name}"])).trim();
    assert.equal((await k(["exec", pod, "--", "cat", "/www/index.html"])).trim(), `hello from ${pod}`);

    const child = spawn(cacheBin("kubectl"), ["--kubeconfig", node.kubeconfigPath, "port-forward", `pod/${pod}`, ":8080"], { stdio: ["ignore", "pipe", "pipe"] });
    forwards.push(child);
    let output = "";
    child.stdout!.on("data", (chunk) => (output += chunk));
    child.stderr!.on("data", (chunk) => (output += chunk));
    let port = "";
    await waitFor(async () => Boolean((port = /Forwarding from 127\.0\.0\.1:(\d+)/.exec(output)?.[1] ?? "")), {
      what: `kubectl port-forward (output: ${output})`, timeoutMs: 30_000, intervalMs: 100,
    });
    const res = await fetch(`http://127.0.0.1:${port}/`);
    assert.equal((await res.text()).trim(), `hello from ${pod}`);
    child.kill();
  });

  test("a Deployment's deleted pod is recreated (kube-controller-manager, kube-scheduler)", async () => {
    const first = (await k(["get", "pods", "-l", "app=web", "-o", "jsonpath={.items[0].metadata.name}"])).trim();
    await k(["delete", "pod", first, "--wait=true", "--timeout=60s"]);
    await k(["rollout", "status", "deployment/web", "--timeout=60s"]);
    await waitFor(async () => {
      const pods = JSON.parse(await k(["get", "pods", "-l", "app=web", "-o", "json"])).items as { metadata: { name: string }; status: { phase: string } }[];
      return pods.length === 1 && pods[0]!.metadata.name !== first && pods[0]!.status.phase === "Running";
    }, { what: "a new web pod", timeoutMs: 60_000, intervalMs: 250 });
  });

  // That an HPA acts on what it reads (scale out, then in, under load) is the end-to-end test's (test/e2e/kubernetes.test.ts)
  test("metrics-server: pods' CPU through metrics.k8s.io, which an HPA reads as its pods' utilization", async (t) => {
    const hpa = { apiVersion: "autoscaling/v2", kind: "HorizontalPodAutoscaler", metadata: { name: "idle" } };
    await k(["apply", "-f", "-"], {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "idle" },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: "idle" } },
        template: {
          metadata: { labels: { app: "idle" } },
          spec: {
            terminationGracePeriodSeconds: 1,
            containers: [{ name: "idle", image: BUSYBOX, imagePullPolicy: "Never", command: ["/bin/sh", "-c", "while true; do sleep 1; done"], resources: { requests: { cpu: "50m" } } }],
          },
        },
      },
    });
    await k(["apply", "-f", "-"], {
      ...hpa,
      spec: {
        scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: "idle" },
        minReplicas: 1,
        maxReplicas: 2,
        metrics: [{ type: "Resource", resource: { name: "cpu", target: { type: "Utilization", averageUtilization: 80 } } }],
      },
    });
    await k(["rollout", "status", "deployment/idle", "--timeout=60s"]);
    await waitFor(async () => {
      const raw = JSON.parse(await k(["get", "--raw", "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods"]));
      return raw.items.some((pod: { metadata: { name: string } }) => pod.metadata.name.startsWith("idle-"));
    }, { what: "the idle pod's CPU in metrics.k8s.io", timeoutMs: 90_000, intervalMs: 2000 });
    let utilization: number | undefined;
    let status: any;
    await waitFor(async () => {
      status = JSON.parse(await k(["get", "hpa", "idle", "-o", "json"])).status;
      utilization = status.currentMetrics?.[0]?.resource?.current?.averageUtilization;
      return utilization !== undefined;
    }, { what: "the HPA to see the idle pod's CPU utilization", timeoutMs: 120_000, intervalMs: 2000 });
    t.diagnostic(`CPU utilization seen by the HPA: ${utilization} % of the request`);
    assert.ok(utilization! < 80, `an idle pod under its target: ${utilization} %`);
    assert.equal(status.desiredReplicas, 1);
    await k(["delete", "hpa", "idle"]);
    await k(["delete", "deployment", "idle", "--wait=true", "--timeout=60s"]);
  });

  test("stop() leaves no process, mount, dir, cgroup, bridge, iptables chain or sysctl change behind", async () => {
    // checked before the node lock is let go: another test's node may start on the machine right after
    await node.stop(() => assert.deepEqual(hostTraces(), before0));
  });

  test("a node whose test process was killed is cleaned up by the next start, which works", async (t) => {
    // A process that starts a node and is then SIGKILLed: its daemons and pods keep running.
    const script = `import { startKubeNode } from ${JSON.stringify(join(ROOT, "test/support/kube-node.ts"))};
await startKubeNode(); console.log("READY"); setInterval(() => {}, 1000);`;
    const crashed = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    crashed.stdout!.on("data", (chunk) => (output += chunk));
    crashed.stderr!.on("data", (chunk) => (output += chunk));
    try {
      await waitFor(async () => output.includes("READY") || crashed.exitCode !== null, { what: "the first node", timeoutMs: 180_000, intervalMs: 200 });
      assert.match(output, /READY/);
    } finally {
      const exited = new Promise((resolve) => crashed.once("exit", resolve));
      crashed.kill("SIGKILL");
      await exited;
    }
    assert.ok(hostTraces().processes.length > 0, "the killed node's daemons still run");

    const started = Date.now();
    node = await startKubeNode();
    t.diagnostic(`started over a crashed node's leftovers in ${Date.now() - started} ms`);
    await node.importImage(join(dir, "busybox.tar"));
    await k(["apply", "-f", "-"], busyboxPod("again", "echo second node works"));
    await k(["wait", "--for=jsonpath={.status.phase}=Succeeded", "pod/again", "--timeout=60s"]);
    assert.equal((await k(["logs", "again"])).trim(), "second node works");
    await node.stop(() => assert.deepEqual(hostTraces(), before0));
  });
});
