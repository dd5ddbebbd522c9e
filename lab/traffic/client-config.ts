/** How the lab's client behaves; passed to `client.ts` as one JSON argument. */
export interface ClientConfig {
  /** Source address the client binds (its loopback address, the same on every path). */
  bind: string;
  /** The service address (ClusterIP or VIP). */
  target: string;
  /** The pods behind the service: flows are opened until each pod carries `flowsPerPod`. */
  pods: string[];
  udp?: { port: number; flowsPerPod: number; intervalMs: number; timeoutMs: number };
  tcp?: { port: number; flowsPerPod: number; intervalMs: number; timeoutMs: number; payloadBytes: number };
}
