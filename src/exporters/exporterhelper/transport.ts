// What an exporter plugs into the queued sender. Serialization (JSON or
// protobuf, compression, signing) lives in the exporter's transport; the
// sender only hands over the queued records.

export type SendResult =
  | {
      readonly status: 'success';
      /** partial_success.rejected_spans from the destination: counted, not retried. */
      readonly rejectedSpans?: number;
      /** partial_success.error_message: why spans were rejected, or a warning when none were. */
      readonly rejectedMessage?: string;
    }
  | { readonly status: 'retryable'; readonly retryInMs?: number; readonly error: string }
  | { readonly status: 'failure'; readonly error: string };

export interface Transport {
  /**
   * Delivers one request. `records` are encoded ExportTraceServiceRequest
   * protobufs; their concatenation is one valid request. Never throws for an
   * HTTP outcome; must stop when `signal` aborts. A throw counts as retryable.
   */
  send(records: readonly Uint8Array[], spans: number, signal: AbortSignal): Promise<SendResult>;
}
