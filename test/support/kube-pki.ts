import { generateKeyPairSync } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createOpensslCa, type CertFiles } from "./openssl-ca.js";

export type { CertFiles };

/** A throwaway CA for a test cluster, and the certificates it signs (files in one directory). */
export interface KubePki {
  /** Signs every certificate below; the API server's and kubelet's client CA. */
  ca: CertFiles;
  /** The ServiceAccount token signing key pair (PEM files). */
  serviceAccount: { publicKey: string; privateKey: string };
  /** A client certificate: Kubernetes reads CN as the user name and each O as a group. */
  issueClient(name: string, user: string, groups?: string[]): CertFiles;
  /** A serving certificate for host names and IPv4 addresses. */
  issueServer(name: string, hosts: string[]): CertFiles;
}

const IPV4 = /^\d+\.\d+\.\d+\.\d+$/;

export function createKubePki(dir: string): KubePki {
  const { ca, issue } = createOpensslCa(dir, "/O=DocService tests/CN=kube test CA");
  const leaf = (usage: string) => ["basicConstraints=critical,CA:FALSE", "keyUsage=critical,digitalSignature", `extendedKeyUsage=${usage}`];

  const { publicKey, privateKey } = generateKeyPairSync("ec", {
    namedCurve: "P-256",
    publicKeyEncoding: { type: "spki", format: "pem" },
    privateKeyEncoding: { type: "pkcs8", format: "pem" },
  });
  const serviceAccount = { publicKey: join(dir, "sa.pub"), privateKey: join(dir, "sa.key") };
  writeFileSync(serviceAccount.publicKey, publicKey);
  writeFileSync(serviceAccount.privateKey, privateKey, { mode: 0o600 });

  return {
    ca,
    serviceAccount,
    issueClient: (name, user, groups = []) =>
      issue(name, `${groups.map((group) => `/O=${group}`).join("")}/CN=${user}`, leaf("clientAuth")),
    issueServer: (name, hosts) =>
      issue(name, `/CN=${hosts[0]}`, [
        ...leaf("serverAuth"),
        `subjectAltName=${hosts.map((host) => (IPV4.test(host) ? `IP:${host}` : `DNS:${host}`)).join(",")}`,
      ]),
  };
}

/** Writes a kubeconfig (context "docservice-test") with the certificates embedded. */
export function writeKubeconfig(path: string, server: string, ca: string, user: string, client: CertFiles): void {
  const base64 = (file: string) => readFileSync(file).toString("base64");
  const text = [
    "apiVersion: v1",
    "kind: Config",
    "clusters:",
    "- name: docservice-test",
    "  cluster:",
    `    server: ${server}`,
    `    certificate-authority-data: ${base64(ca)}`,
    "users:",
    `- name: ${user}`,
    "  user:",
    `    client-certificate-data: ${base64(client.cert)}`,
    `    client-key-data: ${base64(client.key)}`,
    "contexts:",
    "- name: docservice-test",
    "  context:",
    "    cluster: docservice-test",
    `    user: ${user}`,
    "    namespace: default",
    "current-context: docservice-test",
    "",
  ].join("\n");
  writeFileSync(path, text, { mode: 0o600 });
}
