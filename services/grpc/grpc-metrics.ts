import { ServerInterceptingCall, status as GrpcStatus, type ServerInterceptor } from "@grpc/grpc-js";
import { Counter, Histogram } from "prom-client";
import { serviceMetrics } from "../core/service-metrics.js";

const CODE_NAMES = new Map(Object.entries(GrpcStatus).filter(([, code]) => typeof code === "number").map(([name, code]) => [code as number, name]));

const handled = new Counter<"service" | "method" | "code">({
  name: "docservice_grpc_server_handled_total",
  help: "gRPC calls served, by service, method and status code.",
  labelNames: ["service", "method", "code"],
  registers: [serviceMetrics],
});

const handling = new Histogram<"service" | "method">({
  name: "docservice_grpc_server_handling_seconds",
  help: "Time from a gRPC call's start to its status, by service and method.",
  labelNames: ["service", "method"],
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
  registers: [serviceMetrics],
});

/**
 * Rate, errors and duration of every call a gRPC server answers, whatever
 * its kind (unary or streaming): the status is where every call ends,
 * including one refused before its handler ran.
 */
export const grpcMetricsInterceptor: ServerInterceptor = (method, call) => {
  const [, service = "", name = ""] = method.path.split("/");
  const started = performance.now();
  return new ServerInterceptingCall(call, {
    sendStatus(status, next) {
      handled.inc({ service, method: name, code: CODE_NAMES.get(status.code) ?? String(status.code) });
      handling.observe({ service, method: name }, (performance.now() - started) / 1000);
      next(status);
    },
  });
};
