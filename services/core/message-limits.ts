
/**
 * The largest body of every /v1 route and the largest message of every RPC
 * (Connect, gRPC-Web and gRPC alike), in one table, decided before any byte is
 * read: a route or method that carries a document gets the document's limit
 * (as base64 in JSON, so a binary message has room to spare), the others a few
 * KB. Compressed bodies are measured inflated, against the same numbers.
 */
export interface DocumentLimits {
  /** SIGNING_MAX_BYTES: a document to sign, verify or time-stamp. */
  signingBytes: number;
  /** SIGNING_METADATA_MAX_BYTES: a sign request's metadata, as JSON. */
  signingMetadataBytes: number;
  /** CONVERSION_MAX_BYTES: a document to convert or a template to fill. */
  conversionBytes: number;
}

const KB = 1024;
const MB = 1024 * KB;

/** What a body or message carries, which decides its limit. */
type Carries = "signedDocument" | "template" | "upload" | "chunk" | "report" | "licenseKey" | "small";

/** By "METHOD /path" of a /v1 route with a body. */
export const ROUTE_CARRIES: Record<string, Carries> = {
  "POST /v1/sign": "signedDocument",
  "POST /v1/verify": "signedDocument",
  "POST /v1/timestamp": "signedDocument",
  "POST /v1/annotate": "template",
  "POST /v1/convert": "upload",
  "POST /v1/collect": "report",
  "POST /v1/admin/license-keys": "licenseKey",
};

/** By "service/method" (full protobuf names). */
export const RPC_CARRIES: Record<string, Carries> = {
  "docservice.v1.KeyService/Register": "small",
  "docservice.v1.KeyService/Verify": "small",
  "docservice.v1.KeyService/Authenticate": "small",
  "docservice.v1.KeyService/Revoke": "small",
  "docservice.v1.KeyService/GetKeyInfo": "small",
  "docservice.v1.SigningService/Sign": "signedDocument",
  "docservice.v1.SigningService/Verify": "signedDocument",
  "docservice.v1.SigningService/Timestamp": "signedDocument",
  "docservice.v1.SigningService/GetVerificationKey": "small",
  "docservice.v1.ConversionService/Convert": "chunk",
  "docservice.v1.AnnotationService/Annotate": "template",
  "docservice.v1.TelemetryService/Collect": "report",
  "docservice.v1.TelemetryService/GetUsage": "small",
  "docservice.v1.TelemetryService/AddLicenseKey": "licenseKey",
  "docservice.v1.TelemetryService/RemoveLicenseKey": "small",
  "docservice.v1.TelemetryService/ListLicenseKeys": "small",
};

/** Room in a sign request beyond its document: signer, audit trail (its `data` objects), and the metadata escaped as JSON. */
const SIGN_OVERHEAD_BYTES = 4 * MB;
/** Room in an annotate request beyond the template: the fields' values, images among them. */
const ANNOTATE_OVERHEAD_BYTES = 32 * MB;
/** The multipart framing and small fields around an uploaded file. */
const MULTIPART_FRAMING_BYTES = 64 * KB;
/** One piece of a streamed conversion (64 KB) and its header. */
const CHUNK_BYTES = 128 * KB;

const base64Length = (bytes: number) => Math.ceil(bytes / 3) * 4;

export class MessageLimits {
  constructor(private readonly documents: DocumentLimits) {}

  /** The limits the configuration's document sizes give. */
  static of(config: { signingMaxBytes: number; signingMetadataMaxBytes: number; conversionMaxBytes: number }): MessageLimits {
    return new MessageLimits({ signingBytes: config.signingMaxBytes, signingMetadataBytes: config.signingMetadataMaxBytes, conversionBytes: config.conversionMaxBytes });
  }

  private bytes(carries: Carries): number {
    const { signingBytes, signingMetadataBytes, conversionBytes } = this.documents;
    switch (carries) {
      case "signedDocument":
        return base64Length(signingBytes) + 6 * signingMetadataBytes + SIGN_OVERHEAD_BYTES;
      case "template":
        return base64Length(conversionBytes) + ANNOTATE_OVERHEAD_BYTES;
      case "upload":
        return conversionBytes + MULTIPART_FRAMING_BYTES;
      case "chunk":
        return CHUNK_BYTES;
      case "report":
        return 64 * KB;
      case "licenseKey":
        return 4 * KB;
      case "small":
        return 8 * KB;
    }
  }

  /** Largest body of a /v1 route; 0 for a route that takes none. */
  route(method: string, path: string): number {
    const carries = ROUTE_CARRIES[`${method} ${path}`];
    return carries ? this.bytes(carries) : 0;
  }

  /** Largest message of an RPC; an RPC missing from the table gets the small limit. */
  rpc(service: string, method: string): number {
    return this.bytes(RPC_CARRIES[`${service}/${method}`] ?? "small");
  }

  /** Whether an RPC's message may come compressed: only a document's is worth a client's compressing. */
  rpcMayBeCompressed(service: string, method: string): boolean {
    const carries = RPC_CARRIES[`${service}/${method}`];
    return carries === "signedDocument" || carries === "template";
  }

  /** The largest of every RPC's: what a gRPC server must accept at all. */
  get largestRpc(): number {
    return Math.max(...Object.values(RPC_CARRIES).map((carries) => this.bytes(carries)));
  }
}
