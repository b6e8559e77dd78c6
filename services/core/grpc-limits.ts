/**
 * Largest unary gRPC message accepted or sent. Documents (25 MB by default)
 * travel inside Sign requests and responses, so gRPC's 4 MB default is too
 * small; conversion streams its documents in chunks and does not rely on it.
 */
export const GRPC_MAX_MESSAGE_BYTES = 64 * 1024 * 1024;

export const GRPC_CHANNEL_OPTIONS = {
  "grpc.max_receive_message_length": GRPC_MAX_MESSAGE_BYTES,
  "grpc.max_send_message_length": GRPC_MAX_MESSAGE_BYTES,
};
