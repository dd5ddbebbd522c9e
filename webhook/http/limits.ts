/**
 * Every stage of a webhook connection has a bound. The API server is the only legitimate
 * client: it sends headers and body at once and waits at most 30 s (its webhook timeout,
 * default 10 s) for the answer, so anything slower is a stalled or hostile client and is
 * closed. docs/webhook-operations.md explains each number.
 */
export interface ConnectionLimits {
  /** TLS handshake, from TCP accept to a finished handshake (tls.Server handshakeTimeout; Node's default is 120 s). */
  handshakeTimeoutMs: number;
  /** From the first byte of a request to its last header line (http.Server headersTimeout). */
  headersTimeoutMs: number;
  /** How often Node checks headersTimeout (connectionsCheckingInterval; its default 30 s would let a stalled head live 30 s past its timeout). */
  checkIntervalMs: number;
  /** Longest gap between two body chunks once the headers are in. */
  bodyIdleTimeoutMs: number;
  /** Whole body, from the headers to its last byte: Node 20's requestTimeout does not cover a body once headers are complete. */
  bodyTimeoutMs: number;
  /**
   * An idle keep-alive connection is closed after this. Longer than the API server's idle
   * connection timeout (Go's http.Transport: 90 s), so the API server closes first and never
   * writes a request into a connection this side is closing.
   */
  keepAliveTimeoutMs: number;
  /** After a refusal (413, 503) the write side is ended and input is read and dropped this long, so the client reads the answer before the reset. */
  lingerMs: number;
  /**
   * Request bodies held in memory at once, all connections together. A body that would go
   * past it is refused with 503 before it is read. 16 MiB holds two 7 MiB bodies (the
   * largest review the API server can send, see MAX_BODY_BYTES) or hundreds of real pod
   * reviews (5-50 KiB), and keeps the worst case inside half of the 256 Mi container limit
   * (docs/webhook-operations.md, bench/webhook/memory.ts).
   */
  bodyBudgetBytes: number;
}

export const DEFAULT_CONNECTION_LIMITS: ConnectionLimits = {
  handshakeTimeoutMs: 10_000,
  headersTimeoutMs: 10_000,
  checkIntervalMs: 1_000,
  bodyIdleTimeoutMs: 5_000,
  bodyTimeoutMs: 15_000,
  keepAliveTimeoutMs: 100_000,
  lingerMs: 2_000,
  bodyBudgetBytes: 16 * 1024 * 1024,
};
