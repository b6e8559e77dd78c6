import { makeGenericClientConstructor, type ServerDuplexStream, type ServiceError as GrpcServiceError, type UntypedServiceImplementation } from "@grpc/grpc-js";
import { ConversionServiceService, type ConvertRequest, type ConvertResponse } from "../../gen/ts-proto/docservice/v1/conversion.js";
import type { InternalTransport } from "../access/internal-transport.js";
import { ServiceError } from "../core/errors.js";
import { fromGrpcError, toGrpcStatus } from "../grpc/grpc-errors.js";
import { leastBusyClients } from "../grpc/grpc-client.js";
import { GRPC_CHANNEL_OPTIONS, RefusedMessage } from "../grpc/grpc-limits.js";
import { tooLarge, type ConversionApi, type ConvertInput, type ConvertOutput } from "./conversion-service.js";
import { PDF, targetFromProto, targetToProto } from "./convert-target.js";
import { formatByProto } from "./source-format.js";

const CHUNK_BYTES = 64 * 1024;

function* chunks(bytes: Buffer): Generator<Buffer> {
  for (let offset = 0; offset < bytes.length; offset += CHUNK_BYTES) yield bytes.subarray(offset, offset + CHUNK_BYTES);
}

/**
 * The Convert stream, server side: a header then chunks in, checked against
 * the size limit as they arrive; a header then chunks of the output out.
 */
export function conversionHandlers(api: ConversionApi, maxDocumentBytes: number): UntypedServiceImplementation {
  return {
    convert: (call: ServerDuplexStream<ConvertRequest, ConvertResponse>) => {
      let input: Omit<ConvertInput, "document"> | undefined;
      const parts: Buffer[] = [];
      let size = 0;
      let failed = false;
      const fail = (error: unknown) => {
        if (failed) return;
        failed = true;
        call.emit("error", toGrpcStatus(error));
      };
      call.on("data", (message: ConvertRequest | RefusedMessage) => {
        if (failed) return;
        if (message instanceof RefusedMessage) return fail(message.error);
        if (message.header) {
          const format = formatByProto(message.header.sourceFormat);
          if (input || !format) return fail(new ServiceError("VALIDATION_ERROR", "The first message must be the only header, with a known source format.", { details: [{ field: "header.sourceFormat", issue: "unknown or repeated" }] }));
          if (message.header.sizeBytes > maxDocumentBytes) return fail(tooLarge(maxDocumentBytes));
          try {
            input = { format, target: targetFromProto(message.header, format), filename: message.header.filename };
          } catch (error) {
            return fail(error);
          }
        } else if (message.chunk) {
          if (!input) return fail(new ServiceError("VALIDATION_ERROR", "Send the header before the document's bytes."));
          size += message.chunk.length;
          if (size > maxDocumentBytes) return fail(tooLarge(maxDocumentBytes));
          parts.push(Buffer.from(message.chunk));
        }
      });
      call.on("end", () => {
        if (failed) return;
        if (!input) return fail(new ServiceError("VALIDATION_ERROR", "No header was sent."));
        api.convert({ ...input, document: Buffer.concat(parts) }).then((output) => {
          call.write({ header: { contentType: output.contentType, filename: output.filename, pageCount: output.pageCount, sizeBytes: output.bytes.length } });
          for (const chunk of chunks(output.bytes)) call.write({ chunk });
          call.end();
        }, fail);
      });
    },
  };
}

/** ConversionService over gRPC, for a gateway or signing service running apart from it. */
export function remoteConversion(address: string, timeoutMs: number, transport: InternalTransport): ConversionApi & { close(): void } {
  const Client = makeGenericClientConstructor(ConversionServiceService, "ConversionService");
  const clients = leastBusyClients(() => new Client(address, transport.channelCredentials(), GRPC_CHANNEL_OPTIONS));
  return {
    close: clients.close,
    convert: (input) =>
      clients.call(
        (client) =>
          new Promise<ConvertOutput>((resolve, reject) => {
            const call = (client as any).convert(transport.callMetadata(), { deadline: new Date(Date.now() + timeoutMs) });
            const parts: Buffer[] = [];
            let header: ConvertResponse["header"];
            call.on("data", (message: ConvertResponse) => {
              if (message.header) header = message.header;
              else if (message.chunk) parts.push(Buffer.from(message.chunk));
            });
            call.on("error", (error: GrpcServiceError) => reject(fromGrpcError(error, "Conversion service")));
            call.on("end", () => {
              if (!header) return reject(new ServiceError("INTERNAL", "The conversion service answered without a header."));
              resolve({ bytes: Buffer.concat(parts), contentType: header.contentType, filename: header.filename, pageCount: header.pageCount });
            });
            call.write({ header: { sourceFormat: input.format.proto, filename: input.filename, sizeBytes: input.document.length, ...targetToProto(input.target ?? PDF) } });
            for (const chunk of chunks(input.document)) call.write({ chunk });
            call.end();
          }),
      ),
  };
}
