/** Commands the lab sends to its API stand-in host (one JSON line each) and what comes back. */
export type ApiCommand =
  | { id: number; op: 'put'; pod: Record<string, unknown> }
  | { id: number; op: 'ready'; namespace: string; name: string; ready: boolean }
  | { id: number; op: 'deleting'; namespace: string; name: string; graceSeconds: number }
  | { id: number; op: 'delete'; namespace: string; name: string }
  /** A Namespace with these labels (created or replaced). */
  | { id: number; op: 'namespace'; name: string; labels: Record<string, string> }
  /** A Service (created or replaced): the stand-in's controller keeps its EndpointSlices from the pods. */
  | { id: number; op: 'service'; service: Record<string, unknown> }
  /** GET a URL from the control namespace (an agent's /readyz over the node link); answers the status. */
  | { id: number; op: 'probe'; url: string };

export interface ApiReply {
  k: 'reply';
  id: number;
  ok: boolean;
  status?: number;
  error?: string;
  /** When the change was published (ms since the epoch). */
  t: number;
}

export interface ApiReadyLine {
  k: 'ready';
  /** The port every node reaches the API on (the relay on the control namespace's links). */
  port: number;
}
