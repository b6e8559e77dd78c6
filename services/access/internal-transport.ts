import { credentials, experimental, Metadata, ServerCredentials, type ChannelCredentials } from "@grpc/grpc-js";
import { pemFile, watchCertificateExpiry } from "../core/certificate-expiry.js";
import { isTracing, traceHeaders } from "../core/tracing.js";
import { constantTimeEquals } from "./constant-time.js";

export interface InternalTransportSettings {
  /** PEM files of this component's certificate and key, and of the CA every internal peer's certificate must chain to; all three or none. */
  tls?: { certFile: string; keyFile: string; caFile: string; reloadIntervalMs: number };
  /** Certificate names (subject CN or DNS SAN) that carry the gateway's identity. */
  gatewayNames: string[];
  /** Without TLS, the gateway's identity is this token in INTERNAL_TOKEN_HEADER. */
  internalToken: string | undefined;
}

export const INTERNAL_TOKEN_HEADER = "x-docservice-internal-token";

/** What a grpc-js server call shows of its caller. */
interface ServerCall {
  metadata: Metadata;
  getAuthContext(): { sslPeerCertificate?: { subject?: { CN?: string | string[] }; subjectaltname?: string } } | null;
}

/**
 * How the platform's components reach each other over gRPC: mutual TLS when
 * certificates are configured (a peer without a certificate signed by the CA
 * cannot complete the handshake; the files are re-read when they change, as
 * Kubernetes rotates mounted Secrets), plaintext otherwise. And how a server
 * recognises the gateway among its callers.
 */
export class InternalTransport {
  private readonly certificates: experimental.FileWatcherCertificateProvider | undefined;

  constructor(private readonly settings: InternalTransportSettings) {
    const tls = settings.tls;
    this.certificates =
      tls &&
      new experimental.FileWatcherCertificateProvider({
        certificateFile: tls.certFile,
        privateKeyFile: tls.keyFile,
        caCertificateFile: tls.caFile,
        refreshIntervalMs: tls.reloadIntervalMs,
      });
    if (tls) {
      watchCertificateExpiry("component", pemFile(tls.certFile));
      watchCertificateExpiry("internal-ca", pemFile(tls.caFile));
    }
  }

  get encrypted(): boolean {
    return this.certificates !== undefined;
  }

  serverCredentials(): ServerCredentials {
    if (!this.certificates) return ServerCredentials.createInsecure();
    return experimental.createCertificateProviderServerCredentials(this.certificates, this.certificates, true);
  }

  channelCredentials(): ChannelCredentials {
    if (!this.certificates) return credentials.createInsecure();
    return experimental.createCertificateProviderChannelCredentials(this.certificates, this.certificates);
  }

  /** What every call this component makes carries: the internal token, when there is no certificate to say who calls, and the trace it belongs to. */
  callMetadata(): Metadata {
    const metadata = new Metadata();
    if (!this.certificates && this.settings.internalToken) metadata.set(INTERNAL_TOKEN_HEADER, this.settings.internalToken);
    // the caller's trace goes on in the service it calls (W3C traceparent, as over HTTP)
    if (isTracing()) for (const [key, value] of Object.entries(traceHeaders())) metadata.set(key, value);
    return metadata;
  }

  /** Whether a call comes from the gateway: its verified client certificate names it, or (without TLS) it holds the internal token. */
  fromGateway(call: ServerCall): boolean {
    if (this.certificates) {
      const certificate = call.getAuthContext()?.sslPeerCertificate;
      if (!certificate) return false;
      const names = [certificate.subject?.CN ?? []].flat();
      for (const entry of (certificate.subjectaltname ?? "").split(",")) {
        const [kind, value] = entry.trim().split(/:(.*)/s);
        if (kind === "DNS" && value) names.push(value);
      }
      return names.some((name) => this.settings.gatewayNames.includes(name));
    }
    const presented = call.metadata.get(INTERNAL_TOKEN_HEADER)[0];
    return Boolean(this.settings.internalToken) && typeof presented === "string" && constantTimeEquals(presented, this.settings.internalToken!);
  }
}
