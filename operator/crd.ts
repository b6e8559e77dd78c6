/**
 * The DocService CustomResourceDefinition: one source for the chart's CRD file
 * (`npm run generate` writes it; operator/write-crd.test.ts fails when it is
 * stale or drops a key) and for the operator's types (operator/types.ts
 * mirrors this schema).
 */

export const GROUP = "docservice.dev";
export const VERSION = "v1alpha1";
export const KIND = "DocService";
export const PLURAL = "docservices";

export const COMPONENTS = ["gateway", "signing", "keys", "conversion", "telemetryApi", "telemetryAggregator"] as const;
export type ComponentName = (typeof COMPONENTS)[number];

const quantity = {
  "x-kubernetes-int-or-string": true,
  anyOf: [{ type: "integer" }, { type: "string" }],
  pattern: "^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$",
};

const secretKeyRef = (what: string) => ({
  type: "object",
  description: `A key of a Secret in the resource's namespace holding ${what}.`,
  required: ["name", "key"],
  properties: {
    name: { type: "string", minLength: 1, description: "Name of the Secret." },
    key: { type: "string", minLength: 1, description: "Key within the Secret." },
  },
});

const component = (what: string, defaultReplicas: number) => ({
  type: "object",
  description: `${what}. Either a fixed number of replicas, or autoscaling bounds (then the operator sizes it from expectedLoad and the sizing profile).`,
  default: {},
  // an HPA's CPU target is a share of the request: without one it reports <unknown> and never acts
  "x-kubernetes-validations": [
    {
      rule: "!has(self.autoscaling) || (has(self.resources) && has(self.resources.requests) && 'cpu' in self.resources.requests)",
      message: "autoscaling needs resources.requests.cpu: the autoscaler's CPU target is a share of it",
    },
  ],
  properties: {
    replicas: { type: "integer", minimum: 0, maximum: 1000, default: defaultReplicas, description: "Replicas when autoscaling is not set." },
    autoscaling: {
      type: "object",
      description: "Autoscaling bounds. The starting size and the autoscaler's target come from expectedLoad and the sizing profile.",
      required: ["minReplicas", "maxReplicas"],
      properties: {
        minReplicas: { type: "integer", minimum: 1, maximum: 1000 },
        maxReplicas: { type: "integer", minimum: 1, maximum: 1000 },
      },
      "x-kubernetes-validations": [{ rule: "self.minReplicas <= self.maxReplicas", message: "minReplicas must not exceed maxReplicas" }],
    },
    shutdownTimeoutSeconds: {
      type: "integer",
      minimum: 1,
      maximum: 3600,
      description:
        "How long a stopping pod (scaled down, evicted, replaced) waits for the requests it holds, once it stops accepting. " +
        "Omitted: the longest request the component serves, from the platform's deadlines. The pod's termination grace period follows.",
    },
    resources: {
      type: "object",
      description: "Compute resources of the component's container, as in a Pod spec.",
      properties: {
        requests: { type: "object", additionalProperties: quantity },
        limits: { type: "object", additionalProperties: quantity },
      },
    },
  },
});

/**
 * spec.limits: per field, the platform variable it sets (services/configuration.ts,
 * VARIABLES), the platform's default there (what an omitted field keeps), an
 * upper bound that catches a slip of units, and what it does. The timeouts stay
 * far below 2^31 ms, past which Node's timers fire at once.
 */
export const LIMITS = {
  headersTimeoutMs: {
    variable: "HTTP_HEADERS_TIMEOUT_MS",
    platformDefault: "10000",
    maximum: 600_000,
    doc: "Gateway: longest the request line and headers may take to arrive (then 408), and longest a new connection may stay silent, in ms.",
  },
  requestTimeoutMs: {
    variable: "HTTP_REQUEST_TIMEOUT_MS",
    platformDefault: "300000",
    maximum: 86_400_000,
    doc: "Gateway: longest a whole request, body included, may take to arrive (then 408), in ms.",
  },
  keepAliveTimeoutMs: {
    variable: "HTTP_KEEP_ALIVE_TIMEOUT_MS",
    platformDefault: "5000",
    maximum: 3_600_000,
    doc: "Gateway: how long an idle keep-alive connection is kept open between requests, in ms. Behind a load balancer, keep it above the balancer's idle timeout.",
  },
  minBodyBytesPerSecond: {
    variable: "HTTP_MIN_BODY_BYTES_PER_SECOND",
    platformDefault: "1024",
    maximum: 10_485_760,
    doc: "Gateway: slowest request body accepted once it has started, in bytes per second averaged over 10 s (then 408 and the connection closed).",
  },
  maxConnections: {
    variable: "HTTP_MAX_CONNECTIONS",
    platformDefault: "auto",
    maximum: 1_048_576,
    doc: "Gateway: open connections to a pod in all; more are closed as they arrive. auto is half the process's open-file limit.",
  },
  maxConnectionsPerClient: {
    variable: "HTTP_MAX_CONNECTIONS_PER_CLIENT",
    platformDefault: "512",
    maximum: 1_048_576,
    doc: "Gateway: open connections to a pod from one client address; more are closed as they arrive. Behind an ingress or proxy every connection comes from its few addresses.",
  },
  grpcMaxConnectionIdleMs: {
    variable: "GRPC_MAX_CONNECTION_IDLE_MS",
    platformDefault: "300000",
    maximum: 86_400_000,
    doc: "gRPC servers: a connection without calls this long is closed (GOAWAY), in ms.",
  },
  grpcMaxConnectionAgeMs: {
    variable: "GRPC_MAX_CONNECTION_AGE_MS",
    platformDefault: "1800000",
    // each connection a client ends reconnects to the pod kube-proxy picks then, so a pod added by a scale-up gets calls within about
    // this long; until then a pod that was alone in a surge keeps every call and its queue (about 3 reconnections a second per gateway pod)
    operatorDefault: "15000",
    maximum: 604_800_000,
    doc: "gRPC servers: a connection older than this is asked to go away, so clients reconnect and spread over new replicas, in ms.",
  },
  grpcMaxConnectionAgeGraceMs: {
    variable: "GRPC_MAX_CONNECTION_AGE_GRACE_MS",
    platformDefault: "120000",
    maximum: 3_600_000,
    doc: "gRPC servers: how long the calls of a connection asked to go away may still run, in ms.",
  },
  grpcMaxConcurrentStreams: {
    variable: "GRPC_MAX_CONCURRENT_STREAMS",
    platformDefault: "1024",
    maximum: 65_536,
    doc: "gRPC servers: calls at once on one connection.",
  },
} as const;
export type LimitName = keyof typeof LIMITS;

/** The value the operator sets for a field left out of spec.limits, where it has one of its own. */
export const operatorDefault = (field: (typeof LIMITS)[LimitName]): string | undefined => ("operatorDefault" in field ? field.operatorDefault : undefined);

/** The value a field left out of spec.limits gets: the operator's own where it has one, else the platform's default. */
export const omittedLimit = (field: (typeof LIMITS)[LimitName]): string => operatorDefault(field) ?? field.platformDefault;

const limit = (field: (typeof LIMITS)[LimitName]) => ({
  type: "integer",
  minimum: 1,
  maximum: field.maximum,
  description: `${field.doc} Sets ${field.variable}; omitted: ${omittedLimit(field)}.`,
});

const perSecond = (route: string) => ({ type: "number", minimum: 0, default: 0, description: `Expected ${route} requests per second at peak.` });

export const SPEC_SCHEMA = {
  type: "object",
  description: "The desired DocService deployment.",
  required: ["version"],
  properties: {
    image: { type: "string", minLength: 1, default: "docservice/docservice", description: "Container image repository (the tag is `version`)." },
    conversionImage: {
      type: "string",
      minLength: 1,
      default: "docservice/docservice-conversion",
      description: "Image repository of the conversion component with conversion.backend local (LibreOffice inside; the tag is `version`).",
    },
    version: { type: "string", minLength: 1, pattern: "^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$", description: "Image tag to run: the platform version the images were built as." },
    components: {
      type: "object",
      description: "Per-component replicas or autoscaling bounds, and resources.",
      default: {},
      properties: {
        gateway: component("The HTTP gateway (/v1 routes, Connect, gRPC-Web)", 1),
        signing: component("SigningService (PAdES signatures, certificate page)", 1),
        keys: component("KeyService (API keys by e-mail)", 1),
        conversion: component("ConversionService (DOCX to PDF)", 1),
        telemetryApi: component("TelemetryService (usage collection and queries)", 1),
        telemetryAggregator: component("The usage aggregator (Kafka consumer group)", 1),
      },
    },
    kafka: {
      type: "object",
      description: "Kafka for usage events. Omitted: telemetry runs its embedded pipeline in each telemetry pod (not for production).",
      required: ["bootstrapServers"],
      "x-kubernetes-validations": [
        {
          rule: "!has(self.dedupeWindowHours)",
          message: "kafka.dedupeWindowHours was removed: usage is applied once by its Kafka offsets, without remembering event ids; delete the field",
        },
      ],
      properties: {
        bootstrapServers: { type: "array", minItems: 1, items: { type: "string", pattern: "^[^:\\s]+:[0-9]{1,5}$" }, description: "host:port of the brokers." },
        topic: { type: "string", default: "docservice.usage.v1", pattern: "^[A-Za-z0-9._-]{1,249}$", description: "Topic of usage events." },
        partitions: { type: "integer", minimum: 1, maximum: 10000, default: 6, description: "Partitions of the topic; only ever increased." },
        replicationFactor: { type: "integer", minimum: 1, maximum: 10, default: 3, description: "Replication factor of the topic (fixed after creation)." },
        retentionHours: { type: "integer", minimum: 1, default: 168, description: "retention.ms of the topic, in hours." },
        deleteTopicsOnDelete: { type: "boolean", default: false, description: "Delete the topic when this DocService is deleted." },
        dedupeWindowHours: {
          type: "integer",
          description: "Removed in 0.1.0: usage is applied once by its Kafka offsets, without remembering event ids. Setting it is refused; delete it from the resource.",
        },
      },
    },
    redis: {
      type: "object",
      description: "Redis for API keys, rate limits, signing replays and usage counts. Required with more than one replica of keys, signing or telemetry.",
      required: ["address"],
      properties: {
        address: { type: "string", pattern: "^[^:\\s]+:[0-9]{1,5}$", description: "host:port." },
        passwordSecret: secretKeyRef("the Redis password"),
        tls: { type: "boolean", default: false, description: "Connect with TLS (rediss://)." },
      },
    },
    hsm: {
      type: "object",
      description: "Sign with a key in an HSM over PKCS#11. Omitted: a local key per signing pod (not for production).",
      required: ["modulePath", "tokenLabel", "keyLabel", "pinSecret"],
      properties: {
        modulePath: { type: "string", minLength: 1, description: "Path of the PKCS#11 module inside the image, e.g. /usr/lib/softhsm/libsofthsm2.so." },
        tokenLabel: { type: "string", minLength: 1 },
        keyLabel: { type: "string", minLength: 1 },
        pinSecret: secretKeyRef("the user PIN"),
      },
    },
    signing: {
      type: "object",
      description: "Signature level and time-stamping. Omitted: PAdES B-B, no timestamps.",
      properties: {
        level: {
          type: "string",
          enum: ["B-B", "B-T", "B-LT", "B-LTA"],
          description: "PAdES baseline level of a sign request that names none (SIGNING_LEVEL). B-T and above need tsaUrl; B-LT and B-LTA fetch OCSP/CRL data from the URLs the certificates name, so the signing pods need egress to them.",
        },
        tsaUrl: { type: "string", pattern: "^https?://", description: "RFC 3161 time-stamping authority (SIGNING_TSA_URL)." },
      },
      "x-kubernetes-validations": [
        { rule: "!has(self.level) || self.level == 'B-B' || has(self.tsaUrl)", message: "signing.level B-T, B-LT and B-LTA need signing.tsaUrl" },
      ],
    },
    adminTokenSecret: {
      ...secretKeyRef("DOCSERVICE_ADMIN_TOKEN (at least 16 characters): the Bearer token of usage, license-key and key-revocation admin calls. Omitted: admin calls are refused"),
    },
    smtp: {
      type: "object",
      description: "SMTP for verification e-mails. Omitted: mails are written to the keys pods' outbox (not for production).",
      required: ["secretName"],
      properties: {
        secretName: { type: "string", minLength: 1, description: "Secret with keys host, port, user, password, from (user and password optional)." },
      },
    },
    conversion: {
      type: "object",
      description: "DOCX to PDF backend.",
      default: { backend: "local" },
      properties: {
        backend: { type: "string", enum: ["local", "gotenberg"], default: "local", description: "local: a warm LibreOffice pool per pod; gotenberg: a Gotenberg 8 service." },
        gotenbergUrl: { type: "string", pattern: "^https?://", description: "Gotenberg base URL, with backend gotenberg." },
      },
      "x-kubernetes-validations": [
        { rule: "!has(self.backend) || self.backend != 'gotenberg' || has(self.gotenbergUrl)", message: "gotenbergUrl is required when backend is gotenberg" },
      ],
    },
    internalClients: {
      type: "object",
      description:
        "Services of yours that call the backends' gRPC directly (each call still needs an API key or the admin token). The operator lets them through the NetworkPolicies and issues the Secret <name>-client-tls (tls.crt, tls.key, ca.crt) for their mutual TLS.",
      required: ["from"],
      properties: {
        from: {
          type: "array",
          description: "NetworkPolicy peers, as in a NetworkPolicy's ingress.from.",
          items: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
        },
      },
    },
    limits: {
      type: "object",
      description:
        "Connection limits of the gateway (HTTP) and of the backends' gRPC servers, each the platform variable named in its description. An omitted field keeps the platform's default. The memory that request bodies in flight may hold is not set here: each component gets half of its resources.limits.memory (DOCSERVICE_MEMORY_BUDGET_MB).",
      properties: Object.fromEntries(Object.entries(LIMITS).map(([name, field]) => [name, limit(field)])),
    },
    expectedLoad: {
      type: "object",
      description: "Expected peak load per route; with the sizing profile it sets replicas and autoscaling targets.",
      default: {},
      properties: {
        sign: perSecond("POST /v1/sign"),
        convert: perSecond("POST /v1/convert"),
        collect: perSecond("POST /v1/collect"),
        auth: perSecond("/v1/auth/*"),
      },
    },
    autoscaling: {
      type: "object",
      description: "How autoscaled components are scaled.",
      default: {},
      properties: {
        mode: {
          type: "string",
          enum: ["auto", "hpa", "keda"],
          default: "auto",
          description: "hpa: autoscaling/v2 HPAs; keda: a KEDA ScaledObject (Kafka lag) for the aggregator; auto: keda when KEDA's CRDs are installed.",
        },
        headroom: { type: "number", minimum: 1, maximum: 10, default: 1.3, description: "Capacity kept above the expected load (1.3 = 30% spare)." },
        scaleDownStabilizationSeconds: {
          type: "integer",
          minimum: 0,
          maximum: 3600,
          default: 300,
          description:
            "How long demand must stay lower before an autoscaler removes replicas (then at most the share the headroom covers per minute). " +
            "Scaling up is immediate.",
        },
      },
    },
  },
  "x-kubernetes-validations": [
    {
      rule: "!has(self.autoscaling) || !has(self.autoscaling.mode) || self.autoscaling.mode != 'keda' || has(self.kafka)",
      message: "autoscaling.mode keda needs kafka (the aggregator scales on its consumer lag)",
    },
  ],
};

const condition = {
  type: "object",
  required: ["type", "status"],
  properties: {
    type: { type: "string" },
    status: { type: "string", enum: ["True", "False", "Unknown"] },
    reason: { type: "string" },
    message: { type: "string" },
    observedGeneration: { type: "integer" },
    lastTransitionTime: { type: "string", format: "date-time" },
  },
};

export const STATUS_SCHEMA = {
  type: "object",
  description: "What the operator observed.",
  properties: {
    observedGeneration: { type: "integer", description: "The generation of the spec this status describes." },
    conditions: {
      type: "array",
      items: condition,
      "x-kubernetes-list-type": "map",
      "x-kubernetes-list-map-keys": ["type"],
      description: "Ready, Progressing and Degraded.",
    },
    components: {
      type: "object",
      description: "Per component: desired and ready replicas.",
      additionalProperties: {
        type: "object",
        properties: { desiredReplicas: { type: "integer" }, readyReplicas: { type: "integer" } },
      },
    },
    summary: { type: "string", description: "Ready/desired replicas per component, one line." },
    version: { type: "string", description: "The version being run." },
  },
};

export const CRD = {
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: `${PLURAL}.${GROUP}` },
  spec: {
    group: GROUP,
    scope: "Namespaced",
    names: { kind: KIND, plural: PLURAL, singular: "docservice", shortNames: ["ds"], categories: ["all"] },
    versions: [
      {
        name: VERSION,
        served: true,
        storage: true,
        subresources: { status: {} },
        additionalPrinterColumns: [
          { name: "Ready", type: "string", jsonPath: ".status.conditions[?(@.type=='Ready')].status" },
          { name: "Version", type: "string", jsonPath: ".status.version" },
          { name: "Components", type: "string", jsonPath: ".status.summary", description: "ready/desired replicas per component" },
          { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" },
        ],
        schema: {
          openAPIV3Schema: {
            type: "object",
            description: "DocService: signing, API keys, conversion and usage telemetry behind one /v1 API.",
            required: ["spec"],
            properties: {
              apiVersion: { type: "string" },
              kind: { type: "string" },
              metadata: { type: "object" },
              spec: SPEC_SCHEMA,
              status: STATUS_SCHEMA,
            },
          },
        },
      },
    ],
  },
};
